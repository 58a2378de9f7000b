"""Every language-bias figure of one encoder on a LAReQA pool, from one encoding of it (LAReQA Sec. 5 / App. B):
the protocol's results, limit / remove one target, the monolingual pool, the languages of the top k, a language-ID
probe, a 2-d PCA of two languages, and how its tokenizer reads each language's questions. Numbers only: the report
draws them (relkt.reports.coverage_report)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relkt.analysis.embedding_views import language_id_probe, pca_2d
from relkt.analysis.language_bias import (
    limit_to_one_target,
    monolingual_pool,
    remove_one_target,
    top_k_language_distribution,
)
from relkt.analysis.significance import mcnemar, paired_bootstrap
from relkt.data.lareqa_pool import LareqaPool
from relkt.metrics.evaluator import TextEncoder
from relkt.metrics.lareqa_evaluator import LareqaEvaluator


def pool_bias_scores(
    encoder: TextEncoder, evaluator: LareqaEvaluator, top_k: int, pca_langs: Sequence[str], seed: int
) -> dict:
    """The figures of `encoder` on `evaluator`'s pool.

    Args:
        encoder: the encoder scored (its tokenizer, where it exposes one, is audited on each language's questions).
        evaluator: the pool's LAReQA evaluator; its embeddings (candidates mixed with their paragraph where the
            model learned to) are the ones every analysis reads.
        top_k: the ranks whose languages are counted.
        pca_langs: the first two of these the pool holds are projected to 2-d (fewer: no projection).
        seed: of the random target removed and of the probe's split.
    """
    from relkt.analysis.tokenizer_audit import audit_tokenizer, tokenizer_of  # deferred: TensorFlow

    pool: LareqaPool = evaluator.pool
    tokenizer = tokenizer_of(encoder)
    langs = list(pool.langs)
    tokens = (
        None
        if tokenizer is None
        else {lang: audit_tokenizer(tokenizer, [x.text for x in pool.questions if x.lang == lang]) for lang in langs}
    )
    results, (q, c) = evaluator.scored_embeddings(encoder)
    langs, heat = limit_to_one_target(q, c, pool)
    _, dist = top_k_language_distribution(q, c, pool, k=top_k)
    shown = [x for x in pca_langs if x in langs][:2]
    pca = None
    if len(shown) == 2:
        qm, cm = np.isin(pool.question_langs, shown), np.isin(pool.candidate_langs, shown)
        pca = {
            "langs": shown,
            "points": pca_2d(np.vstack([q[qm], c[cm]])),
            "point_langs": np.concatenate([pool.question_langs[qm], pool.candidate_langs[cm]]),
            "kinds": np.array(["question"] * int(qm.sum()) + ["candidate"] * int(cm.sum())),
        }
    return {
        "results": results,
        "per_question": {
            "AP": evaluator.per_question["lareqa"]["AP"],
            "xx_en_hit1": evaluator.per_question.get("xx_en", {}).get("hit@1"),
        },
        "limit_to_one_target": heat,
        "remove_one_target": remove_one_target(q, c, pool, seed=seed),
        "monolingual_pool": monolingual_pool(q, c, pool),
        "top_k_distribution": dist,
        "language_id_probe": language_id_probe(c, pool.candidate_langs, seed=seed),
        "langs": langs,
        "pca": pca,
        "tokenizer": tokens,
    }


def bias_significance(a: dict, b: dict, question_langs: np.ndarray, n_boot: int, seed: int) -> dict:
    """{language or "all": {"mAP": paired bootstrap of b - a, "xx_en_P@1": McNemar}} of two encoders' figures.

    Args:
        a, b: two encoders' `pool_bias_scores` (their per-question scores, in the pool's question order).
        question_langs: each question's language.
        n_boot: bootstrap resamples.
        seed: of the resampling.
    """
    out = {}
    for lang in ["all"] + sorted(set(question_langs)):
        m = np.ones(len(question_langs), bool) if lang == "all" else question_langs == lang
        ap_ok = np.isfinite(a["per_question"]["AP"]) & np.isfinite(b["per_question"]["AP"]) & m
        entry = {
            "mAP": paired_bootstrap(a["per_question"]["AP"][ap_ok], b["per_question"]["AP"][ap_ok], n_boot, seed=seed)
        }
        if a["per_question"]["xx_en_hit1"] is not None:
            entry["xx_en_P@1"] = mcnemar(a["per_question"]["xx_en_hit1"][m] > 0, b["per_question"]["xx_en_hit1"][m] > 0)
        out[lang] = entry
    return out
