"""How well each encoder's tokenizer reads each language of a split, without encoding anything (the tokenizer
section of the one coverage command, alone: `python -m relkt.coverage --tokenizers-only` reports the same).

    python -m relkt.audit --encoder zero-shot=minilm --encoder student=hub:runs/x/student_vocab/best \
        --data-dir ../shared/data/xquad-r --split test [--texts questions|candidates|both] [--output audit.json]

Per language: the share of WordPiece pieces that are [UNK], the share of texts with at least one [UNK],
pieces per whitespace word, and the share of texts longer than the encoder's max_length (cut when
encoded; see relkt.analysis.tokenizer_audit). Encoders without a WordPiece
tokenizer (n-gram hashing, mUSE's in-graph sentencepiece) are named and skipped.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from relkt.cli import add_pool_arguments, load_pool, named_specs, run_cli
from relkt.cli_types import writable_file
from relkt.io import atomic_write_json
from relkt.reports.tables import audit_table
from relkt.requests import AuditRequest

TEXTS = ("questions", "candidates", "both")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m relkt.audit", description=__doc__.split("\n")[0])
    p.add_argument(
        "--encoder",
        action="append",
        required=True,
        metavar="NAME=SPEC",
        help="an encoder to audit (repeat); SPEC as for relkt.evaluate",
    )
    add_pool_arguments(p)
    p.add_argument("--texts", default="questions", choices=TEXTS, help="which texts to tokenize (default: questions)")
    p.add_argument(
        "--output", type=writable_file, default=None, help="write {encoder: {lang: audit}} as JSON here (default: none)"
    )
    return p


def parse_args(argv: Sequence[str] | None = None):
    return build_parser().parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(lambda: audit(AuditRequest(**vars(parse_args(argv)))), verbose=False)


def audit(args: AuditRequest) -> int:
    table, report = audit_pool(args)
    print(f"{args.split} split, {args.texts}:")
    print(table)
    if args.output:
        atomic_write_json(args.output, report)
        print(f"wrote {args.output}")
    return 0


def audit_pool(args: AuditRequest) -> tuple[str, dict]:
    """(the table, {"split", "texts", "audits": {encoder: {lang: audit} or None}}) of every `--encoder`'s tokenizer
    on the pool's `--texts`; what `relkt.coverage --tokenizers-only` reports too."""
    specs, pool = named_specs(args.encoder), load_pool(args)  # bad input fails before TensorFlow loads
    from relkt.analysis.tokenizer_audit import audit_tokenizer, max_length_of, tokenizer_of  # deferred: TensorFlow
    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow)

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
        audits[name] = {
            lang: audit_tokenizer(tokenizer, texts, max_length=limit) for lang, texts in texts_by_lang.items()
        }
    return audit_table(audits, pool.langs), {"split": args.split, "texts": args.texts, "audits": audits}


if __name__ == "__main__":
    sys.exit(main())
