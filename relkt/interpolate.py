"""Interpolate a model's weights with those of the model it was trained from (WiSE-FT), the mix chosen on dev.

    python -m relkt.interpolate --teacher bert:runs/xquad_minilm/teacher/best \
        --student bert:runs/xquad_minilm/student/last --alphas 0,0.25,0.5,0.75,1 \
        --output runs/xquad_minilm/student_wise
    python -m relkt.interpolate --teacher muse --student muse:RUN/teacher/best --config RUN/teacher/config.yaml \
        --xx-en-unit article --primary-metric xx_en_article/P@1 --output RUN/teacher_wise

A student starts as a copy of its teacher, and a teacher as a copy of its base (`muse`), so both models of a pair lie
in one basin of the loss and the straight line between them stays good (Wortsman et al., "Robust fine-tuning of
zero-shot models", 2022): a mix (1 - alpha) * teacher + alpha * student can keep what the starting model did well in
a language where training on little data lost ground, and keep the gains elsewhere. Each alpha is scored on the dev
split (never test; `--config RUN/config.yaml` takes the run's split, folds included), the best by `--primary-metric`
is exported to OUTPUT/ (hub format, rebuilt trainable as bert:OUTPUT or muse:OUTPUT), and every alpha's dev metrics
go to OUTPUT.interpolation.json. alpha = 0 is the teacher, 1 the student. A student whose vocabulary was extended
keeps its new embedding rows as they are (the teacher has none to mix in).
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from relkt.cli import add_pool_arguments, load_pool, pool_settings, run_cli, xx_en_units
from relkt.cli_types import positive_int
from relkt.data.english_answer_units import SCORING_MAX_LENGTH, english_units
from relkt.data.selection import sample_questions, scored_source
from relkt.errors import EncoderError, RelktError
from relkt.io import atomic_write_json
from relkt.metrics.evaluator import run_evaluators
from relkt.metrics.lareqa_evaluator import LareqaEvaluator
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator
from relkt.requests import InterpolateRequest

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


def choose_alpha(scores: dict[float, float]) -> float:
    """The alpha with the highest dev score; ties go to the larger alpha (more of the student)."""
    return max(scores, key=lambda a: (scores[a], a))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m relkt.interpolate", description=__doc__.split("\n")[0])
    p.add_argument(
        "--teacher",
        required=True,
        help="the model the other was trained from: a student's teacher "
        "(bert:PATH, muse:PATH), or a teacher's base (minilm, muse)",
    )
    p.add_argument("--student", required=True, help="the model trained from it (bert:PATH or muse:PATH)")
    p.add_argument(
        "--alphas",
        default="0,0.25,0.5,0.75,1",
        help="student weights to try, comma-separated in [0, 1] (default: 0,0.25,0.5,0.75,1)",
    )
    p.add_argument(
        "--output",
        required=True,
        help="folder of the chosen model (hub format); every alpha's dev metrics go "
        "to OUTPUT.interpolation.json beside it",
    )
    p.add_argument(
        "--primary-metric",
        default="xx_en/P@1",
        help="dev metric that picks alpha, any relkt.evaluate key, "
        "e.g. xx_en_article/P@1 with --xx-en-unit article (default: xx_en/P@1)",
    )
    p.add_argument(
        "--xx-en-unit",
        type=xx_en_units,
        default=(),
        metavar="UNIT[,UNIT...]",
        help="also score the dev questions against every English article, paragraph or sentence of the "
        "data set, as relkt.evaluate does (default: none)",
    )
    add_pool_arguments(p, split="dev", langs=False)
    p.add_argument(
        "--max-questions", type=int, default=0, help="dev questions to score (default: 0 = all; else a seeded sample)"
    )
    p.add_argument("--seed", type=int, default=0, help="seed of that sample (default: 0)")
    p.add_argument("--batch-size", type=positive_int, default=128, help="texts per encoding batch (default: 128)")
    return p


def parse_args(argv: Sequence[str] | None = None):
    p = build_parser()
    args = p.parse_args(argv)
    if args.split in ("test", "all"):  # `all` holds the test articles too
        p.error(f"--split {args.split}: alpha is chosen on held-out data that is not the test split (dev, or train)")
    unit = args.primary_metric.partition("/")[0].removeprefix("xx_en_")
    if args.primary_metric.startswith("xx_en_") and unit not in args.xx_en_unit:
        p.error(f"--primary-metric {args.primary_metric}: add --xx-en-unit {unit} to score that unit")
    return args


def _alphas(text: str) -> list[float]:
    try:
        alphas = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise RelktError(f"--alphas: comma-separated numbers in [0, 1], got {text!r}") from None
    if not alphas or any(not 0 <= a <= 1 for a in alphas):
        raise RelktError(f"--alphas: comma-separated numbers in [0, 1], got {text!r}")
    return alphas


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(lambda: interpolate(InterpolateRequest(**vars(parse_args(argv)))))


def interpolate(args: InterpolateRequest) -> int:
    alphas = _alphas(args.alphas)
    from relkt.encoders.encoder_kind import encoder_kinds, kind_of  # deferred: the kind table loads TensorFlow

    for flag, spec in (("--teacher", args.teacher), ("--student", args.student)):
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
        scored_source(settings, args.split)[0], args.xx_en_unit, scored=[q.qas_id for q in pool.questions]
    )
    if units:  # whole articles, as relkt.evaluate reads them
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
                f"--primary-metric {args.primary_metric!r} is not a dev metric; valid: "
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
    print("alpha  dev " + args.primary_metric + "  dev lareqa/mAP")
    for alpha in alphas:
        mark = "  <- exported" if alpha == best else ""
        print(f"{alpha:<6.3g} {100 * scores[alpha]:>8.2f}  {100 * metrics[str(alpha)]['lareqa/mAP']:>8.2f}{mark}")
    print(f"wrote {out} (alpha {best:g}) and {out.parent / (out.name + '.interpolation.json')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
