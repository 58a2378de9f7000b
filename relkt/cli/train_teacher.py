"""Stage 1: fine-tune the teacher with a triplet loss; BM25 negatives first, then online mining.

    python -m relkt.train_teacher --config configs/quickstart/teacher.yaml [--set key=value ...] [--smoke]

Re-running the same command resumes an interrupted run from its last checkpoint.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from relkt import api
from relkt.cli.common import trainer_main
from relkt.config import TeacherConfig


def main(argv: Sequence[str] | None = None) -> int:
    """The command line: `--config`, `--set`, `--smoke`, `--print-config`; a bad flag or config answers before
    TensorFlow loads, then `relkt.api.train_teacher`."""
    return trainer_main(
        argv, "python -m relkt.train_teacher", __doc__, TeacherConfig, lambda c: api.train_teacher(c).summary, "teacher"
    )


if __name__ == "__main__":
    sys.exit(main())
