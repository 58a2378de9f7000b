"""Stage 2: distil the frozen teacher into a student across languages (CL-ReLKT Eq. 2).

    python -m relkt.train_student --config configs/quickstart/student.yaml [--set key=value ...] [--smoke]

The student starts as a copy of the teacher (or any encoder spec, projected to the teacher's size).
Teacher targets are computed once and cached; only the student is optimized. Re-running the same
command resumes an interrupted run.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from relkt.cli.common import trainer_main


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m relkt.train_student`: flags in, one library call, the exit code out."""
    return trainer_main(argv, "student", __doc__)


if __name__ == "__main__":
    sys.exit(main())
