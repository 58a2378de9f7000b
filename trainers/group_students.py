"""One student per language group of a setup (relkt.config.student_groups), all from one teacher; each scored on the
run's test split, then combined: every language as its own group's student scored it.

    python trainers/group_students.py --setup paper_muse_reference --output runs/paper_muse_reference \
        --set teacher.spec=muse:runs/paper_muse_reference/teacher/best

Writes OUTPUT/student_GROUP (run folders), OUTPUT/student_GROUP.json (each scored on the whole test split) and
OUTPUT/student.json (+ .per_question.npz), the combination, which trainers/compare.py reads like any result
(`--paper-table`: and the paper's table beside OUTPUT/{zero_shot,teacher,student}.json).
trainers/crossval.py does the same per fold. Re-running resumes: finished runs and scores are kept.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from crossval import (  # noqa: E402 (sibling)
    check_groups,
    combine_groups,
    group_commands,
    paper_table,
    rebuild_spec,
    score,
    sets,
)
from setups import SETUPS_FILE, get_setup  # noqa: E402

from relkt.config import StudentConfig, load_config  # noqa: E402
from relkt.errors import ConfigError, DataError  # noqa: E402


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python trainers/group_students.py", description=__doc__.split("\n")[0])
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
    args = p.parse_args(argv)
    setups_file = Path(args.setups_file)
    try:
        setup = get_setup(args.setup, setups_file)
    except ConfigError as e:
        p.error(str(e))
    if not setup.student_groups:
        p.error(f"--setup {args.setup}: names no student_groups")
    args.student_config = str(setups_file.parent / setup.student)
    args.student_groups, args.student_set, args.teacher_config, args.teacher_set = setup.student_groups, [], None, []
    args.max_length = args.eval_langs = None  # relkt.evaluate's defaults, as crossval's score() reads them
    return args


def main(argv: Sequence[str] | None = None) -> int:
    from relkt import train_student  # deferred: TensorFlow, only when students train

    args = parse_args(argv)
    out = Path(args.output)
    student = ["--config", args.student_config, *sets(args.set), *(["--smoke"] if args.smoke else [])]
    try:
        kind = load_config(StudentConfig, args.student_config, args.set).teacher.spec.split(":", 1)[0]
        check_groups(args)  # every group's languages and settings, before the first trains
        groups = group_commands(args, student, out)
        for argv_group in groups.values():
            if rc := train_student.main(argv_group):
                return rc
        for name in groups:
            run = out / f"student_{name}"
            score(args, rebuild_spec(kind, run / "best"), run / "config.yaml", out / f"student_{name}.json")
        combine_groups(args.student_groups, {n: out / f"student_{n}.json" for n in groups}, out / "student.json")
    except (ConfigError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {out / 'student.json'}: each language scored by its group's student")
    if args.paper_table:
        print(paper_table(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
