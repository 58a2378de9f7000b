"""`python -m relkt.language_coverage ...`: the older name of `python -m relkt.coverage` (the one coverage command;
its pair-file half is relkt.pair_coverage). Same flags, same report."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from relkt.cli import run_cli
from relkt.coverage import build_parser, run


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(lambda: run(build_parser("python -m relkt.language_coverage").parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
