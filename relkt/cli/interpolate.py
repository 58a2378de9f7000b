"""Interpolate a model's weights with those of the model it was trained from (WiSE-FT), the mix chosen on dev.

    relkt interpolate --teacher bert:runs/xquad_minilm/teacher/best \
        --student bert:runs/xquad_minilm/student/last --alphas 0,0.25,0.5,0.75,1 \
        --output runs/xquad_minilm/student_wise
    relkt interpolate --teacher muse --student muse:RUN/teacher/best --config RUN/teacher/config.yaml \
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
import sys
from collections.abc import Sequence

from relkt.cli.common import Parser, add_trust_flag, run_cli, shown
from relkt.cli.pool_flags import add_pool_arguments
from relkt.cli.types import non_negative_int, positive_int, seed_int, xx_en_units
from relkt.jobs.interpolate import interpolate
from relkt.jobs.requests import InterpolateRequest


def alpha_list(text: str) -> list[float]:
    """`0,0.5,1` -> [0.0, 0.5, 1.0]: numbers in [0, 1]."""
    try:
        alphas = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"comma-separated numbers in [0, 1], got {text!r}") from None
    if not alphas or any(not 0 <= a <= 1 for a in alphas):
        raise argparse.ArgumentTypeError(f"comma-separated numbers in [0, 1], got {text!r}")
    return alphas


def build_parser() -> argparse.ArgumentParser:
    """`relkt interpolate`'s flags."""
    p = Parser(prog="relkt interpolate", description=__doc__.split("\n")[0])
    p.add_argument(
        "--teacher",
        required=True,
        help="the model the other was trained from: a student's teacher "
        "(bert:PATH, muse:PATH), or a teacher's base (minilm, muse)",
    )
    p.add_argument("--student", required=True, help="the model trained from it (bert:PATH or muse:PATH)")
    p.add_argument(
        "--alphas",
        type=alpha_list,
        default=[0.0, 0.25, 0.5, 0.75, 1.0],
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
        help="dev metric that picks alpha, any relkt evaluate key, "
        "e.g. xx_en_article/P@1 with --xx-en-unit article (default: xx_en/P@1)",
    )
    p.add_argument(
        "--xx-en-unit",
        dest="xx_en_units",
        type=xx_en_units,
        default=[],
        metavar="UNIT[,UNIT...]",
        help="also score the dev questions against every English article, paragraph or sentence of the "
        "data set, as relkt evaluate does (default: none)",
    )
    add_pool_arguments(p, split="dev", langs=False)
    p.add_argument(
        "--max-questions",
        type=non_negative_int,
        default=0,
        help="dev questions to score (default: 0 = all; else a seeded sample)",
    )
    p.add_argument("--seed", type=seed_int, default=0, help="seed of that sample (default: 0)")
    p.add_argument("--batch-size", type=positive_int, default=128, help="texts per encoding batch (default: 128)")
    add_trust_flag(p)
    return p


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The flags, with the checks argparse cannot make (alpha chosen off the test split, the metric's unit scored)."""
    p = build_parser()
    args = p.parse_args(argv)
    if args.split in ("test", "all"):  # `all` holds the test articles too
        p.error(f"--split {args.split}: alpha is chosen on held-out data that is not the test split (dev, or train)")
    unit = args.primary_metric.partition("/")[0].removeprefix("xx_en_")
    if args.primary_metric.startswith("xx_en_") and unit not in args.xx_en_units:
        p.error(f"--primary-metric {args.primary_metric}: add --xx-en-unit {unit} to score that unit")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    """`relkt interpolate`: flags in, one library call, the exit code out."""
    args = parse_args(argv)
    trusted = vars(args).pop("trust_model")

    def body() -> int:
        result = interpolate(InterpolateRequest(**vars(args)))
        print("alpha  dev " + result.metric + "  dev lareqa/mAP")
        for alpha, value in result.scores.items():
            mark = "  <- exported" if alpha == result.alpha else ""
            mean = result.results[str(alpha)]["lareqa/mAP"]
            print(f"{alpha:<6.3g} {100 * value:>8.2f}  {100 * mean:>8.2f}{mark}")
        out = result.output
        print(
            f"wrote {shown(out)} (alpha {result.alpha:g}) and {shown(out.parent / (out.name + '.interpolation.json'))}"
        )
        return 0

    return run_cli(body, request=InterpolateRequest, trusted=trusted)


if __name__ == "__main__":
    sys.exit(main())
