"""Keep a scored model's results as a committed record (docs/results/records/SETUP/MODEL_POOL.json): the headline
metrics with their CIs and each question's scores packed, so a comparison still has its CI after the run folder and
the machine are gone.

    relkt record runs/lareqa_muse/scores/student_xquad-r.json --setup lareqa_muse --model student --pool xquad-r \
        --chapter docs/results/lareqa_muse.md
    python trainers/compare.py docs/results/records/lareqa_muse/teacher_xquad-r.json \
        docs/results/records/lareqa_muse/student_xquad-r.json
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from relkt.cli.common import Parser, run_cli, shown
from relkt.cli.types import non_negative_float


def build_parser() -> argparse.ArgumentParser:
    """`relkt record`'s flags."""
    p = Parser(prog="relkt record", description=__doc__.split("\n")[0])
    p.add_argument("results", help="a results JSON written by relkt evaluate --output (its .per_question.npz beside)")
    p.add_argument("--setup", required=True, help="the setup the model belongs to (a name of configs/setups.yaml)")
    p.add_argument("--model", required=True, help="the model's name in the setup (zero_shot, teacher, student ...)")
    p.add_argument("--pool", required=True, help="the pool's name (xquad-r, xquad-r-eight, mlqa-r, test ...)")
    p.add_argument("--chapter", required=True, help="the docs page that reads the record (docs/results/NAME.md)")
    p.add_argument(
        "--train-seconds", type=non_negative_float, default=None, help="the model's training time, when known"
    )
    p.add_argument(
        "--output",
        default=None,
        help="the record's file (default: docs/results/records/SETUP/MODEL_POOL.json); a new file or a record",
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """`relkt record`: flags in, one library call, the exit code out."""
    args = build_parser().parse_args(argv)

    def body() -> int:
        from relkt.jobs.record import record_results  # deferred: numpy, when run

        path, record = record_results(
            args.results,
            setup=args.setup,
            model=args.model,
            pool=args.pool,
            chapter=args.chapter,
            output=args.output,
            train_seconds=args.train_seconds,
        )
        mAP = record["metrics"]["lareqa/mAP"]
        print(f"wrote {shown(path)} (mAP {100 * mAP['value']:.2f} [{100 * mAP['low']:.2f}, {100 * mAP['high']:.2f}])")
        return 0

    return run_cli(body)


if __name__ == "__main__":
    sys.exit(main())
