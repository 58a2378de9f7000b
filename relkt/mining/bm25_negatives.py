"""BM25 negatives (bm25s, Robertson scoring) with tokenization that works for every script."""

from __future__ import annotations

import logging
import os
import re
from collections.abc import Sequence

import bm25s
import numpy as np

# Scripts written without spaces between words: Thai, Lao, Khmer, Myanmar, CJK, Hiragana/Katakana.
_NO_SPACE = r"\u0E00-\u0EFF\u1000-\u109F\u1780-\u17FF\u3040-\u30FF\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF"
_TOKEN = re.compile(rf"[{_NO_SPACE}]+|[^\W{_NO_SPACE}]+", re.UNICODE)
_IS_NO_SPACE = re.compile(rf"[{_NO_SPACE}]")

# From this many query-document cells on, bm25s's compiled retrieval (numba, every core) pays back its few seconds of
# compiling: ~9x faster a query than its numpy loop, 86,042 SQuAD questions over 89,586 sentences in ~1 min instead
# of ~8 (benchmarks/bench_mining.py). Both give the same scores at every rank; equal scores may come in another order.
COMPILED_FROM_CELLS = 50_000_000


def bm25_tokenize(text: str) -> list[str]:
    """Lowercased word tokens; runs of Thai/Chinese/Japanese/... become character unigrams + bigrams,
    so those languages get term matches without a word segmenter (whitespace tokens would make a
    whole Thai clause or Chinese sentence one term)."""
    tokens: list[str] = []
    for run in _TOKEN.findall(text.lower()):
        if _IS_NO_SPACE.match(run):
            tokens.extend(run)
            tokens.extend(run[i : i + 2] for i in range(len(run) - 1))
        else:
            tokens.append(run)
    return tokens


class Bm25Index:
    """bm25s over candidate texts; `top(queries, k)` returns candidate indices best first."""

    def __init__(self, documents: Sequence[str], k1: float = 1.5, b: float = 0.75):
        logging.getLogger("bm25s").setLevel(logging.WARNING)
        self.n = len(documents)
        self.retriever = bm25s.BM25(k1=k1, b=b, method="robertson")
        self.retriever.index([bm25_tokenize(d) or ["\x00"] for d in documents], show_progress=False)
        self.vocab = set(self.retriever.vocab_dict)

    def top(self, queries: Sequence[str], k: int) -> np.ndarray:
        """(n_queries, min(k, n_docs)) candidate indices by BM25 score; ties and no-match rows as bm25s orders them."""
        return self.scored_top(queries, k)[0]

    def scored_top(self, queries: Sequence[str], k: int, compiled: bool | None = None) -> tuple[np.ndarray, np.ndarray]:
        """`top`'s indices and their scores; `compiled` picks bm25s's numba retrieval (None: from
        `COMPILED_FROM_CELLS` query-document cells on)."""
        k = min(k, self.n)
        tokens = [[t for t in bm25_tokenize(q) if t in self.vocab] or ["\x00"] for q in queries]
        if compiled is None:
            compiled = len(tokens) * self.n >= COMPILED_FROM_CELLS
        if compiled:
            threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
            docs, scores = self.retriever.retrieve(
                tokens, k=k, show_progress=False, n_threads=threads, backend_selection="numba"
            )
        else:
            docs, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=0)
        return np.asarray(docs, dtype=np.int64), np.asarray(scores)


def bm25_negatives(
    index_top: np.ndarray,
    gold: np.ndarray,
    n_negatives: int,
    top_start: int = 0,
    rng: np.random.Generator | None = None,
) -> np.ndarray:
    """Pick `n_negatives` per query from BM25 ranks [top_start, top_end) that are not gold.

    `index_top` is (n, top_end) from `Bm25Index.top`; `gold` is (n, R) candidate indices (-1 pad),
    gold in *any* language (a translation of the positive is not a negative). Picks are random
    among the eligible (seeded `rng`), or the best-ranked when `rng` is None. Returns (n, n_negatives)
    with -1 where fewer were eligible.
    """
    window = index_top[:, top_start:]
    is_gold = (window[:, :, None] == gold[:, None, :]).any(axis=2)
    if rng is None:
        keys = -np.arange(window.shape[1], dtype=np.float64)[None, :].repeat(len(window), 0)
    else:
        keys = rng.random(window.shape)
    keys = np.where(is_gold, -np.inf, keys)
    return _take_top(window, keys, n_negatives)


def _take_top(values: np.ndarray, keys: np.ndarray, k: int) -> np.ndarray:
    """Per row, the `values` at the k largest finite `keys` (largest first); -1 where keys are -inf."""
    if k <= 0 or values.shape[1] == 0:
        return np.full((len(values), max(k, 0)), -1, dtype=np.int64)
    kk = min(k, values.shape[1])
    part = np.argpartition(-keys, kk - 1, axis=1)[:, :kk]
    order = np.argsort(-np.take_along_axis(keys, part, axis=1), axis=1, kind="stable")
    idx = np.take_along_axis(part, order, axis=1)
    picked = np.where(np.isfinite(np.take_along_axis(keys, idx, axis=1)), np.take_along_axis(values, idx, axis=1), -1)
    if kk < k:
        picked = np.hstack([picked, np.full((len(values), k - kk), -1, dtype=np.int64)])
    return picked.astype(np.int64)
