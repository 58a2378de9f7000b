"""Stage 1: fine-tune the teacher with a triplet loss; BM25 negatives first, then online mining.

    python -m relkt.train_teacher --config configs/quickstart/teacher.yaml [--set key=value ...] [--smoke]

Re-running the same command resumes an interrupted run from its last checkpoint.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from relkt.cli.common import trainer_main


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m relkt.train_teacher`: flags in, one library call, the exit code out."""
    return trainer_main(argv, "teacher", __doc__)


if __name__ == "__main__":
    sys.exit(main())
