"""`relkt COMMAND ...`, the one console command (pyproject's [project.scripts]; `python -m relkt.cli COMMAND ...` is
the same): each command is the module of `relkt.cli` of that name, run with the rest of the line (`relkt evaluate
--encoder muse` is `python -m relkt.cli.evaluate --encoder muse`). `relkt --help` lists them."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from relkt.cli import quiet_tensorflow

# command -> (the module whose `main(argv)` runs it, what it does)
COMMANDS = {
    "train-teacher": ("relkt.cli.train_teacher", "stage 1: the teacher (triplet loss, BM25 then online negatives)"),
    "train-student": ("relkt.cli.train_student", "stage 2: distil the frozen teacher into a student across languages"),
    "evaluate": ("relkt.cli.evaluate", "score an encoder: LAReQA, XX->EN by answer unit, translation retrieval"),
    "coverage": ("relkt.cli.coverage", "languages from pair files, LAReQA's language-bias analyses, or both"),
    "teach": ("relkt.cli.teach", "teach languages from pair files: coverage before, the student, coverage after"),
    "interpolate": ("relkt.cli.interpolate", "WiSE-FT mixes of a teacher and its student, alpha chosen on dev"),
    "reproduce": ("relkt.cli.reproduce", "a setup of configs/setups.yaml end to end (--list: every setup, its status)"),
    "debias": ("relkt.cli.debias", "an export with the language directions learned from pair files projected out"),
    "record": ("relkt.cli.record", "keep a scored model as a committed record (docs/results/records/)"),
    "tables": ("relkt.cli.tables", "draw the README's and the results index's tables from the committed records"),
}


def usage() -> str:
    """The `relkt` command's usage: its commands, one line each."""
    width = max(map(len, COMMANDS))
    lines = [f"  {name:<{width}}  {about}" for name, (_, about) in COMMANDS.items()]
    return "usage: relkt COMMAND [--help | ARGS...]\n\ncommands:\n" + "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """`relkt COMMAND ARGS...`: run that command's `main` with ARGS; its exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] not in COMMANDS:
        print(f"relkt: unknown command {argv[0]!r}\n{usage()}", file=sys.stderr)
        return 2
    quiet_tensorflow.install()  # before the command's module imports TensorFlow
    return importlib.import_module(COMMANDS[argv[0]][0]).main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
