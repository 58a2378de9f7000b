"""Reproduce a setup of the setups file: its zero-shot score, teacher, students, test scores, comparison and check.

    relkt reproduce --list                    # every setup, the recommended first, with its status
    relkt reproduce quickstart_muse           # the recommended recipe shrunk to minutes (run from the checkout)
    relkt reproduce quickstart_muse --seed 1  # run folders get a _seed1 suffix
    relkt reproduce xquad_muse_best --dry-run # print a pipeline's commands, run none

A `pipeline` setup runs its steps (relkt.recipes.pipeline), a `crossval` setup its article folds
(relkt.recipes.crossval), a `script` setup the script it names. Rerunning resumes: trainers pick up their run
folders, and a score is computed again only when its model is newer than its results file.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from relkt.cli.common import run_cli, shown
from relkt.io import atomic_write_text
from relkt.recipes.expected import check_files, verdict
from relkt.recipes.pipeline import output_dir_of, pipeline_steps, run_steps
from relkt.recipes.setups import get_setup, listing, load_setups

SETUPS_FILE = Path("configs") / "setups.yaml"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="relkt reproduce", description=__doc__.split("\n")[0])
    p.add_argument("name", nargs="?", help="a setup of the setups file (--list prints them)")
    p.add_argument("--list", action="store_true", help="print every setup with its status and recipe")
    p.add_argument("--seed", type=int, default=None, help="a seed other than the configs' own (run folders _seedN)")
    p.add_argument("--dry-run", action="store_true", help="print a pipeline's commands, run none")
    p.add_argument(
        "--setups", type=Path, default=SETUPS_FILE, help=f"the setups file (default: {SETUPS_FILE}, from the checkout)"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    if not args.list and not args.name:
        p.error("name a setup, or --list")
    return run_cli(lambda: run(args), verbose=False)


def run(args: argparse.Namespace) -> int:
    root = args.setups.resolve().parent.parent  # the checkout: configs/ and trainers/ below it
    if args.list:
        print(listing(load_setups(args.setups, root)))
        return 0
    setup = get_setup(args.name, args.setups, root)
    if setup.recipe == "crossval":
        return crossval(setup, args)
    if setup.recipe == "script":
        if args.dry_run:
            print(f"bash {setup.script} {args.seed if args.seed is not None else ''}".rstrip())
            return 0
        return subprocess.run(["bash", setup.script, *([str(args.seed)] if args.seed is not None else [])]).returncode
    return pipeline(setup, args)


def pipeline(setup, args: argparse.Namespace) -> int:
    from relkt.recipes.comparison import comparison  # deferred: --list and --help answer without numpy's tables

    steps = pipeline_steps(setup, args.setups.parent, args.seed)
    results = run_steps(steps, dry_run=args.dry_run)
    root = Path(results[0]).parent
    if args.dry_run:
        print(f"(then the comparison of {len(results)} results files and, with expected ranges, their check)")
        return 0
    out = atomic_write_text(root / "comparison.md", comparison(results))
    print(f"wrote {shown(out)}")
    if setup.expected:
        student = next(r for r in results if "/test.json" in r and r != results[1])
        lines = check_files(setup.expected, results[0], results[1], student)
        print(verdict(lines))
        if not all(ok for ok, _ in lines):
            print("WARNING: this run falls outside the README's expected ranges (above)")
    print("\nOpen these:")
    print(f"  {root}/comparison.md    the test scores side by side, with per-language significance")
    for step in steps:
        if step.argv[0] in ("relkt.train_teacher", "relkt.train_student"):
            run_dir = step_output(step)
            print(f"  {run_dir}/curves.png    dev curve, loss terms and learning rate; model in {run_dir}/best")
    return 0


def step_output(step) -> str:
    """The run folder of a trainer step: its `--set output_dir=` or its config's."""
    for i, arg in enumerate(step.argv):
        if arg == "--set" and step.argv[i + 1].startswith("output_dir="):
            return step.argv[i + 1].partition("=")[2]
    return output_dir_of(Path(step.argv[step.argv.index("--config") + 1]))


def crossval(setup, args: argparse.Namespace) -> int:
    from relkt.recipes.crossval import CrossValidation  # deferred: the folds' trainers load TensorFlow

    output = f"runs/{setup.name}{f'_seed{args.seed}' if args.seed is not None else ''}/crossval"
    sets = [f"seed={args.seed}", f"data.split_seed={args.seed}"] if args.seed is not None else []
    if args.dry_run:
        print(f"k-fold cross-validation of {setup.name} ({setup.folds} folds) into {output}")
        return 0
    result = CrossValidation.from_setup(setup, args.setups.parent, output, sets=sets).run(None)
    for name, path in result.tables.items():
        print(f"wrote {shown(path)} ({name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
