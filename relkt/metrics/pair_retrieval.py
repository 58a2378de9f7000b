"""Retrieval between the two sides of translation pairs, both directions, per item: what `relkt.language_coverage`
reports for held-out parallel text and for XOR-TyDi questions with their English translations.

| input  | shape     | what                                                        |
|--------|-----------|-------------------------------------------------------------|
| xx_emb | (n, dim)  | the X side of the n pairs, L2-normalised                    |
| en_emb | (n, dim)  | the English side, same order                                |
| xx, en | n strings | the texts: a text repeated on one side is gold for each pair holding it |
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relkt.metrics.embedding_checks import check_embeddings
from relkt.metrics.ranking import gold_ranks


def _gold(texts: Sequence[str]) -> list[np.ndarray]:
    """Per item, every index whose text equals its own (an English sentence translated twice is gold for both)."""
    where: dict[str, list[int]] = {}
    for j, text in enumerate(texts):
        where.setdefault(text, []).append(j)
    return [np.array(where[text], dtype=np.int64) for text in texts]


def pair_retrieval(xx_emb: np.ndarray, en_emb: np.ndarray, xx: Sequence[str], en: Sequence[str], name: str) -> dict:
    """Per item and direction, the rank of the first gold: `xx>en` (each X text ranks every English side) and `en>xx`.
    Returns {direction: {"rank": (n,) float, "hit1": (n,) bool, "P@1": float, "MRR": float}}."""
    check_embeddings(xx_emb, f"{name} X side")
    check_embeddings(en_emb, f"{name} English side")
    out = {}
    for direction, (queries, candidates, texts) in {
        "xx>en": (xx_emb, en_emb, en),
        "en>xx": (en_emb, xx_emb, xx),
    }.items():
        rank = gold_ranks(queries, candidates, _gold(texts))[:, 0]
        out[direction] = {
            "rank": rank,
            "hit1": rank == 1,
            "P@1": float(np.mean(rank == 1)),
            "MRR": float(np.mean(1.0 / rank)),
        }
    return out
