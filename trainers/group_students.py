"""One student per language group of a setup (relkt.recipes.groups), all from one teacher; each scored on the run's
test split, then combined: every language as its own group's student scored it.

    python trainers/group_students.py --setup paper_muse_reference --output runs/paper_muse_reference \
        --set teacher.spec=muse:runs/paper_muse_reference/teacher/best

Writes OUTPUT/student_GROUP (run folders), OUTPUT/student_GROUP.json (each scored on the whole test split) and
OUTPUT/student.json (+ .per_question.npz), the combination, which trainers/compare.py reads like any result
(`--paper-table`: and the paper's table beside OUTPUT/{zero_shot,teacher,student}.json).
trainers/crossval.py does the same per fold. Re-running resumes: finished runs and scores are kept.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from relkt.cli.common import Parser, run_cli
from relkt.errors import ConfigError
from relkt.recipes.groups import GroupStudents
from relkt.recipes.pooled_tables import paper_table
from relkt.recipes.setups import get_setup

ROOT = Path(__file__).resolve().parents[1]
SETUPS_FILE = ROOT / "configs" / "setups.yaml"


def parse_args(argv: Sequence[str] | None):
    p = Parser(prog="python trainers/group_students.py", description=__doc__.split("\n")[0])
    p.add_argument("--setup", required=True, help="a setup of configs/setups.yaml with student_groups")
    p.add_argument("--setups-file", default=str(SETUPS_FILE), help="the setups file (default: configs/setups.yaml)")
    p.add_argument("--output", required=True, help="folder of the group students and their combined score")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override for every group")
    p.add_argument("--smoke", action="store_true", help="shrink each student (the trainer's --smoke)")
    p.add_argument(
        "--paper-table",
        action="store_true",
        help="also write OUTPUT/paper_table.md, CL-ReLKT's XQuAD P@1 beside OUTPUT/{zero_shot,teacher,student}.json",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def body() -> int:
        setups_file = Path(args.setups_file)
        setup = get_setup(args.setup, setups_file)
        if not setup.student_groups:
            raise ConfigError(f"setup {args.setup}: names no student_groups")
        config = str(setups_file.parent / setup.student)
        combined = GroupStudents(config, setup.student_groups, args.output, args.set, args.smoke, args.setup).run()
        print(f"wrote {combined}: each language scored by its group's student")
        if args.paper_table:
            print(paper_table(Path(args.output)).read_text())
        return 0

    return run_cli(body, interrupted="interrupted; rerun the same command to resume")


if __name__ == "__main__":
    sys.exit(main())
