"""Reproduce a setup of the setups file: its zero-shot score, teacher, students, test scores, comparison and check.

    relkt reproduce --list                    # every setup, the recommended first, with its status
    relkt reproduce quickstart_muse           # the recommended recipe shrunk to minutes (run from the checkout)
    relkt reproduce quickstart_muse --seed 1  # run folders get a _seed1 suffix
    relkt reproduce xquad_minilm --dry-run    # print a pipeline's commands, run none

A `pipeline` setup runs its steps (relkt.recipes.pipeline), a `crossval` setup its article folds
(relkt.recipes.crossval), a `steps` setup its own steps (relkt.recipes.step_recipes). Rerunning resumes: trainers
pick up their run folders, and a score is computed again only when its model is newer than its results file.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from relkt import api
from relkt.cli.common import Parser, run_cli
from relkt.cli.types import seed_int

SETUPS_FILE = Path("configs") / "setups.yaml"


def build_parser() -> argparse.ArgumentParser:
    """`relkt reproduce`'s flags."""
    p = Parser(prog="relkt reproduce", description=__doc__.split("\n")[0])
    p.add_argument("name", nargs="?", help="a setup of the setups file (--list prints them)")
    p.add_argument("--list", action="store_true", help="print every setup with its status and recipe")
    p.add_argument(
        "--seed", type=seed_int, default=None, help="a seed other than the configs' own (run folders _seedN)"
    )
    p.add_argument("--dry-run", action="store_true", help="print a pipeline's commands, run none")
    p.add_argument(
        "--setups", type=Path, default=SETUPS_FILE, help=f"the setups file (default: {SETUPS_FILE}, from the checkout)"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """`relkt reproduce`: flags in, one library call, the exit code out."""
    p = build_parser()
    args = p.parse_args(argv)
    if not args.list and not args.name:
        p.error("name a setup, or --list")
    if args.list:
        return run_cli(lambda: print(api.setups(args.setups)) or 0, verbose=False)
    return run_cli(lambda: api.reproduce(args.name, args.setups, args.seed, args.dry_run), verbose=False)


if __name__ == "__main__":
    sys.exit(main())
