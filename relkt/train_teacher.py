"""`python -m relkt.train_teacher`: the door onto stage 1's command line, relkt.cli.train_teacher (`relkt
train-teacher` is the same). From Python: `relkt.api.train_teacher(config)`."""

import sys

if __name__ == "__main__":  # before the command's module imports TensorFlow
    from relkt.cli import quiet_tensorflow

    quiet_tensorflow.install()

from relkt.cli.train_teacher import main  # noqa: E402

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
