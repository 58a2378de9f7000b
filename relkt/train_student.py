"""`python -m relkt.train_student`: the door onto stage 2's command line, relkt.cli.train_student (`relkt
train-student` is the same). From Python: `relkt.api.train_student(config)`."""

import sys

from relkt.cli.train_student import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
