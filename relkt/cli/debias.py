"""Export an encoder with its language directions projected out (LSAR), learned from pair files.

    relkt debias --encoder muse:runs/paper_scale_muse/teacher_in_batch_aligned/best \
        --pairs-dir ../shared/data/parallel --rank 1 --test-dir ../shared/data/xquad-r --output runs/debiased

The export reads like any relkt export (`hub.load(OUTPUT)`, `relkt evaluate --encoder hub:OUTPUT`) and gives the
vectors `relkt evaluate --language-pairs DIR --remove-language-subspace RANK` scores the base with when both learn
from the same languages (evaluate learns from the pool's: give them as `--langs`), a muse model reading texts whole
as the scorer does. A pair holding a text of a `--test-dir` source is dropped before anything is learned;
`language_subspace.npz` beside the model keeps the means and directions.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from relkt.cli.common import Parser, add_trust_flag, run_cli, shown
from relkt.cli.types import language_list, positive_int


def build_parser() -> argparse.ArgumentParser:
    """`relkt debias`'s flags."""
    p = Parser(prog="relkt debias", description=__doc__.split("\n")[0])
    p.add_argument("--encoder", required=True, help="the model: muse, muse:DIR, bert:DIR, minilm")
    p.add_argument("--pairs-dir", required=True, help="a folder of {lang}.tsv pair files (en and X sides)")
    p.add_argument(
        "--langs", type=language_list, default=None, help="languages of the pair files to learn from (default: all)"
    )
    p.add_argument("--rank", type=positive_int, default=1, help="language directions projected out (default: 1)")
    p.add_argument(
        "--test-dir",
        action="append",
        default=[],
        metavar="DIR",
        help="a source the model will be scored on: pairs holding any of its texts are dropped (repeat for more)",
    )
    p.add_argument("--output", required=True, help="folder of the export: new, empty, or an earlier relkt export")
    add_trust_flag(p)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """`relkt debias`: flags in, one library call, the exit code out."""
    args = build_parser().parse_args(argv)

    def body() -> int:
        from relkt.jobs.language_bias import export_without_language_subspace, source_texts  # deferred: TensorFlow

        excluded = source_texts(args.test_dir)
        path, space = export_without_language_subspace(
            args.encoder, args.pairs_dir, args.output, args.rank, args.langs, excluded
        )
        print(f"{space.rank} language direction(s) from {', '.join(space.means)} projected out of {args.encoder}")
        print(f"wrote {shown(path)} (load it with hub.load, or score it as hub:{path})")
        return 0

    return run_cli(body, trusted=args.trust_model)


if __name__ == "__main__":
    sys.exit(main())
