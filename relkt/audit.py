"""How well each encoder's tokenizer reads each language of a split, without encoding anything.

    python -m relkt.audit --encoder zero-shot=minilm --encoder student=hub:runs/x/student_vocab/best \
        --data-dir ../shared/data/xquad-r --split test [--texts questions|candidates|both] [--output audit.json]

Per language: the share of WordPiece pieces that are [UNK], the share of texts with at least one [UNK],
pieces per whitespace word, and the share of texts longer than the encoder's max_length (cut when
encoded; see relkt.analysis.tokenizer_audit). Encoders without a WordPiece
tokenizer (n-gram hashing, mUSE's in-graph sentencepiece) are named and skipped.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Sequence

from relkt.cli_types import split_fractions
from relkt.data.sources import ENV_VAR
from relkt.data.splits import SPLITS
from relkt.errors import RelktError

TEXTS = ("questions", "candidates", "both")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m relkt.audit", description=__doc__.split("\n")[0])
    p.add_argument("--encoder", action="append", required=True, metavar="NAME=SPEC",
                   help="an encoder to audit (repeat); SPEC as for relkt.evaluate")
    p.add_argument("--data-dir", default=None, help=f"folder of XQuAD-R {{lang}}.json files (default: ${ENV_VAR}, cache, download)")
    p.add_argument("--split", default="test", choices=SPLITS)
    p.add_argument("--split-fractions", type=split_fractions, default="0.7,0.1,0.2")
    p.add_argument("--split-seed", type=int, default=0)
    p.add_argument("--langs", default=None, help="comma-separated languages (default: all)")
    p.add_argument("--texts", default="questions", choices=TEXTS, help="which texts to tokenize (default: questions)")
    p.add_argument("--output", default=None, help="write {encoder: {lang: audit}} as JSON here")
    return p.parse_args(argv)


def audit_table(audits: dict[str, dict | None], langs: Sequence[str]) -> str:
    """Markdown: one row per language, [UNK] rate / texts with [UNK] / pieces per word / texts cut at max_length
    for each encoder ("-" where it records no max_length)."""
    names = [n for n, a in audits.items() if a is not None]
    head = "| lang | " + " | ".join(f"{n}: [UNK] % / texts with [UNK] % / pieces per word / texts cut %" for n in names) + " |"
    lines = [head, "|---" * (1 + len(names)) + "|"]
    for lang in langs:
        cells = [f"{100 * a[lang]['unk_rate']:.1f} / {100 * a[lang]['texts_with_unk']:.1f} / {a[lang]['pieces_per_word']:.2f} / "
                 + (f"{100 * a[lang]['texts_cut']:.1f}" if "texts_cut" in a[lang] else "-")
                 for a in (audits[n] for n in names)]
        lines.append(f"| {lang} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        from relkt.analysis.tokenizer_audit import audit_tokenizer, max_length_of, tokenizer_of
        from relkt.data.lareqa_pool import LareqaPool
        from relkt.encoders import build_encoder
        from relkt.encoders.registry import named_specs
        from relkt.io import atomic_write_json

        specs = named_specs(args.encoder)
        fractions = args.split_fractions
        langs = [x.strip() for x in args.langs.split(",")] if args.langs else None
        pool = LareqaPool.load(args.data_dir, langs=langs, split=args.split, fractions=fractions, seed=args.split_seed)
        texts_by_lang = {lang: [] for lang in pool.langs}
        if args.texts in ("questions", "both"):
            for q in pool.questions:
                texts_by_lang[q.lang].append(q.text)
        if args.texts in ("candidates", "both"):
            for c, text in zip(pool.candidates, pool.candidate_texts(False)):
                texts_by_lang[c.lang].append(text)
        audits: dict[str, dict | None] = {}
        for name, spec in specs.items():
            encoder = build_encoder(spec, trainable=False)
            tokenizer = tokenizer_of(encoder)
            if tokenizer is None:
                print(f"{name} ({spec}): no WordPiece tokenizer to audit; skipped", file=sys.stderr)
                audits[name] = None
                continue
            limit = max_length_of(encoder)
            audits[name] = {lang: audit_tokenizer(tokenizer, texts, max_length=limit) for lang, texts in texts_by_lang.items()}
    except RelktError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{args.split} split, {args.texts}:")
    print(audit_table(audits, pool.langs))
    if args.output:
        atomic_write_json(args.output, {"split": args.split, "texts": args.texts, "audits": audits})
        print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
