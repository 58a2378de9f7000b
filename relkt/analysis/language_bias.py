"""LAReQA's language-bias analyses (Sec. 5, App. B), computed from one encoding of the pool.

All take question/candidate embeddings aligned with `pool.questions` / `pool.candidates` and work
from the ranks of the gold candidates (`relkt.metrics.gold_ranks`), so nothing is re-encoded.
"""

from __future__ import annotations

import numpy as np

from relkt.data.lareqa_pool import LareqaPool
from relkt.metrics.ranking import gold_matrix, gold_ranks, per_question_metrics


def _lang_index(pool: LareqaPool) -> tuple[list[str], np.ndarray, np.ndarray]:
    langs = pool.langs
    pos = {lang: i for i, lang in enumerate(langs)}
    return langs, np.array([pos[q.lang] for q in pool.questions]), np.array([pos[c.lang] for c in pool.candidates])


def limit_to_one_target(q_emb: np.ndarray, c_emb: np.ndarray, pool: LareqaPool) -> tuple[list[str], np.ndarray]:
    """Paper Fig. 4: for question language X and answer language Y, the mAP (= MRR, one target) when
    every gold except the one in Y is removed from the pool. Returns (langs, matrix[X, Y]); NaN where
    no question of X has a gold in Y.

    Removing the other golds moves gold j up by the number of golds ranked above it, so the ranks
    come from one scoring of the full pool."""
    langs, q_lang, c_lang = _lang_index(pool)
    g = gold_matrix(pool.gold)
    ranks = gold_ranks(q_emb, c_emb, g, sort=False)
    above = (ranks[:, None, :] < ranks[:, :, None]).sum(axis=2)
    limited = ranks - above
    valid = g >= 0
    rows = np.broadcast_to(q_lang[:, None], g.shape)[valid]
    cols = c_lang[g[valid]]
    total = np.zeros((len(langs), len(langs)))
    count = np.zeros_like(total)
    np.add.at(total, (rows, cols), 1.0 / limited[valid])
    np.add.at(count, (rows, cols), 1)
    with np.errstate(invalid="ignore"):
        return langs, total / count


def _ap_without(ranks: np.ndarray, drop: np.ndarray) -> np.ndarray:
    """AP per question after removing gold column `drop[i]` (-1: remove nothing)."""
    ranks = ranks.copy()
    rows = np.flatnonzero(drop >= 0)
    dropped = ranks[rows, drop[rows]]
    ranks[rows, drop[rows]] = np.inf
    ranks[rows] -= ranks[rows] > dropped[:, None]  # golds below the removed one move up by one
    ranks.sort(axis=1)
    return per_question_metrics(ranks, ks=(), map_ks=())["AP"]


def remove_one_target(q_emb: np.ndarray, c_emb: np.ndarray, pool: LareqaPool, seed: int = 0) -> dict:
    """Paper Table 3: mAP with the same-language target removed vs a random other-language target
    removed (same questions: those with both). `relative_delta` = (same - other) / other: negative
    when the model prefers same-language answers; 0 for an encoder blind to language."""
    langs, q_lang, c_lang = _lang_index(pool)
    g = gold_matrix(pool.gold)
    ranks = gold_ranks(q_emb, c_emb, g, sort=False)
    gold_lang = np.where(g >= 0, c_lang[np.maximum(g, 0)], -1)
    same = np.where(gold_lang == q_lang[:, None])
    drop_same = np.full(len(g), -1)
    drop_same[same[0]] = same[1]
    rng = np.random.default_rng(seed)
    other_mask = (gold_lang >= 0) & (gold_lang != q_lang[:, None])
    keys = np.where(other_mask, rng.random(g.shape), -1.0)
    drop_other = np.where(other_mask.any(axis=1), keys.argmax(axis=1), -1)
    usable = (drop_same >= 0) & (drop_other >= 0) & ((g >= 0).sum(axis=1) >= 2)
    ap_full = per_question_metrics(np.sort(ranks, axis=1), ks=(), map_ks=())["AP"]
    ap_same, ap_other = _ap_without(ranks, drop_same), _ap_without(ranks, drop_other)

    def summary(mask):
        s, o = float(ap_same[mask].mean()), float(ap_other[mask].mean())
        return {
            "mAP": float(ap_full[mask].mean()),
            "mAP_without_same_language": s,
            "mAP_without_other_language": o,
            "relative_delta": (s - o) / o if o > 0 else float("nan"),
            "n_questions": int(mask.sum()),
        }

    out = {"all": summary(usable)}
    for i, lang in enumerate(langs):
        mask = usable & (q_lang == i)
        if mask.any():
            out[lang] = summary(mask)
    return out


def monolingual_pool(q_emb: np.ndarray, c_emb: np.ndarray, pool: LareqaPool) -> dict[str, float]:
    """Paper Table 4: mAP when each question only sees candidates of its own language."""
    out = {}
    for lang in pool.langs:
        q_idx = np.flatnonzero(pool.question_langs == lang)
        c_idx = np.flatnonzero(pool.candidate_langs == lang)
        if not len(q_idx) or not len(c_idx):
            continue
        remap = np.full(len(pool.candidates), -1)
        remap[c_idx] = np.arange(len(c_idx))
        gold = [remap[pool.gold[i]][remap[pool.gold[i]] >= 0] for i in q_idx]
        ap = per_question_metrics(gold_ranks(q_emb[q_idx], c_emb[c_idx], gold), ks=(), map_ks=())
        has = ap["n_relevant"] > 0
        out[lang] = float(ap["AP"][has].mean()) if has.any() else float("nan")
    return out


def top_k_language_distribution(
    q_emb: np.ndarray, c_emb: np.ndarray, pool: LareqaPool, k: int = 100, chunk_size: int = 256
) -> tuple[list[str], np.ndarray]:
    """Paper Fig. 6: share of each candidate language among the top-k retrieved, per question language.
    Returns (langs, matrix[question language, candidate language]) with rows summing to 1."""
    langs, q_lang, c_lang = _lang_index(pool)
    k = min(k, len(c_emb))
    counts = np.zeros((len(langs), len(langs)))
    for lo in range(0, len(q_emb), chunk_size):
        scores = q_emb[lo : lo + chunk_size] @ c_emb.T
        top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
        np.add.at(counts, (np.repeat(q_lang[lo : lo + chunk_size], k), c_lang[top].ravel()), 1)
    with np.errstate(invalid="ignore"):
        return langs, counts / counts.sum(axis=1, keepdims=True)
