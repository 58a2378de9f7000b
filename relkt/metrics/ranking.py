"""Ranking metrics computed from the ranks of the gold candidates, never from a full sort.

For question i and gold candidate j, rank(j) = 1 + #{k : s_ik > s_ij} + #{k < j : s_ik == s_ij},
i.e. candidates are ordered by score, ties by candidate index (what a stable descending sort
gives). Every metric is a function of the sorted gold ranks r_1 < r_2 < ... < r_R:

    AP      = 1/R * sum_j j / r_j                        (LAReQA Eq. 1, over the full ranking)
    mAP@k   = 1/min(R, k) * sum_{j : r_j <= k} j / r_j   (XTREME's divisor)
    P@k     = #{j : r_j <= k} / k
    R@k     = #{j : r_j <= k} / R
    hit@k   = 1 if r_1 <= k else 0                        (CL-ReLKT's "P@k")
    MRR     = 1 / r_1

Scores are computed chunk by chunk (questions x all candidates) so memory stays bounded.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from relkt.metrics.embedding_checks import check_finite


def gold_matrix(gold: Sequence[np.ndarray]) -> np.ndarray:
    """Pad ragged gold index lists into an (n, R_max) int64 matrix, -1 where there is none."""
    width = max((len(g) for g in gold), default=0)
    out = np.full((len(gold), max(width, 1)), -1, dtype=np.int64)
    for i, g in enumerate(gold):
        out[i, : len(g)] = g
    return out


def _order_keys(scores: np.ndarray) -> np.ndarray:
    """Exact int64 keys ordering candidates by (score desc, index asc): a larger key ranks higher.

    The float32 bits are mapped to an int32 with the same order (negative floats flip their
    magnitude bits), shifted up 32 bits, and the low bits hold the complement of the candidate
    index, so equal scores rank by index with one comparison and no float arithmetic.
    """
    bits = (scores.astype(np.float32) + np.float32(0.0)).view(np.int32)  # + 0.0 turns -0.0 into 0.0
    ordered = bits ^ ((bits >> 31) & np.int32(0x7FFFFFFF))
    index_rank = np.int64(0xFFFFFFFF) - np.arange(scores.shape[-1], dtype=np.int64)
    keys = ordered.astype(np.int64)
    keys <<= 32
    keys |= index_rank
    return keys


def gold_ranks(
    question_emb: np.ndarray,
    candidate_emb: np.ndarray,
    gold: Sequence[np.ndarray] | np.ndarray,
    chunk_size: int = 128,
    sort: bool = True,
) -> np.ndarray:
    """1-based ranks of each question's gold candidates by dot-product score, sorted ascending.

    Returns float64 (n_questions, R_max) with `inf` where a question has fewer golds, so that
    `j / r_j` and `r_j <= k` are 0/False there without masks. With `sort=False` column j is the
    rank of gold j as given (for analyses that need each gold's language).
    """
    q = np.asarray(question_emb, dtype=np.float32)
    c = np.asarray(candidate_emb, dtype=np.float32)
    check_finite(q, "question")  # NaN scores would rank by index and look like a result
    check_finite(c, "candidate")
    g_all = gold if isinstance(gold, np.ndarray) and gold.ndim == 2 else gold_matrix(gold)
    if g_all.size and g_all.max() >= c.shape[0]:
        raise ValueError(f"gold index {g_all.max()} out of range for {c.shape[0]} candidates")
    ranks = np.full(g_all.shape, np.inf)
    for lo in range(0, q.shape[0], chunk_size):
        keys = _order_keys(q[lo : lo + chunk_size] @ c.T)  # (b, N)
        g = g_all[lo : lo + chunk_size]
        valid = g >= 0
        g_keys = np.take_along_axis(keys, np.where(valid, g, 0), axis=1)  # (b, R)
        rank = np.count_nonzero(keys[:, None, :] > g_keys[:, :, None], axis=2) + 1
        ranks[lo : lo + chunk_size] = np.where(valid, rank, np.inf)
    if sort:
        ranks.sort(axis=1)
    return ranks


def per_question_metrics(
    ranks: np.ndarray, ks: Sequence[int] = (1, 5, 10), map_ks: Sequence[int] = (20,)
) -> dict[str, np.ndarray]:
    """Per-question metric values from sorted gold ranks (see module docstring)."""
    n_rel = np.isfinite(ranks).sum(axis=1)
    j = np.arange(1, ranks.shape[1] + 1)[None, :]
    prec_at_hit = j / ranks  # precision at each gold's rank; 0 for padding
    with np.errstate(invalid="ignore", divide="ignore"):
        out = {"AP": prec_at_hit.sum(axis=1) / n_rel, "RR": 1.0 / ranks[:, 0]}
        for k in map_ks:
            out[f"AP@{k}"] = np.where(ranks <= k, prec_at_hit, 0).sum(axis=1) / np.minimum(n_rel, k)
        for k in ks:
            found = (ranks <= k).sum(axis=1)
            out[f"P@{k}"] = found / k
            out[f"R@{k}"] = found / n_rel
            out[f"hit@{k}"] = (found > 0).astype(np.float64)
    out["n_relevant"] = n_rel
    return out


def summarize(per_question: dict[str, np.ndarray], mask: np.ndarray | None = None) -> dict[str, float]:
    """Average per-question metrics over questions that have at least one gold answer.

    Names follow the papers: mAP (full ranking), mAP@k, P@k, R@k, hit@k, MRR.
    """
    scored = per_question["n_relevant"] > 0
    if mask is not None:
        scored = scored & mask
    names = {"AP": "mAP", "RR": "MRR"}
    out: dict[str, float] = {}
    for key, values in per_question.items():
        if key == "n_relevant":
            continue
        name = names.get(key, "m" + key if key.startswith("AP@") else key)
        out[name] = float(values[scored].mean()) if scored.any() else float("nan")
    out["n_questions"] = int(scored.sum())
    out["n_unanswerable"] = int(((per_question["n_relevant"] == 0) & (mask if mask is not None else True)).sum())
    return out
