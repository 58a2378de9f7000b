"""How well each encoder's tokenizer reads each language of a split, without encoding anything: the tokenizer
section of the coverage job (`relkt.api.coverage(CoverageRequest(..., tokenizers_only=True))`; `relkt coverage ...
--tokenizers-only`), whose table and report `audit_pool` makes.

Per language: the share of WordPiece pieces that are [UNK], the share of texts with at least one [UNK],
pieces per whitespace word, and the share of texts longer than the encoder's max_length (cut when
encoded; see relkt.analysis.tokenizer_audit). Encoders without a WordPiece
tokenizer (n-gram hashing, mUSE's in-graph sentencepiece) are named and skipped.
"""

from __future__ import annotations

from relkt.errors import ConfigError
from relkt.jobs.pool import load_pool
from relkt.jobs.requests import AuditRequest
from relkt.reports.tables import audit_table

TEXTS = ("questions", "candidates", "both")


def audit_pool(args: AuditRequest) -> tuple[str, dict]:
    """(the table, {"split", "texts", "audits": {encoder: {lang: audit} or None}}) of every encoder's tokenizer
    on the pool's `texts`; what the coverage job's `tokenizers_only` reports too."""
    specs = encoder_specs(args)
    pool = load_pool(args)  # bad input fails before TensorFlow loads
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
            audits[name] = None  # the table leaves it out; the report says why (`skipped`)
            continue
        limit = max_length_of(encoder)
        audits[name] = {
            lang: audit_tokenizer(tokenizer, texts, max_length=limit) for lang, texts in texts_by_lang.items()
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
