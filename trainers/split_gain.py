"""What a split adds: per language, a result's XX->EN P@1 under one split (e.g. by question) minus the same recipe's
P@1 under another (e.g. pooled article folds, given as figures), with Newcombe's 95% interval for two independent
proportions (relkt.analysis.proportion_difference: the two splits score different questions).

    python trainers/split_gain.py runs/xquad_muse_guarded_questions/crossval/fold0/student.json --unit article \
        --against el=32.2,hi=23.0,vi=45.0 --against-n 1190

`--against` takes P@1 in % (as a results chapter gives them); its hits are P@1 x n rounded, so a figure given to one
decimal is exact to a question at n = 1190.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from relkt.analysis import proportion_difference
from relkt.cli.common import Parser
from relkt.cli.types import positive_int


def parse_args(argv: Sequence[str] | None):
    p = Parser(prog="python trainers/split_gain.py", description=__doc__.split("\n")[0])
    p.add_argument("result", help="a relkt evaluate results JSON (or a pooled / combined one)")
    p.add_argument("--unit", default="article", help="its XX->EN unit: article, scored_article ... (default: article)")
    p.add_argument("--against", required=True, help="LANG=P@1 (in %%), comma-separated: the other split's figures")
    p.add_argument("--against-n", type=positive_int, required=True, help="questions a language behind those figures")
    return p.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    block = json.loads(open(args.result, encoding="utf-8").read()).get(f"xx_en_{args.unit}")
    if not block:
        print(f"error: {args.result}: no xx_en_{args.unit} results", file=sys.stderr)
        return 2
    against = {k.strip(): float(v) for k, v in (x.split("=") for x in args.against.split(",") if x.strip())}
    print(f"| lang | P@1 here (n) | P@1 against (n = {args.against_n}) | gain | 95% CI (Newcombe) |")
    print("|---|---|---|---|---|")
    for lang, p_other in against.items():
        if lang not in block:
            print(f"error: {args.result}: no {lang} in xx_en_{args.unit}", file=sys.stderr)
            return 2
        n = int(block[lang]["n_questions"])
        hits = round(block[lang]["P@1"] * n)
        other = round(p_other / 100 * args.against_n)
        d = proportion_difference(other, args.against_n, hits, n)
        print(
            f"| {lang} | {100 * hits / n:.1f} ({n}) | {p_other:.1f} | {100 * d['difference']:+.1f} | "
            f"[{100 * d['low']:+.1f}, {100 * d['high']:+.1f}] |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
