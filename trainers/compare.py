"""Print results.json files from relkt evaluate side by side (LAReQA mAP and XX->EN P@1 per language), and
whether each run's differences from the one before it are significant (relkt.recipes.comparison).

    python trainers/compare.py runs/x/zero_shot_test.json runs/x/teacher/test.json runs/x/student/test.json
    python trainers/compare.py docs/results/records/lareqa_muse/teacher_xquad-r.json \
        docs/results/records/lareqa_muse/student_xquad-r.json      # committed records: no run folder needed

Significance needs the per-question scores relkt evaluate writes beside each result
(`test.per_question.npz`): a paired bootstrap CI of the LAReQA mAP difference and McNemar's test on
XX->EN P@1 (and on translation retrieval, Q>Qen P@1, where both files have it), per question language, over the
same questions (matched by qas_id and language).
`--english-gap` adds, for each run, every language's XX->EN P@1 beside that of the same questions asked in English:
what stage 2's question term, S(q_x) -> T(q_en), could reach at most with that model as the teacher.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from relkt.cli.common import Parser, shown
from relkt.cli.types import int_in, seed_int
from relkt.errors import DataError, WriteError
from relkt.io import claim_file
from relkt.jobs.record import is_record_file
from relkt.recipes.comparison import UNITS, comparison, is_comparison_file, write_comparison


def parse_args(argv: Sequence[str] | None):
    p = Parser(prog="python trainers/compare.py", description=__doc__.split("\n")[0])
    p.add_argument(
        "results", nargs="+", help="results JSON files written by relkt evaluate --output, or committed records"
    )
    p.add_argument(
        "--against",
        choices=("previous", "first"),
        default="previous",
        help="significance of each run against the run before it, or against the first",
    )
    p.add_argument(
        "--bootstrap", type=int_in(1, 10_000), default=1000, help="bootstrap resamples for the mAP CI (default: 1000)"
    )
    p.add_argument("--seed", type=seed_int, default=0, help="seed of the bootstrap (default: 0)")
    p.add_argument(
        "--xx-en-unit",
        choices=UNITS,
        default="pool",
        help="which XX->EN to show and test: pool = the scored split's English sentences (relkt's dev metric), "
        "article/paragraph/sentence = CL-ReLKT's protocol over every English unit of the data set "
        "(article is the paper's table), scored_article/scored_paragraph = the reference code's pool, the scored "
        "questions' own documents (default: pool)",
    )
    p.add_argument(
        "--english-gap",
        action="store_true",
        help="also show, for each run, every language's XX->EN P@1 against its questions' English originals "
        "scored by the same model: what stage 2's question term alone could reach (McNemar per language)",
    )
    p.add_argument(
        "--output",
        default=None,
        help="write the tables as Markdown here (default: comparison.md in the "
        "folder that holds all the results files)",
    )
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    paths = [Path(p) for p in args.results]
    output = (
        Path(args.output)
        if args.output
        else None
        if any(map(is_record_file, paths))  # records are committed files: a comparison of them is printed, not kept
        else Path(os.path.commonpath([p.resolve().parent for p in paths])) / "comparison.md"
    )
    try:
        if output is not None:
            claim_file(output, is_comparison_file, "comparison")  # refused before the tables are computed
        text = comparison(paths, args.against, args.xx_en_unit, args.bootstrap, args.seed, args.english_gap)
        print(text, end="")
        if output is not None:
            write_comparison(output, text)
    except DataError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except WriteError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if output is not None:
        print(f"\nwrote {shown(output)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
