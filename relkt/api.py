"""relkt from Python, on one page: every job a function that takes a config or a typed request and returns a result
object with its paths and metrics; no command line, no argv. The command lines (`relkt.cli`, the `relkt` console
command) parse their flags into these same calls.

| job | call | returns |
|---|---|---|
| a stage's config | `config(stage, path, set, smoke)` | `TeacherConfig` / `StudentConfig` |
| stage 1, the teacher | `train_teacher(config, **given)` | `RunResult` |
| stage 2, the student | `train_student(config, **given)` | `RunResult` |
| scoring | `score(encoder, data, split, ...)` (`rank_adjust="auto"`: also ranked language-aware) | `Evaluation` |
| retrieval in a pool of your own | `retrieve(model, questions, candidates, langs, top_k, margin)` | `RetrievalResult` |
| cross-validation | `cross_validate(teacher_yaml, student_yaml, output, folds)` | `CrossvalResult` |
| coverage of languages, language bias | `coverage(CoverageRequest(...))` | `CoverageResult` |
| tokenizer audit | `audit(AuditRequest(...))` | `AuditResult` |
| teaching languages | `teach(TeachRequest(...))` | `TeachResult` |
| WiSE-FT interpolation | `interpolate(InterpolateRequest(...))` | `InterpolateResult` |
| results side by side | `compare(paths, against, unit)` (results files or records) | the comparison (`str`) |
| a setup end to end | `reproduce(name, setups, seed, dry_run)` | the exit code of what ran |
| the setups | `setups(path)` | the listing (`str`), recommended first |

    from relkt import api

    teacher_cfg = api.config("teacher", "configs/quickstart_muse/teacher.yaml", set={"output_dir": "runs/t"},
                             smoke=True)
    teacher = api.train_teacher(teacher_cfg)                 # RunResult: .best, .spec, .best_metric, .summary
    student_cfg = api.config("student", "configs/quickstart_muse/student.yaml",
                             set={"teacher.spec": teacher.spec, "output_dir": "runs/s"}, smoke=True)
    student = api.train_student(student_cfg)
    scores = api.score(student.spec, student_cfg.data, split="test")   # Evaluation: .metric("xx_en_article/el/P@1")

`train_teacher` and `train_student` take parts built already as keywords (`given`): the teacher's `pool`, `encoder`
and `evaluators`; the student's `inputs` (`relkt.data.student_inputs.StudentInputs`), `teacher` and `evaluators`.
Every function validates before it builds anything: a bad key, value or argument type is one ConfigError naming it.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from relkt.config import PoolSection, StudentConfig, TeacherConfig, run_config
from relkt.config.config_io import as_overrides, checked
from relkt.errors import ConfigError
from relkt.io import trusting_models
from relkt.jobs.audit import audit_pool
from relkt.jobs.coverage import run as _coverage
from relkt.jobs.interpolate import interpolate as _interpolate
from relkt.jobs.requests import AuditRequest, CoverageRequest, InterpolateRequest, PoolRequest, TeachRequest
from relkt.jobs.results import AuditResult, CoverageResult, InterpolateResult, RunResult, TeachResult
from relkt.jobs.retrieve import RetrievalResult
from relkt.jobs.retrieve import retrieve as _retrieve
from relkt.jobs.scoring import Evaluation, TextEncoder
from relkt.jobs.scoring import score as _score
from relkt.jobs.teach import teach as _teach
from relkt.recipes.comparison import comparison
from relkt.recipes.crossval import CrossValidation, CrossvalResult
from relkt.recipes.reproduce import reproduce as _reproduce
from relkt.recipes.reproduce import setups_listing

__all__ = [
    "AuditRequest",
    "AuditResult",
    "CoverageRequest",
    "CoverageResult",
    "CrossvalResult",
    "Evaluation",
    "InterpolateRequest",
    "InterpolateResult",
    "PoolRequest",
    "RetrievalResult",
    "RunResult",
    "TeachRequest",
    "TeachResult",
    "audit",
    "compare",
    "config",
    "coverage",
    "cross_validate",
    "reproduce",
    "retrieve",
    "setups",
    "interpolate",
    "score",
    "teach",
    "train_student",
    "train_teacher",
]

STAGES = {"teacher": TeacherConfig, "student": StudentConfig}


def _expect(value: Any, kind: type | tuple[type, ...], name: str, what: str) -> None:
    """One ConfigError naming the argument when `value` is not of `kind` (a bool is no number here)."""
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        raise ConfigError(f"{name}: expected {what}, got {type(value).__name__} {value!r}")


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
    _expect(path, (str, Path, type(None)), "path", "a YAML file's path or None")
    _expect(smoke, bool, "smoke", "True or False")
    if isinstance(set, str) or not isinstance(set, (Mapping, Sequence)):
        raise ConfigError(f"set: expected a mapping {{key: value}} or a list of 'key=value' strings, got {set!r}")
    if not isinstance(set, Mapping) and not all(isinstance(x, str) for x in set):
        raise ConfigError(f"set: a list of 'key=value' strings, got {list(set)!r}")
    overrides = list(set) if not isinstance(set, Mapping) else as_overrides(dict(set))
    return run_config(STAGES[stage], path, overrides, smoke)


def train_teacher(config: TeacherConfig, trust_model: bool = False, **given: Any) -> RunResult:
    """Stage 1 (triplets or the in-batch softmax, BM25 then online negatives); resumes a run folder it finds
    unfinished. `trust_model`: load a base model folder whose graph touches files (a model folder is code). `given`:
    `pool`, `encoder`, `evaluators` built already (relkt.stages.teacher_trainer.TeacherTrainer)."""
    _expect(config, TeacherConfig, "config", "a TeacherConfig (api.config('teacher', ...))")
    _expect(trust_model, bool, "trust_model", "True or False")
    from relkt.stages.teacher_trainer import TeacherTrainer  # deferred: heavy (TensorFlow)

    config = checked(config)
    with trusting_models(trust_model):
        return RunResult(Path(config.output_dir), TeacherTrainer.train(config, **given), config.encoder.spec)


def train_student(config: StudentConfig, trust_model: bool = False, **given: Any) -> RunResult:
    """Stage 2 (the teacher frozen, Eq. 2's terms); resumes a run folder it finds unfinished. `trust_model`: load
    model folders whose graphs touch files. `given`: `inputs`, `teacher`, `evaluators` built already
    (relkt.stages.student_trainer.StudentTrainer)."""
    _expect(config, StudentConfig, "config", "a StudentConfig (api.config('student', ...))")
    _expect(trust_model, bool, "trust_model", "True or False")
    from relkt.stages.student_trainer import StudentTrainer  # deferred: heavy (TensorFlow)

    config = checked(config)
    base = config.student.spec or config.teacher.spec
    with trusting_models(trust_model):
        return RunResult(Path(config.output_dir), StudentTrainer.train(config, **given), base)


def score(
    encoder: str | TextEncoder,
    data: PoolSection | None = None,
    split: str = "test",
    *,
    trust_model: bool = False,
    **options: Any,
) -> Evaluation:
    """Score an encoder on one split of a QA source (relkt.jobs.scoring.score: `options` are its langs,
    xx_en_units, max_length, corpus_dir, batch_size, progress, output, rank_adjust: the pool also ranked
    language-aware, chosen on dev, in the result's `adjusted`). `trust_model`: load a model folder whose
    graph touches files (a model folder is code)."""
    _expect(trust_model, bool, "trust_model", "True or False")
    valid = [name for name in inspect.signature(_score).parameters if name not in ("encoder", "data", "split")]
    unknown = sorted(set(options) - set(valid))
    if unknown:
        raise ConfigError(f"{unknown[0]}: not an option of score; valid: {', '.join(valid)}")
    with trusting_models(trust_model):
        return _score(encoder, data, split, **options)


def retrieve(
    model: str | TextEncoder,
    questions: Sequence[str],
    candidates: Sequence[str],
    *,
    langs: Sequence[str] | None = None,
    top_k: int = 10,
    margin: str = "none",
    trust_model: bool = False,
) -> RetrievalResult:
    """Each question's `top_k` candidates of a pool of your own, best first, with their scores; `margin` ranks
    within each candidate language by neighbourhood (`center`, `csls:K`, `margin:K`; `langs` gives each candidate's
    language) (relkt.jobs.retrieve)."""
    _expect(trust_model, bool, "trust_model", "True or False")
    with trusting_models(trust_model):
        return _retrieve(model, questions, candidates, langs=langs, top_k=top_k, margin=margin)


TRAINERS = {"teacher": train_teacher, "student": train_student}  # each stage's call, by the name `config` takes


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
    for name, value in (("teacher_config", teacher_config), ("student_config", student_config), ("output", output)):
        _expect(value, (str, Path), name, "a path")
    _expect(folds, int, "folds", "a whole number >= 2")
    cv = CrossValidation(str(teacher_config), str(student_config), str(output), folds=folds, **options)
    return cv.run(only_folds)


def coverage(request: CoverageRequest, trust_model: bool = False) -> CoverageResult:
    """Languages from pair files, LAReQA's bias analyses on a pool, or both (relkt.jobs.coverage). `trust_model`:
    load model folders whose graphs touch files."""
    _expect(request, CoverageRequest, "request", "a CoverageRequest")
    _expect(trust_model, bool, "trust_model", "True or False")
    with trusting_models(trust_model):
        return _coverage(request)


def audit(request: AuditRequest) -> AuditResult:
    """Each encoder's tokenizer on a pool's texts, nothing encoded: its table and report."""
    _expect(request, AuditRequest, "request", "an AuditRequest")
    return AuditResult(*audit_pool(request))


def teach(request: TeachRequest, command: str = "", trust_model: bool = False) -> TeachResult:
    """Coverage before, the recommended student, coverage after, one report (relkt.jobs.teach). `trust_model`: load
    model folders whose graphs touch files."""
    _expect(request, TeachRequest, "request", "a TeachRequest")
    _expect(trust_model, bool, "trust_model", "True or False")
    with trusting_models(trust_model):
        return _teach(request, command)


def interpolate(request: InterpolateRequest, trust_model: bool = False) -> InterpolateResult:
    """WiSE-FT mixes of a teacher and its student, alpha chosen on dev (relkt.jobs.interpolate). `trust_model`: load
    model folders whose graphs touch files."""
    _expect(request, InterpolateRequest, "request", "an InterpolateRequest")
    _expect(trust_model, bool, "trust_model", "True or False")
    with trusting_models(trust_model):
        return _interpolate(request)


def compare(
    paths: Sequence[str | Path], against: str = "previous", unit: str = "pool", bootstrap: int = 1000, seed: int = 0
) -> str:
    """Scores written by `score(..., output=...)`, or committed records (docs/results/records/), side by side, each
    against the one before it (or the first), with paired bootstrap and McNemar per language
    (relkt.recipes.comparison)."""
    if isinstance(paths, (str, Path)) or not all(isinstance(p, (str, Path)) for p in paths) or not len(paths):
        raise ConfigError(f"paths: expected a list of one or more results files or records, got {paths!r}")
    return comparison(paths, against=against, unit=unit, bootstrap=bootstrap, seed=seed)


def reproduce(
    name: str, setups: str | Path = "configs/setups.yaml", seed: int | None = None, dry_run: bool = False
) -> int:
    """Run the setup `name` of the setups file end to end (relkt.recipes.reproduce), from the checkout's root."""
    _expect(name, str, "name", "a setup's name")
    _expect(seed, (int, type(None)), "seed", "a whole number or None")
    _check_setups_path(setups)
    return _reproduce(name, Path(setups), seed, dry_run)


def setups(path: str | Path = "configs/setups.yaml") -> str:
    """Every setup of the setups file with its status, recipe and configs, the recommended first."""
    _check_setups_path(path)
    return setups_listing(Path(path))


def _check_setups_path(path: object) -> None:
    if not isinstance(path, (str, Path)) or "\x00" in str(path):
        raise ConfigError(f"setups: expected the setups file's path, got {type(path).__name__} {path!r:.100}")
