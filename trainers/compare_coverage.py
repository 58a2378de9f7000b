"""Students of several relkt coverage (or relkt teach) reports side by side on the same held-out items, each against
the first with McNemar's p: an ablation table (relkt.recipes.comparison.coverage_ablation).

    python trainers/compare_coverage.py today=runs/teach/coverage dense=runs/teach_dense/coverage
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from relkt.cli.common import Parser, run_cli
from relkt.errors import ConfigError
from relkt.recipes.comparison import coverage_ablation


def main(argv: Sequence[str] | None = None) -> int:
    p = Parser(prog="python trainers/compare_coverage.py", description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", help="NAME=FOLDER of a coverage report (per_item.npz); the first is the baseline")
    p.add_argument("--encoder", default="student", help="the encoder compared in each report (default: student)")
    args = p.parse_args(argv)

    def body() -> int:
        runs = {}
        for item in args.runs:
            name, sep, folder = item.partition("=")
            if not sep or not name or not folder or name in runs:
                raise ConfigError(f"{item!r}: expected NAME=FOLDER, each name once")
            runs[name] = folder
        print(coverage_ablation(runs, args.encoder), end="")
        return 0

    return run_cli(body)


if __name__ == "__main__":
    sys.exit(main())
