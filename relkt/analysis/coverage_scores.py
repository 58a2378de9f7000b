"""What the coverage job scores each encoder on, read once (`CoverageInputs`), and one encoder's figures on all of it
(`encoder_coverage`), then the comparisons between encoders (`coverage_comparisons`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from relkt.analysis.pair_scores import compare_hits, pair_scores, qa_source_scores, test_source_scores
from relkt.analysis.pool_bias_scores import bias_significance, pool_bias_scores
from relkt.data.english_answer_units import ScoredSource
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.pair_items import PairItems
from relkt.metrics import LareqaEvaluator
from relkt.metrics.evaluator import TextEncoder


@dataclass
class CoverageInputs:
    """The parts a coverage report holds, their settings, and what each reads (filled by the job before any model
    loads): the QA pool (bias analyses, tokenizer audit), the pair files' items, the test sources."""

    tokenizers_only: bool  # the tokenizer audit of the pool alone
    languages: bool  # the pair files' report
    bias: bool  # LAReQA's bias analyses of the pool
    texts: str = "questions"  # which of the pool's texts the tokenizer audit reads: questions | candidates | both
    top_k: int = 100
    pca_langs: list[str] = field(default_factory=lambda: ["en", "de"])
    seed: int = 0
    bootstrap: int = 1000
    batch_size: int = 128
    pool: LareqaPool | None = None
    items: PairItems | None = None
    test: ScoredSource | None = None  # the test source whole, read once
    qa_test: ScoredSource | None = None  # the QA source whose languages' answer retrieval is scored, read once


def pool_texts(pool: LareqaPool, texts: str) -> dict[str, list[str]]:
    """The pool's `texts` (questions | candidates | both) by language: what the tokenizer audit reads."""
    out: dict[str, list[str]] = {lang: [] for lang in pool.langs}
    if texts in ("questions", "both"):
        for q in pool.questions:
            out[q.lang].append(q.text)
    if texts in ("candidates", "both"):
        for c, text in zip(pool.candidates, pool.candidate_texts(False)):
            out[c.lang].append(text)
    return out


def tokenizer_scores(encoder: TextEncoder, texts_by_lang: dict[str, list[str]]) -> dict | None:
    """{lang: audit} of `encoder`'s tokenizer on each language's texts (relkt.analysis.tokenizer_audit); None for an
    encoder without a WordPiece tokenizer to audit."""
    from relkt.analysis.tokenizer_audit import audit_tokenizer, max_length_of, tokenizer_of  # deferred: TensorFlow

    tokenizer = tokenizer_of(encoder)
    if tokenizer is None:
        return None
    limit = max_length_of(encoder)
    return {lang: audit_tokenizer(tokenizer, texts, max_length=limit) for lang, texts in texts_by_lang.items()}


def encoder_coverage(encoder: TextEncoder, inputs: CoverageInputs) -> dict:
    """One encoder's figures on every part `inputs` asks for: {"tokenizer_audit"} alone with `tokenizers_only`; else
    {"languages": {"figures", "hits"}} with pair files and {"bias": pool_bias_scores} with the bias analyses."""
    from relkt.encoders import QuietEncoder  # deferred: heavy (TensorFlow)

    if inputs.tokenizers_only:
        return {"tokenizer_audit": tokenizer_scores(encoder, pool_texts(inputs.pool, inputs.texts))}
    out: dict = {}
    if inputs.bias:
        evaluator = LareqaEvaluator(inputs.pool, batch_size=inputs.batch_size)  # holds the pool: nothing to build
        out["bias"] = pool_bias_scores(encoder, evaluator, inputs.top_k, inputs.pca_langs, inputs.seed)
    if inputs.languages:
        quiet = QuietEncoder(encoder, inputs.batch_size)
        figures, hits = pair_scores(encoder, quiet, inputs.items.items, inputs.batch_size)
        if inputs.test is not None:
            figures["test"], more = test_source_scores(encoder, quiet, inputs.test, inputs.batch_size)
            hits.update(more)
        if inputs.qa_test is not None:
            figures["qa"], more = qa_source_scores(encoder, quiet, inputs.qa_test, inputs.batch_size)
            hits.update(more)
        out["languages"] = {"figures": figures, "hits": hits}
    return out


def coverage_comparisons(scores: dict[str, dict], inputs: CoverageInputs) -> dict:
    """{"languages": each later encoder against the first (McNemar on every item), "bias": consecutive encoders and
    the first against the last (paired bootstrap on mAP, McNemar on XX->EN P@1)}, for the parts that ran."""
    names, out = list(scores), {}
    if inputs.languages:
        out["languages"] = compare_hits({n: scores[n]["languages"]["hits"] for n in names}, names)
    if inputs.bias:
        pairs = list(zip(names, names[1:])) + ([(names[0], names[-1])] if len(names) > 2 else [])
        langs = inputs.pool.question_langs
        out["bias"] = {
            f"{a} -> {b}": bias_significance(scores[a]["bias"], scores[b]["bias"], langs, inputs.bootstrap, inputs.seed)
            for a, b in pairs
        }
    return out
