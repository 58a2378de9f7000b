"""Teach an encoder new languages from parallel text, and show what changed, in one command.

    relkt teach --langs bn,te,ta,am,km,he,fi,sw --controls ja,fr,ar,ru --pairs-dir ../shared/data/parallel \
        --questions-dir ../shared/data/xor-questions --qa-dir ../shared/data/squad-train \
        --test-dir ../shared/data/xquad-r --output runs/teach

Coverage before (the base, zero-shot), the recommended student (relkt/recipes/teach_student.yaml, one file, with what
the flags name set over it, then `--set`), coverage after, and forgetting: the controls (languages the base reads,
trained beside as replay, the rows they read kept out of the taught set), the watched languages (`--watch`: scored,
never trained) and the QA test source whole. One report, OUTPUT/report.md, with its figure
(OUTPUT/coverage/coverage.png) and OUTPUT/teach.json. Every input is read and checked before anything trains;
rerunning the same command resumes the student and redoes the report.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence

from relkt.cli.common import Parser, add_trust_flag, run_cli, shown
from relkt.cli.types import comma_list, language_list, other_domain, positive_int
from relkt.config import config_yaml
from relkt.jobs.requests import TeachRequest
from relkt.jobs.teach import RECIPE, student_config, teach


def build_parser(prog: str = "relkt teach") -> argparse.ArgumentParser:
    """`relkt teach`'s flags."""
    p = Parser(prog=prog, description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--langs", type=language_list, required=True, help="comma-separated languages to teach, e.g. bn,te")
    p.add_argument("--pairs-dir", required=True, help="folder of {lang}.tsv pair files (source, en, xx)")
    p.add_argument("--output", required=True, help="run folder: student/, coverage/, report.md, teach.json")
    p.add_argument(
        "--questions-dir",
        default=None,
        help="folder of question files (id, split, xx, en): `split = train` rows train, the others are scored "
        "(default: none)",
    )
    p.add_argument(
        "--controls",
        type=comma_list,
        default=[],
        help="comma-separated languages the base reads, trained beside as replay (their teacher targets hold the "
        "network, which the recipe trains gently) and scored: forgetting (default: none)",
    )
    p.add_argument(
        "--watch",
        type=comma_list,
        default=[],
        help="comma-separated languages the base reads, scored before and after but never trained on: forgetting "
        "where the student does not replay them (default: none)",
    )
    p.add_argument(
        "--other-domain",
        type=other_domain,
        default=None,
        help="bitext of another domain, the report's first table: a source of each taught language's pair file held "
        "out whole, never trained on; auto: its smallest, where the file has two or more; none; or LANG:SOURCE,... "
        "(default: auto)",
    )
    p.add_argument(
        "--qa-dir",
        default=None,
        help="English QA source whose documents the d and dq terms read, e.g. ../shared/data/squad-train "
        "(default: data.data_dir's default, $RELKT_DATA_DIR)",
    )
    p.add_argument("--test-dir", default=None, help="a QA test source scored whole before and after (default: none)")
    p.add_argument(
        "--qa-test-dir",
        default=None,
        help="a QA source in the taught languages (any format relkt reads, e.g. ../shared/data/mlqa/dev), scored "
        "whole before and after: answer retrieval in each language, in it and against English (default: none)",
    )
    p.add_argument("--teacher", default=None, help="the base encoder spec (default: the recipe's, muse)")
    p.add_argument("--config", default=None, help=f"the recipe (default: {RECIPE.name} in relkt/recipes)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a recipe key (repeat)")
    p.add_argument("--smoke", action="store_true", help="shrink the run for a quick check (default: off)")
    p.add_argument("--batch-size", type=positive_int, default=128, help="encoding batch of the report (default: 128)")
    p.add_argument(
        "--print-config", action="store_true", help="print the student's resolved config and exit (default: off)"
    )
    add_trust_flag(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """`relkt teach`: flags in, one library call, the exit code out."""
    args = vars(build_parser().parse_args(argv))
    show, trusted = args.pop("print_config"), args.pop("trust_model")
    command = "relkt teach " + shlex.join(sys.argv[1:] if argv is None else list(argv))

    def body() -> int:
        request = TeachRequest(**args)
        if show:
            print(config_yaml(student_config(request)), end="")
            return 0
        result = teach(request, command)
        print(f"wrote {shown(result.report)} and {shown(result.output / 'teach.json')}")
        return 0

    return run_cli(
        body,
        interrupted="interrupted; rerun the same command to resume the student",
        request=TeachRequest,
        trusted=trusted,
    )


if __name__ == "__main__":
    sys.exit(main())
