"""Which side of retrieval did a student change: its questions or its candidates? XX->EN P@1 with questions
encoded by one model and the English candidates by the other, and how concentrated each model's questions are.

    python trainers/cross_encode.py --teacher hub:runs/xquad_minilm/teacher/best \
        --student hub:runs/xquad_minilm/student/last --split dev --langs de,es,en,tr

Four pairings per question language: T/T (the teacher), S/S (the student), S questions against T candidates,
T questions against S candidates. If S/T is as bad as S/S and T/S as good as T/T, the student lost ground in
its question embeddings. `||mean q||` is the norm of a language's mean question embedding (unit vectors):
it grows when the questions crowd together, which makes them harder to tell apart.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

import numpy as np

from relkt.cli.common import Parser
from relkt.cli.types import language_list
from relkt.data.lareqa_pool import LareqaPool
from relkt.encoders import build_encoder
from relkt.errors import RelktError
from relkt.io import atomic_write_json
from relkt.metrics.lareqa_evaluator import LareqaEvaluator


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = Parser(prog="python trainers/cross_encode.py", description=__doc__.split("\n")[0])
    p.add_argument("--teacher", required=True, help="encoder spec of the teacher (hub:RUN/best, ...)")
    p.add_argument("--student", required=True, help="encoder spec of the student")
    p.add_argument(
        "--data-dir",
        default=None,
        help=(
            "the QA source: a folder of XQuAD-R {lang}.json files, an MLQA folder or a .jsonl file "
            "(default: $RELKT_DATA_DIR)"
        ),
    )
    p.add_argument("--split", default="dev", help="article-level split (default: dev)")
    p.add_argument(
        "--langs", type=language_list, default=None, help="question languages, comma-separated (default: all)"
    )
    p.add_argument("--output", default=None, help="also write the numbers as JSON here")
    return p.parse_args(argv)


def cross_encode(teacher, student, pool, batch_size: int = 128) -> dict:
    """{"xx_en": {pairing: {lang: P@1}}, "mean_norm": {model: {lang: ||mean q||}}} for `pool`
    (questions of some languages, English candidates)."""

    ev = LareqaEvaluator(pool, batch_size=batch_size)
    (qt, ct), (qs, cs) = ev.encode(teacher), ev.encode(student)
    langs = np.asarray(pool.question_langs)
    pairings = {"T/T": (qt, ct), "S/S": (qs, cs), "S/T": (qs, ct), "T/S": (qt, cs)}
    xx = {name: {lang: r["P@1"] for lang, r in ev.compute(q, c)["xx_en"].items()} for name, (q, c) in pairings.items()}
    norms = {
        name: {lang: float(np.linalg.norm(q[langs == lang].mean(0))) for lang in sorted(set(langs))}
        for name, q in (("teacher", qt), ("student", qs))
    }
    return {"xx_en": xx, "mean_norm": norms}


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)

    try:
        pool = LareqaPool.load(args.data_dir, split=args.split)
        langs = args.langs or pool.langs
        pool = pool.subset(question_langs=langs, candidate_langs=["en"])
        result = cross_encode(
            build_encoder(args.teacher, trainable=False), build_encoder(args.student, trainable=False), pool
        )
    except RelktError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    langs = sorted(result["mean_norm"]["teacher"])
    print("XX->EN P@1 (questions/candidates: T = teacher, S = student) and ||mean q|| per question language")
    print("| lang | " + " | ".join(result["xx_en"]) + " | teacher ||mean q|| | student ||mean q|| |")
    print("|---" * (3 + len(result["xx_en"])) + "|")
    for lang in langs:
        cells = [f"{100 * result['xx_en'][k][lang]:.1f}" for k in result["xx_en"]]
        cells += [f"{result['mean_norm'][m][lang]:.3f}" for m in ("teacher", "student")]
        print(f"| {lang} | " + " | ".join(cells) + " |")
    if args.output:
        atomic_write_json(
            args.output, {"teacher": args.teacher, "student": args.student, "split": args.split, **result}
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
