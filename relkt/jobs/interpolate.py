"""Interpolate a model's weights with those of the model it was trained from (WiSE-FT), the mix chosen on dev.

    from relkt import api
    from relkt.jobs.requests import InterpolateRequest

    request = InterpolateRequest(teacher="muse", student="muse:RUN/teacher/best", config="RUN/teacher/config.yaml",
                                 xx_en_units=["article"], primary_metric="xx_en_article/P@1", output="RUN/wise")
    api.interpolate(request)   # InterpolateResult: .alpha, .scores
    # relkt interpolate --teacher muse --student muse:RUN/teacher/best --config RUN/teacher/config.yaml ...

A student starts as a copy of its teacher, and a teacher as a copy of its base (`muse`), so both models of a pair lie
in one basin of the loss and the straight line between them stays good (Wortsman et al., "Robust fine-tuning of
zero-shot models", 2022): a mix (1 - alpha) * teacher + alpha * student can keep what the starting model did well in
a language where training on little data lost ground, and keep the gains elsewhere. Each alpha is scored on the dev
split (never test; `config=RUN/config.yaml` takes the run's split, folds included), the best by `primary_metric`
is exported to OUTPUT/ (hub format, rebuilt trainable as bert:OUTPUT or muse:OUTPUT), and every alpha's dev metrics
go to OUTPUT.interpolation.json. alpha = 0 is the teacher, 1 the student. A student whose vocabulary was extended
keeps its new embedding rows as they are (the teacher has none to mix in).
"""

from __future__ import annotations

import logging
import shutil
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from relkt.data.english_answer_units import SCORING_MAX_LENGTH, english_units
from relkt.data.selection import sample_questions, scored_source
from relkt.errors import ConfigError, EncoderError, RelktError, WriteError
from relkt.io import (
    RUN_MARKER,
    atomic_write_json,
    claim_file,
    data_paths,
    json_keys,
    live_run_holding,
    refuse_bad_name,
    refuse_links,
    refuse_writing_into,
)
from relkt.jobs.pool import load_pool, pool_settings
from relkt.jobs.requests import InterpolateRequest
from relkt.jobs.results import InterpolateResult
from relkt.metrics.evaluator import run_evaluators
from relkt.metrics.lareqa_evaluator import LareqaEvaluator
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator

log = logging.getLogger("relkt.interpolate")


def interpolate_weights(
    teacher: Sequence[np.ndarray], student: Sequence[np.ndarray], alpha: float, names: Sequence[str] | None = None
) -> list[np.ndarray]:
    """(1 - alpha) * teacher + alpha * student, array by array (both in the models' weight order). A student
    array with more rows than the teacher's (an extended vocabulary) mixes the shared rows and keeps the rest."""
    if len(teacher) != len(student):
        raise EncoderError(f"teacher has {len(teacher)} weights, student {len(student)}: not the same architecture")
    mixed = []
    for i, (t, s) in enumerate(zip(teacher, student)):
        if t.shape == s.shape:
            mixed.append((1 - alpha) * t + alpha * s)
        elif t.ndim == s.ndim and t.shape[1:] == s.shape[1:] and s.shape[0] > t.shape[0]:
            out = s.copy()
            out[: t.shape[0]] = (1 - alpha) * t + alpha * s[: t.shape[0]]
            mixed.append(out)
        else:
            name = names[i] if names else f"#{i}"
            raise EncoderError(f"weight {name}: teacher shape {t.shape}, student {s.shape}: not the same architecture")
    return mixed


def claim_export_dir(path: str | Path, stage: str, reads: Sequence[str] = ()) -> Path:
    """The door every job that writes an export passes (interpolate, debias): `path` must be a new or empty folder, or
    an export of the same `stage` this job wrote before (its `relkt.json` records the stage; a folder holding files
    no export holds is a user's, whatever its `relkt.json`); never a run's own export (RUN/best, RUN/last), a model
    or folder the job reads (`reads`: encoder specs or paths, compared resolved), a link, or a folder inside a live
    run. One WriteError naming it, before any model loads. The leftovers of a killed export are removed."""
    from relkt.encoders.export import EXPORT_FILES, read_metadata  # deferred: the export module loads TensorFlow

    refuse_bad_name(path)  # a name no file system holds: one line, before anything looks at it
    path = Path(path)
    refuse_links(path)
    if path.exists() and not path.is_dir():
        raise WriteError(f"{path}: a file, not a folder; name a new folder for the {stage} export")
    if str(path).endswith("/") or not path.name:
        raise WriteError(f"{path}: name the export's folder itself")
    target = path.resolve()
    for spec in reads:
        read = Path(str(spec).partition(":")[2] or str(spec)).expanduser()
        if read.exists() and (
            target == read.resolve() or read.resolve() in target.parents or target in read.resolve().parents
        ):
            raise WriteError(
                f"{path}: the {stage} export would land on {read}, a model this job reads; write elsewhere"
            )
    if (path.parent / RUN_MARKER).is_file():
        raise WriteError(
            f"{path}: a run's own export ({path.parent} is a run folder); write the {stage} export to a new folder"
        )
    if path.is_dir() and any(path.iterdir()):
        names = sorted(p.name for p in path.iterdir())
        foreign = [n for n in names if n not in EXPORT_FILES and not n.startswith(".")]
        if not (path / "relkt.json").is_file() or foreign:
            raise WriteError(
                f"{path}: holds files that are not a relkt export ({', '.join((foreign or names)[:3])}); relkt "
                "replaces only its own exports: name a new or empty folder"
            )
        theirs = (read_metadata(path).get("training") or {}).get("stage")
        if theirs != stage:
            raise WriteError(
                f"{path}: an export of another kind ({theirs or 'a trained model'}); a {stage} export "
                "replaces only its own: name a new folder"
            )
    run = live_run_holding(path)
    if run is not None:
        raise WriteError(f"{path}: inside {run}, a run folder a trainer is writing now; write elsewhere")
    for stale in path.parent.glob(f".{path.name}.writing-*") if path.parent.is_dir() else ():
        pid = stale.name.rpartition("-")[2]
        if not pid.isdigit() or not Path(f"/proc/{pid}").exists():  # its writer is gone: a killed export's leftover
            shutil.rmtree(stale, ignore_errors=True)
    return path


def _is_interpolation(path: Path) -> bool:
    return {"teacher", "student", "alpha", "scores"} <= json_keys(path)


def choose_alpha(scores: dict[float, float]) -> float:
    """The alpha with the highest dev score; ties go to the larger alpha (more of the student)."""
    return max(scores, key=lambda a: (scores[a], a))


def check_request(args: InterpolateRequest) -> None:
    """What the mix needs, before any model loads: alphas in [0, 1], a split that is not test, the primary metric's
    unit scored."""
    if not args.alphas or any(not 0 <= a <= 1 for a in args.alphas):
        raise ConfigError(f"InterpolateRequest.alphas: numbers in [0, 1], got {args.alphas!r}")
    if args.split in ("test", "all"):  # `all` holds the test articles too
        raise ConfigError(
            f"InterpolateRequest.split {args.split}: alpha is chosen on held-out data that is not the test split "
            "(dev, or train)"
        )
    unit = args.primary_metric.partition("/")[0].removeprefix("xx_en_")
    if args.primary_metric.startswith("xx_en_") and unit not in args.xx_en_units:
        raise ConfigError(
            f"InterpolateRequest.primary_metric {args.primary_metric}: add {unit!r} to xx_en_units to score that unit"
        )
    for name in ("teacher", "student", "output"):
        if not getattr(args, name):
            raise ConfigError(f"InterpolateRequest.{name}: required")


def interpolate(args: InterpolateRequest) -> InterpolateResult:
    """Every alpha's dev metrics, the best mix exported to `output` and its scores beside it."""
    check_request(args)
    claim_export_dir(args.output, "interpolation", reads=(args.teacher, args.student))
    refuse_writing_into(args.output, data_paths(args))
    claim_file(Path(args.output).parent / f"{Path(args.output).name}.interpolation.json", _is_interpolation, "record")
    alphas = list(args.alphas)
    from relkt.encoders.encoder_kind import encoder_kinds, kind_of  # deferred: the kind table loads TensorFlow

    for flag, spec in (("teacher", args.teacher), ("student", args.student)):
        if not kind_of(spec).mixable:  # its weights are Keras variables only when the kind says so
            mixable = ", ".join(u for k in encoder_kinds().values() if k.mixable for u in k.usage)
            raise RelktError(
                f"{flag} {spec}: interpolation needs both models' weights as variables: use {mixable} "
                "(a relkt export is rebuilt from its SavedModel that way)"
            )
    from relkt.encoders import QuietEncoder, build_encoder  # deferred: heavy (TensorFlow)
    from relkt.encoders.export import export_encoder  # deferred: heavy (TensorFlow)
    from relkt.encoders.reading_whole_evaluator import ReadingWholeEvaluator  # deferred: heavy (TensorFlow)

    teacher = build_encoder(args.teacher, trainable=False)
    student = build_encoder(args.student, trainable=False)
    for enc in (teacher, student):
        enc.embed(["build"])
    own = [w.numpy() for w in student.weights]
    theirs = [w.numpy() for w in teacher.weights]
    names = [w.path for w in student.weights]
    settings = pool_settings(args)
    pool = sample_questions(load_pool(args, settings), args.max_questions, args.seed)
    evaluators = [LareqaEvaluator(pool, with_context=settings.with_context, batch_size=args.batch_size)]
    units = english_units(
        scored_source(settings, args.split)[0], args.xx_en_units, scored=[q.qas_id for q in pool.questions]
    )
    if units:  # whole articles, as relkt evaluate reads them
        unit_evaluator = XxEnUnitEvaluator(pool.questions, units, batch_size=args.batch_size)
        evaluators.append(ReadingWholeEvaluator(unit_evaluator, student, SCORING_MAX_LENGTH))
    quiet = QuietEncoder(student, args.batch_size)

    def dev_metrics() -> dict[str, float]:  # what a run's dev evaluation records (relkt.training.stage)
        return run_evaluators(evaluators, quiet)

    def mix(alpha: float) -> None:  # the student's variables hold the mix; `own` keeps its weights
        for w, value in zip(student.weights, interpolate_weights(theirs, own, alpha, names)):
            w.assign(value)

    scores, metrics = {}, {}
    for alpha in alphas:
        mix(alpha)
        flat = dev_metrics()
        if args.primary_metric not in flat:
            raise RelktError(
                f"primary_metric {args.primary_metric!r} is not a dev metric; valid: "
                f"{', '.join(sorted(k for k in flat if not k.endswith('n_questions')))}"
            )
        scores[alpha], metrics[str(alpha)] = float(flat[args.primary_metric]), flat
        log.info(
            "alpha %.3g: dev %s = %.4f, lareqa/mAP = %.4f",
            alpha,
            args.primary_metric,
            scores[alpha],
            flat["lareqa/mAP"],
        )
    best = choose_alpha(scores)
    mix(best)
    out = Path(args.output)
    export_encoder(
        student,
        out,
        training={
            "stage": "interpolation",
            "teacher": args.teacher,
            "student": args.student,
            "alpha": best,
            "dev": {args.primary_metric: scores[best]},
        },
    )
    atomic_write_json(
        out.parent / f"{out.name}.interpolation.json",
        {
            "teacher": args.teacher,
            "student": args.student,
            "primary_metric": args.primary_metric,
            "dev_questions": len(pool.questions),
            "alpha": best,
            "scores": {str(a): s for a, s in scores.items()},
            "dev": metrics,
        },
    )
    return InterpolateResult(scores, best, args.primary_metric, out, metrics)
