"""k-fold cross-validation of teacher and student (relkt.recipes.crossval): every question is scored once, on a model
that never trained on its article (or its `data.split_unit`), and significance is computed on the pooled questions.

    python trainers/crossval.py --setup xquad_muse_best --output runs/xquad_muse_best/crossval
    python trainers/crossval.py --folds 5 --teacher-config configs/xquad_muse/teacher.yaml \
        --student-config configs/xquad_muse/student.yaml --output runs/xquad_muse/crossval

Killed, the same command resumes: finished runs and scores are kept, an unfinished run resumes at its last checkpoint.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

from relkt.cli.common import Parser, run_cli
from relkt.cli.types import language_list, positive_int
from relkt.recipes.crossval import MODELS, CrossValidation
from relkt.recipes.setups import get_setup

ROOT = Path(__file__).resolve().parents[1]
SETUPS_FILE = ROOT / "configs" / "setups.yaml"


def parse_args(argv: Sequence[str] | None):
    p = Parser(prog="python trainers/crossval.py", description=__doc__.split("\n")[0])
    p.add_argument(
        "--setup",
        default=None,
        help="a crossval setup of configs/setups.yaml: its folds and configs (relkt reproduce --list)",
    )
    p.add_argument(
        "--folds", type=positive_int, default=None, help="number of article folds (default: the setup's, else 5)"
    )
    p.add_argument(
        "--only-folds",
        default=None,
        help="comma-separated folds to run now, e.g. 0,1 (default: all); the "
        "pooled tables are written once every fold is scored",
    )
    p.add_argument(
        "--teacher-config", help="stage-1 YAML (its encoder.spec is the zero-shot base; default: the setup's)"
    )
    p.add_argument(
        "--student-config",
        help="stage-2 YAML; its teacher and student specs are pointed at each fold's teacher (default: the setup's)",
    )
    p.add_argument(
        "--zero-shot",
        default=None,
        metavar="SPEC",
        help="the encoder scored before training (default: the setup's zero_shot, else the teacher config's "
        "encoder.spec); name the base when the teacher starts from another run's export",
    )
    p.add_argument("--output", required=True, help="folder of the fold runs and the pooled results")
    p.add_argument(
        "--teachers-from",
        default=None,
        metavar="DIR",
        help="another crossval --output whose fold teachers (and their and zero-shot's scores) this one reuses as "
        "hard links instead of training them: an ablation of the student; a teacher of other settings is refused",
    )
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override for both stages (e.g. data.split_seed=1)",
    )
    p.add_argument(
        "--teacher-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override for the teacher alone (e.g. mining.online_epochs=1)",
    )
    p.add_argument(
        "--student-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override for the student(s) alone (e.g. distill.epochs=2)",
    )
    p.add_argument(
        "--setups-file",
        default=None,
        help="the setups file --setup reads (default: configs/setups.yaml; its configs are relative to its folder)",
    )
    p.add_argument("--smoke", action="store_true", help="shrink both stages (each trainer's --smoke)")
    p.add_argument(
        "--max-length",
        type=positive_int,
        default=None,
        help="tokens per text when scoring (default: relkt evaluate's: "
        "whole articles for muse, the encoder's own limit for BERT)",
    )
    p.add_argument(
        "--eval-langs", type=language_list, default=None, help="question/candidate languages scored (default: all)"
    )
    args = p.parse_args(argv)
    if not args.setup and not (args.teacher_config and args.student_config):
        p.error("name --setup, or both --teacher-config and --student-config")
    return args


def cross_validation(args) -> CrossValidation:
    """The flags as a CrossValidation: a setup's folds, configs, `set` and groups, or the configs named."""
    options = {
        "smoke": args.smoke,
        "max_length": args.max_length,
        "eval_langs": args.eval_langs,
        "teacher_sets": args.teacher_set,
        "student_sets": args.student_set,
        "teachers_from": args.teachers_from,
        "zero_shot": args.zero_shot or "",
    }
    if args.setup:
        setups_file = Path(args.setups_file) if args.setups_file else SETUPS_FILE
        setup = get_setup(args.setup, setups_file)
        cv = CrossValidation.from_setup(
            setup, setups_file.parent, args.output, sets=args.set, folds=args.folds, **options
        )
        cv.teacher_config = args.teacher_config or cv.teacher_config
        cv.student_config = args.student_config or cv.student_config
        return cv
    return CrossValidation(
        args.teacher_config, args.student_config, args.output, folds=args.folds or 5, sets=args.set, **options
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    def body() -> int:
        folds = None if args.only_folds is None else [int(x) for x in args.only_folds.split(",")]
        result = cross_validation(args).run(folds)
        if not result.complete:
            print(f"folds {args.only_folds or 'all'} done; pooled tables once all {len(result.folds)} folds are scored")
            return 0
        for table in result.tables.values():
            print(table.read_text())
        print(json.dumps({m: str(result.pooled[m]) for m in MODELS}))
        return 0

    return run_cli(body, interrupted="interrupted; rerun the same command to resume")


if __name__ == "__main__":
    sys.exit(main())
