"""relkt from Python, on one page: configs built in code or read from YAML, the two stages, scoring and
cross-validation, each returning a result object (paths and metrics); no command line, no argv. The CLIs
(`python -m relkt.train_teacher`, `relkt.train_student`, `relkt.evaluate`, `trainers/crossval.py`) turn their
flags into these same calls.

    from relkt import api

    teacher_cfg = api.config("teacher", "configs/quickstart_muse.yaml", set={"output_dir": "runs/t"}, smoke=True)
    teacher = api.train_teacher(teacher_cfg)                 # RunResult: .best, .spec, .best_metric, .summary
    student_cfg = api.config("student", "configs/quickstart_muse_student.yaml",
                             set={"teacher.spec": teacher.spec, "output_dir": "runs/s"}, smoke=True)
    student = api.train_student(student_cfg)
    scores = api.score(student.spec, student_cfg.data, split="test")   # Evaluation: .metric("xx_en_article/el/P@1")
    cv = api.cross_validate("configs/t.yaml", "configs/s.yaml", "runs/cv", folds=2)   # CrossvalResult

Every function validates before it builds anything: a bad key or value is one ConfigError naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relkt.config import StudentConfig, TeacherConfig, run_config
from relkt.config.config_io import as_overrides
from relkt.errors import ConfigError
from relkt.recipes.crossval import CrossValidation, CrossvalResult
from relkt.scoring import Evaluation, score

__all__ = [
    "CrossvalResult",
    "Evaluation",
    "RunResult",
    "config",
    "cross_validate",
    "score",
    "train_student",
    "train_teacher",
]

STAGES = {"teacher": TeacherConfig, "student": StudentConfig}


@dataclass
class RunResult:
    """A finished (or resumed-and-finished) run: its folder and `summary.json`. `best` is the best dev model's
    export, `spec` the encoder spec that reads it (e.g. `muse:RUN/best`) for scoring or as the next stage's teacher."""

    output_dir: Path
    summary: dict[str, Any]
    base_spec: str

    @property
    def best(self) -> Path:
        return self.output_dir / "best"

    @property
    def spec(self) -> str:
        from relkt.encoders.encoder_kind import kind_of  # deferred: TensorFlow

        return kind_of(self.base_spec).rebuild_spec(str(self.best))

    @property
    def best_metric(self) -> float:
        """The dev primary metric at the best step (`summary["best"]["value"]`)."""
        return float(self.summary["best"]["value"])


def config(
    stage: str,
    path: str | Path | None = None,
    set: Mapping[str, Any] | Sequence[str] = (),  # noqa: A002 (the trainers' --set)
    smoke: bool = False,
) -> TeacherConfig | StudentConfig:
    """A stage's config (`teacher` or `student`): its defaults, the YAML at `path` (its `base:` chain), the smoke
    switch, then `set` ({"distill.epochs": 2} or ["distill.epochs=2"]), validated, as the trainers' flags make it."""
    if stage not in STAGES:
        raise ConfigError(f"stage {stage!r}: valid: {', '.join(STAGES)}")
    overrides = list(set) if not isinstance(set, Mapping) else as_overrides(dict(set))
    return run_config(STAGES[stage], path, overrides, smoke)


def train_teacher(config: TeacherConfig) -> RunResult:
    """Stage 1 (triplet loss, BM25 then online negatives); resumes a run folder it finds unfinished."""
    from relkt.stages.teacher_trainer import TeacherTrainer  # deferred: TensorFlow

    return RunResult(Path(config.output_dir), TeacherTrainer.train(config), config.encoder.spec)


def train_student(config: StudentConfig) -> RunResult:
    """Stage 2 (the teacher frozen, Eq. 2's terms); resumes a run folder it finds unfinished."""
    from relkt.stages.student_trainer import StudentTrainer  # deferred: TensorFlow

    base = config.student.spec or config.teacher.spec
    return RunResult(Path(config.output_dir), StudentTrainer.train(config), base)


def cross_validate(
    teacher_config: str | Path,
    student_config: str | Path,
    output: str | Path,
    folds: int = 5,
    only_folds: Sequence[int] | None = None,
    **options: Any,
) -> CrossvalResult:
    """k-fold cross-validation of both stages (relkt.recipes.crossval.CrossValidation; `options`: sets,
    teacher_sets, student_sets, student_groups, smoke, max_length, eval_langs, teachers_from)."""
    cv = CrossValidation(str(teacher_config), str(student_config), str(output), folds=folds, **options)
    return cv.run(only_folds)
