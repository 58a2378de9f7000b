"""Stage 2: distil the frozen teacher into a student across languages (CL-ReLKT Eq. 2).

    python -m relkt.train_student --config configs/quickstart_student.yaml [--set key=value ...] [--smoke]

The student starts as a copy of the teacher (or any encoder spec, projected to the teacher's size).
Teacher targets are computed once and cached; only the student is optimized. Re-running the same
command resumes an interrupted run.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from relkt.cli import trainer_main
from relkt.config import StudentConfig


def train_student(config: StudentConfig) -> dict[str, Any]:
    """Train with `config`; returns the run summary (relkt.stages.student_trainer.StudentTrainer)."""
    # TensorFlow loads once the flags are checked
    from relkt.stages.student_trainer import StudentTrainer  # deferred: heavy (TensorFlow)

    return StudentTrainer.train(config)


def main(argv: Sequence[str] | None = None) -> int:
    """The CLI: `--config`, `--set`, `--smoke`; a bad flag or config answers before TensorFlow loads."""
    return trainer_main(argv, "python -m relkt.train_student", __doc__, StudentConfig, train_student, "student")


def __getattr__(name: str):
    """`relkt.train_student.StudentTrainer`, imported when first asked for (it loads TensorFlow)."""
    if name == "StudentTrainer":
        from relkt.stages.student_trainer import StudentTrainer  # deferred: heavy (TensorFlow)

        return StudentTrainer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


if __name__ == "__main__":
    sys.exit(main())
