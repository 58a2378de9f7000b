"""Online hard / semi-hard negative mining over the whole training pool, vectorized."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from relkt.losses.distances import check_distance
from relkt.mining.bm25_negatives import _take_top


@dataclass
class MiningResult:
    """One online mining round's negatives per anchor, and how many hard and semi-hard candidates qualified."""

    negatives: np.ndarray  # (n_anchors, hard + semi_hard) candidate indices, -1 where none found
    n_hard: np.ndarray  # (n_anchors,) qualifying hard candidates per anchor (before picking)
    n_semi_hard: np.ndarray

    @property
    def anchors_without_negative(self) -> int:
        return int((self.negatives < 0).all(axis=1).sum())


def _distances(scores: np.ndarray, distance: str) -> np.ndarray:
    """For unit vectors: 1 - cos, or ||a - c||^2 = 2 - 2 cos."""
    return 1.0 - scores if distance == "cosine" else 2.0 - 2.0 * scores


def mine_negatives(
    anchor_emb: np.ndarray,
    candidate_emb: np.ndarray,
    positives: np.ndarray,
    gold: np.ndarray,
    margin: float,
    hard: int = 1,
    semi_hard: int = 1,
    distance: str = "cosine",
    pick: str = "random",
    rng: np.random.Generator | None = None,
    chunk_size: int = 512,
) -> MiningResult:
    """Per anchor, up to `hard` negatives with d(a,n) < d(a,p) and `semi_hard` with
    d(a,p) < d(a,n) < d(a,p) + margin, never a gold answer of the anchor's question (any language).

    Embeddings are L2-normalised rows; all anchors are scored against all candidates with one
    matrix product per chunk. `pick="random"` draws uniformly among the qualifying candidates
    (seeded `rng`), `"hardest"` takes the closest ones.
    """
    check_distance(distance)
    if pick not in ("random", "hardest"):
        raise ValueError(f"unknown pick {pick!r}; valid: random, hardest")
    rng = rng or np.random.default_rng(0)
    n = len(anchor_emb)
    negatives = np.full((n, hard + semi_hard), -1, dtype=np.int64)
    n_hard = np.zeros(n, dtype=np.int64)
    n_semi = np.zeros(n, dtype=np.int64)
    cand_index = np.arange(len(candidate_emb))[None, :]
    for lo in range(0, n, chunk_size):
        sl = slice(lo, lo + chunk_size)
        d = _distances(anchor_emb[sl] @ candidate_emb.T, distance)  # (b, N)
        d_pos = np.take_along_axis(d, positives[sl, None], axis=1)  # (b, 1)
        g = gold[sl]
        is_gold = (cand_index[:, :, None] == g[:, None, :]).any(axis=2) if g.size else np.zeros_like(d, bool)
        is_gold |= cand_index == positives[sl, None]
        hard_mask = (d < d_pos) & ~is_gold
        semi_mask = (d > d_pos) & (d < d_pos + margin) & ~is_gold
        n_hard[sl], n_semi[sl] = hard_mask.sum(1), semi_mask.sum(1)
        values = np.broadcast_to(cand_index, d.shape)
        for mask, k, col in ((hard_mask, hard, 0), (semi_mask, semi_hard, hard)):
            if k == 0:
                continue
            base = rng.random(d.shape) if pick == "random" else -d
            keys = np.where(mask, base, -np.inf)
            negatives[sl, col : col + k] = _take_top(values, keys, k)
    return MiningResult(negatives, n_hard, n_semi)
