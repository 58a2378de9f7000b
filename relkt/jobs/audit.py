"""How well each encoder's tokenizer reads each language of a split, without encoding anything: the tokenizer
section of the coverage job (`relkt.api.coverage(CoverageRequest(..., tokenizers_only=True))`; `relkt coverage ...
--tokenizers-only`), whose table and report `audit_pool` makes.

Per language: the share of WordPiece pieces that are [UNK], the share of texts with at least one [UNK],
pieces per whitespace word, and the share of texts longer than the encoder's max_length (cut when
encoded; see relkt.analysis.tokenizer_audit). Encoders without a WordPiece
tokenizer (n-gram hashing, mUSE's in-graph sentencepiece) are named and skipped.
"""

from __future__ import annotations

from relkt.analysis.coverage_scores import pool_texts, tokenizer_scores
from relkt.errors import ConfigError
from relkt.jobs.pool import load_pool
from relkt.jobs.requests import AuditRequest
from relkt.reports.tables import audit_table

TEXTS = ("questions", "candidates", "both")


def audit_pool(args: AuditRequest) -> tuple[str, dict]:
    """(the table, {"split", "texts", "audits": {encoder: {lang: audit} or None}, "skipped"}) of every encoder's
    tokenizer on the pool's `texts`; what the coverage job's `tokenizers_only` reports too."""
    specs = encoder_specs(args)
    pool = load_pool(args)  # bad input fails before TensorFlow loads
    texts_by_lang = pool_texts(pool, args.texts)
    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow)

    audits = {
        name: tokenizer_scores(build_encoder(spec, trainable=False), texts_by_lang) for name, spec in specs.items()
    }
    skipped = {
        name: f"{name} ({spec}): no WordPiece tokenizer to audit; skipped"
        for name, spec in specs.items()
        if audits[name] is None
    }
    report = {"split": args.split, "texts": args.texts, "audits": audits, "skipped": skipped}
    return audit_table(audits, pool.langs), report


def encoder_specs(request: AuditRequest) -> dict[str, str]:
    """The request's encoders, at least one, each a named spec."""
    if not request.encoders:
        raise ConfigError(f"{type(request).__name__}.encoders: name at least one encoder (name -> spec)")
    bad = [name for name, spec in request.encoders.items() if not name or not spec]
    if bad:
        raise ConfigError(f"{type(request).__name__}.encoders: {bad[0]!r} needs a name and a spec")
    return dict(request.encoders)
