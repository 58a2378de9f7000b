"""Ranking metrics computed from the ranks of the gold candidates, never from a ranked list of candidates.

For question i and gold candidate j, rank(j) = 1 + #{k : s_ik > s_ij} + #{k < j : s_ik == s_ij},
i.e. candidates are ordered by score, ties by candidate index (what a stable descending sort
gives). Every metric is a function of the sorted gold ranks r_1 < r_2 < ... < r_R:

    AP      = 1/R * sum_j j / r_j                        (LAReQA Eq. 1, over the full ranking)
    mAP@k   = 1/min(R, k) * sum_{j : r_j <= k} j / r_j   (XTREME's divisor)
    P@k     = #{j : r_j <= k} / k
    R@k     = #{j : r_j <= k} / R
    hit@k   = 1 if r_1 <= k else 0                        (CL-ReLKT's "P@k")
    MRR     = 1 / r_1

Scores are computed block by block (questions x all candidates, at most `BLOCK_ELEMENTS` of them) so memory
beyond the embeddings stays bounded.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from relkt.metrics.embedding_checks import check_finite


def gold_matrix(gold: Sequence[np.ndarray]) -> np.ndarray:
    """Pad ragged gold index lists into an (n, R_max) int64 matrix, -1 where there is none."""
    width = max((len(g) for g in gold), default=0)
    out = np.full((len(gold), max(width, 1)), -1, dtype=np.int64)
    for i, g in enumerate(gold):
        out[i, : len(g)] = g
    return out


# Scores held at once while ranking: a block of questions x all candidates of at most this many floats (64 MB), so
# memory beyond the embeddings stays the same whatever the pool's size (fewer questions a block as it grows).
BLOCK_ELEMENTS = 1 << 24


def gold_ranks(
    question_emb: np.ndarray,
    candidate_emb: np.ndarray,
    gold: Sequence[np.ndarray] | np.ndarray,
    chunk_size: int | None = None,
    sort: bool = True,
    block_elements: int = BLOCK_ELEMENTS,
    adjust=None,
) -> np.ndarray:
    """1-based ranks of each question's gold candidates by dot-product score, sorted ascending.

    Returns float64 (n_questions, R_max) with `inf` where a question has fewer golds, so that
    `j / r_j` and `r_j <= k` are 0/False there without masks. With `sort=False` column j is the
    rank of gold j as given (for analyses that need each gold's language). Questions are scored in blocks of
    `chunk_size` (default: as many as fit `block_elements` scores); the ranks do not depend on the blocks.
    `adjust(scores, first_row)`, when given, rewrites each block's scores before they are ranked (language-aware
    ranking: relkt.metrics.language_aware_ranking).
    """
    if adjust is None:
        ranks = gold_ranks_each(question_emb, candidate_emb, gold, None, chunk_size, block_elements)[""]
    else:
        ranks = gold_ranks_each(
            question_emb, candidate_emb, gold, lambda s, lo: {"": adjust(s, lo)}, chunk_size, block_elements
        )[""]
    if sort:
        ranks.sort(axis=1)
    return ranks


def gold_ranks_each(
    question_emb: np.ndarray,
    candidate_emb: np.ndarray,
    gold: Sequence[np.ndarray] | np.ndarray,
    adjust_each=None,
    chunk_size: int | None = None,
    block_elements: int = BLOCK_ELEMENTS,
) -> dict[str, np.ndarray]:
    """`gold_ranks` (unsorted) under several rankings at once: `adjust_each(scores, first_row)` gives each block's
    scores by name, all ranked from one matrix product (None: the raw scores, named ""). By name, the ranks."""
    q = np.asarray(question_emb, dtype=np.float32)
    c = np.asarray(candidate_emb, dtype=np.float32)
    check_finite(q, "question")  # NaN scores would rank by index and look like a result
    check_finite(c, "candidate")
    g_all = gold if isinstance(gold, np.ndarray) and gold.ndim == 2 else gold_matrix(gold)
    if g_all.size and g_all.max() >= c.shape[0]:
        raise ValueError(f"gold index {g_all.max()} out of range for {c.shape[0]} candidates")
    chunk = chunk_size or max(1, block_elements // max(c.shape[0], 1))
    ranks: dict[str, np.ndarray] = {}
    for lo in range(0, q.shape[0], chunk):
        scores = q[lo : lo + chunk] @ c.T
        for name, block in ({"": scores} if adjust_each is None else adjust_each(scores, lo)).items():
            ranks.setdefault(name, np.full(g_all.shape, np.inf))[lo : lo + chunk] = _block_ranks(
                block, g_all[lo : lo + chunk]
            )
    return ranks or {"": np.full(g_all.shape, np.inf)}


def _block_ranks(scores: np.ndarray, gold: np.ndarray) -> np.ndarray:
    """rank = 1 + #{k : s_k > s_g} + #{k < g : s_k == s_g} for one block's (b, N) scores and (b, R) gold indices."""
    valid = gold >= 0
    g = np.where(valid, gold, 0)
    ranks = np.empty(g.shape, np.int64)
    _count_kernel()(np.ascontiguousarray(scores, np.float32), np.take_along_axis(scores, g, axis=1), g, ranks)
    return np.where(valid, ranks.astype(np.float64), np.inf)


@functools.lru_cache(maxsize=1)
def _count_kernel():
    """The compiled counting loop (numba, compiled once a process and cached on disk): for each gold, one pass over
    its row counting the scores above it and those equal to it, in SIMD registers; only where another score equals
    the gold's (rare with float scores) a second pass counts the equal ones before it. About a sixth of the block's
    matrix product (numpy's sort of each row, the next fastest, costs nearly half of it; a compare per gold, more)."""
    import numba  # deferred: heavy (numba's compiler), loaded at the first ranking

    @numba.njit(cache=True, nogil=True)
    def count(scores, gold_scores, gold, ranks):
        n_rows, n = scores.shape
        for i in range(n_rows):
            row = scores[i]
            for j in range(gold.shape[1]):
                t = gold_scores[i, j]
                above = 0
                equal = 0
                for k in range(n):
                    above += row[k] > t
                    equal += row[k] == t
                if equal > 1:  # the gold's own score and another: the equal ones before it rank above it
                    for k in range(gold[i, j]):
                        above += row[k] == t
                ranks[i, j] = above + 1

    return count


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
