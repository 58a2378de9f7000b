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
from relkt.metrics.language_aware_ranking import LanguageAwareRanking, RankSetting
from relkt.metrics.ranking import gold_ranks

MARGIN_K = 4  # LASER's neighbourhood for the ratio margin (Artetxe and Schwenk 2019)


def _gold(texts: Sequence[str]) -> list[np.ndarray]:
    """Per item, every index whose text equals its own (an English sentence translated twice is gold for both)."""
    where: dict[str, list[int]] = {}
    for j, text in enumerate(texts):
        where.setdefault(text, []).append(j)
    return [np.array(where[text], dtype=np.int64) for text in texts]


def pair_retrieval(
    xx_emb: np.ndarray, en_emb: np.ndarray, xx: Sequence[str], en: Sequence[str], name: str, margin_k: int = MARGIN_K
) -> dict:
    """Per item and direction, the rank of the first gold: `xx>en` (each X text ranks every English side) and `en>xx`,
    by cosine and by LASER's ratio margin (each score over the mean of both sides' `margin_k` nearest neighbours:
    a translation always exists, so the margin only reorders by neighbourhood, never hides an answer).
    Returns {direction: {"rank": (n,) float, "hit1": (n,) bool, "P@1": float, "MRR": float, "margin_hit1": (n,)
    bool, "margin P@1": float}}."""
    check_embeddings(xx_emb, f"{name} X side")
    check_embeddings(en_emb, f"{name} English side")
    out = {}
    for direction, (queries, candidates, texts) in {
        "xx>en": (xx_emb, en_emb, en),
        "en>xx": (en_emb, xx_emb, xx),
    }.items():
        gold = _gold(texts)
        rank = gold_ranks(queries, candidates, gold)[:, 0]
        margin = LanguageAwareRanking(
            queries, candidates, np.zeros(len(candidates), dtype=int), RankSetting("margin", margin_k)
        )
        margin_rank = gold_ranks(queries, candidates, gold, adjust=margin)[:, 0]
        out[direction] = {
            "rank": rank,
            "hit1": rank == 1,
            "P@1": float(np.mean(rank == 1)),
            "MRR": float(np.mean(1.0 / rank)),
            "margin_hit1": margin_rank == 1,
            "margin P@1": float(np.mean(margin_rank == 1)),
        }
    return out


def hub_share(queries: np.ndarray, candidates: np.ndarray, top: int = 10) -> float:
    """Share of the queries whose nearest candidate is one of the `top` candidates nearest most often (hubness,
    Radovanovic et al., JMLR 2010): about top / n when every candidate is someone's nearest, near 1 when a few
    candidates crowd the region every query falls in. Rows L2-normalised; scored in blocks."""
    check_embeddings(queries, "hub_share queries")
    check_embeddings(candidates, "hub_share candidates")
    nearest = np.concatenate(
        [np.argmax(queries[i : i + 1024] @ candidates.T, axis=1) for i in range(0, len(queries), 1024)]
    )
    counts = np.bincount(nearest, minlength=len(candidates))
    return float(np.sort(counts)[::-1][:top].sum() / max(len(queries), 1))


def centered(emb: np.ndarray, mean: np.ndarray) -> np.ndarray:
    """`emb` less a language's mean embedding, back on the unit sphere: language-mean removal (Libovicky et al.,
    Findings EMNLP 2020; Yang et al. 2021), which takes away the component every text of a language shares. The
    mean must come from other texts of the language than those scored (a question file's `train` rows)."""
    out = np.asarray(emb, dtype=np.float32) - np.asarray(mean, dtype=np.float32)
    norm = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.maximum(norm, 1e-12)
