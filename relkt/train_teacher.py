"""Stage 1: fine-tune the teacher with a triplet loss; BM25 negatives first, then online mining.

    python -m relkt.train_teacher --config configs/quickstart.yaml [--set key=value ...] [--smoke]

Re-running the same command resumes an interrupted run from its last checkpoint.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from relkt.cli import trainer_main
from relkt.config import TeacherConfig


def train_teacher(config: TeacherConfig) -> dict[str, Any]:
    """Train with `config`; returns the run summary (relkt.stages.teacher_trainer.TeacherTrainer)."""
    # TensorFlow loads once the flags are checked
    from relkt.stages.teacher_trainer import TeacherTrainer  # deferred: heavy (TensorFlow)

    return TeacherTrainer.train(config)


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI: `--config`, `--set`, `--smoke`; a bad flag or config answers before TensorFlow loads."""
    return trainer_main(argv, "python -m relkt.train_teacher", __doc__, TeacherConfig, train_teacher, "teacher")


def __getattr__(name: str):
    """`relkt.train_teacher.TeacherTrainer`, imported when first asked for (it loads TensorFlow)."""
    if name == "TeacherTrainer":
        from relkt.stages.teacher_trainer import TeacherTrainer  # deferred: heavy (TensorFlow)

        return TeacherTrainer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
