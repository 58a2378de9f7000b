"""Draw the README's "Where it stands" table and the results index's from the committed records
(docs/results/records/), between the markers relkt put in those files; `--check` changes nothing and fails when a
table differs from what the records give.

    relkt tables            # after `relkt record` (or a setup that records its models)
    relkt tables --check    # what the docs test asks
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from relkt.cli.common import Parser, run_cli, shown
from relkt.errors import DataError
from relkt.io import atomic_write_text, read_text, refuse_bad_name

# the files that hold a records table, each with the folder its links are relative to
TABLE_FILES = ("README.md", "docs/results/README.md")


def build_parser() -> argparse.ArgumentParser:
    """`relkt tables`'s flags."""
    p = Parser(prog="relkt tables", description=__doc__.split("\n")[0])
    p.add_argument("--root", default=".", help="the checkout's root (default: the current folder)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 when a table differs from the records")
    return p


def drawn(root: Path) -> dict[Path, tuple[str, str]]:
    """Each table file under `root`: its text now and its text with the table drawn from the records."""
    from relkt.jobs.record import all_records  # deferred: numpy, when run
    from relkt.reports.records_table import records_table, with_table  # deferred: beside it

    records = all_records(root / "docs/results/records")
    for r in records:
        r["path"] = Path(r["path"]).relative_to(root).as_posix()
    out = {}
    for name in TABLE_FILES:
        path = root / name
        text = read_text(path, "page")
        table = records_table(records, link_from=Path(name).parent)
        try:
            out[path] = (text, with_table(text, table, str(path)))
        except ValueError as e:
            raise DataError(str(e)) from None
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """`relkt tables`: flags in, the tables drawn or checked, the exit code out."""
    args = build_parser().parse_args(argv)

    def body() -> int:
        stale = 0
        refuse_bad_name(args.root)  # the folder its pages are written in: a name every line can hold
        for path, (now, new) in drawn(Path(args.root)).items():
            if now == new:
                print(f"{shown(path)}: its table is the records'")
            elif args.check:
                stale += 1
                print(f"{shown(path)}: its table differs from the records (run relkt tables)", file=sys.stderr)
            else:
                atomic_write_text(path, new)
                print(f"wrote {shown(path)}'s table from the records")
        return 1 if stale else 0

    return run_cli(body)


if __name__ == "__main__":
    sys.exit(main())
