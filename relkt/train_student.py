"""`python -m relkt.train_student`: the door onto stage 2's command line, relkt.cli.train_student (`relkt
train-student` is the same). From Python: `relkt.api.train_student(config)`."""

import sys

if __name__ == "__main__":  # before the command's module imports TensorFlow
    from relkt.cli import quiet_tensorflow

    quiet_tensorflow.install()

from relkt.cli.train_student import main  # noqa: E402

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
