"""Language-aware ranking: each question's scores adjusted within each candidate language by the neighbourhood it
has there, so a model's pull toward answers in its question's language counts less.

Every setting works on one block of scores (questions x candidates) at a time, column block by candidate language L:

    center       s(q, c) - mean of s(q, L's candidates)
    knn:K        s(q, c) - r_q(L)                          (CSLS's question side alone)
    csls:K       2 s(q, c) - r_q(L) - r_c                  (CSLS, Conneau et al. 2018)
    margin:K     s(q, c) / ((r_q(L) + r_c) / 2)           (LASER's ratio margin, Artetxe and Schwenk 2019)

with r_q(L) the mean of q's K highest scores among L's candidates and r_c the mean of c's K highest scores among the
pool's questions. Within one language only r_c moves a candidate; across languages r_q(L) shifts each language's block,
which is what lifts a pool whose questions have a gold answer in every language (XQuAD-R) and can hurt one where most
languages hold none (MLQA-R). Hence a measured option, chosen on dev, never a default.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

METHODS = ("none", "center", "knn", "csls", "margin")
NEIGHBOURS = ("knn", "csls", "margin")  # the methods that take k
KS = (1, 3, 5, 10, 20, 50)


@dataclass(frozen=True)
class RankSetting:
    """One way to rank: `method` (none, center, csls, margin) with `k` neighbours (csls and margin only)."""

    method: str = "none"
    k: int = 0

    def __post_init__(self):
        if self.method not in METHODS:
            raise ValueError(f"rank adjustment {self.method!r}: valid: {', '.join(METHODS)}")
        needs_k = self.method in NEIGHBOURS
        if needs_k and (not isinstance(self.k, int) or self.k < 1) or not needs_k and self.k:
            raise ValueError(f"rank adjustment {self.method}: k must be >= 1 for knn, csls and margin, 0 otherwise")

    @property
    def name(self) -> str:
        return f"{self.method}:{self.k}" if self.k else self.method

    @classmethod
    def parse(cls, text: str) -> RankSetting:
        """`none`, `center`, `csls:10`, `margin:5` -> a setting; a ValueError naming what is valid."""
        method, _, k = str(text).partition(":")
        try:
            return cls(method, int(k) if k else (10 if method in NEIGHBOURS else 0))
        except ValueError as e:
            raise ValueError(f"{text!r}: {e}; e.g. none, center, knn:10, csls:10, margin:10") from None


GRID = (RankSetting(), RankSetting("center")) + tuple(RankSetting(m, k) for m in NEIGHBOURS for k in KS)


def _top_mean(scores: np.ndarray, k: int) -> np.ndarray:
    """The mean of each row's `k` highest scores (all of them when the row is shorter)."""
    k = min(k, scores.shape[1])
    if k == scores.shape[1]:
        return scores.mean(axis=1)
    return np.partition(scores, scores.shape[1] - k, axis=1)[:, -k:].mean(axis=1)


class LanguageAwareRanking:
    """The score adjuster `relkt.metrics.ranking.gold_ranks` applies block by block: each question row gets its own
    setting (one for all, or one a question when settings were cross-fitted), each candidate column its language.

    Args:
        question_emb: (n_q, d) the pool's questions.
        candidate_emb: (n_c, d) the candidates the scores rank.
        candidate_langs: (n_c,) each candidate's language.
        settings: one `RankSetting` for every question, or a sequence of one a question.
    """

    def __init__(
        self,
        question_emb: np.ndarray,
        candidate_emb: np.ndarray,
        candidate_langs: np.ndarray,
        settings: RankSetting | Sequence[RankSetting],
    ):
        n_q = len(question_emb)
        self.settings = [settings] * n_q if isinstance(settings, RankSetting) else list(settings)
        if len(self.settings) != n_q:
            raise ValueError(f"{len(self.settings)} rank settings for {n_q} questions")
        self.langs = np.asarray(candidate_langs).astype(str)
        self.blocks = {lang: np.flatnonzero(self.langs == lang) for lang in sorted(set(self.langs))}
        ks = sorted({s.k for s in self.settings if s.method in ("csls", "margin")})  # the ones that read r_c
        self.hub = {k: self._candidate_hubness(question_emb, candidate_emb, k) for k in ks}

    @staticmethod
    def _candidate_hubness(q: np.ndarray, c: np.ndarray, k: int, chunk: int = 4096) -> np.ndarray:
        """r_c: each candidate's mean score over its `k` nearest questions, computed a block of candidates at a time."""
        q, c = np.asarray(q, np.float32), np.asarray(c, np.float32)
        return np.concatenate([_top_mean(c[lo : lo + chunk] @ q.T, k) for lo in range(0, len(c), chunk)] or [[]])

    def subset(self, columns: np.ndarray) -> LanguageAwareRanking:
        """The same adjuster over the candidate columns `columns` only (e.g. XX->EN's English candidates)."""
        out = object.__new__(LanguageAwareRanking)
        out.settings = self.settings
        out.langs = self.langs[columns]
        out.blocks = {lang: np.flatnonzero(out.langs == lang) for lang in sorted(set(out.langs))}
        out.hub = {k: v[columns] for k, v in self.hub.items()}
        return out

    def __call__(self, scores: np.ndarray, first_row: int) -> np.ndarray:
        """`scores` (rows first_row.. of the questions x this adjuster's candidates) adjusted."""
        rows = self.settings[first_row : first_row + len(scores)]
        out = np.array(scores, dtype=np.float32, copy=True)
        kinds = set(rows)
        for setting in kinds:
            if setting.method == "none":
                continue
            # one setting for the whole block (the usual case) needs no row mask
            mine = np.arange(len(rows)) if len(kinds) == 1 else np.flatnonzero([r == setting for r in rows])
            for cols in self.blocks.values():
                out[np.ix_(mine, cols)] = self._adjust(scores[np.ix_(mine, cols)], setting, cols)
        return out

    def _adjust(self, block: np.ndarray, setting: RankSetting, cols: np.ndarray) -> np.ndarray:
        if setting.method == "center":
            return block - block.mean(axis=1, keepdims=True)
        r_q = _top_mean(block, setting.k)[:, None]
        if setting.method == "knn":
            return block - r_q
        r_c = self.hub[setting.k][cols][None, :]
        if setting.method == "csls":
            return 2 * block - r_q - r_c
        return block / np.maximum((r_q + r_c) / 2, 1e-6)


def article_halves(question_qas_ids: Sequence[str], question_articles: Sequence[str]) -> np.ndarray:
    """0 or 1 a question: its qas_id's article (the first one it is seen with, so a question's translations stay
    together) in alternating halves of the sorted articles: the folds of cross-fitting."""
    first = {}
    for qid, article in zip(question_qas_ids, question_articles):
        first.setdefault(qid, article)
    order = {a: i % 2 for i, a in enumerate(sorted(set(first.values())))}
    return np.array([order[first[qid]] for qid in question_qas_ids], dtype=np.int64)


def setting_ap(
    question_emb: np.ndarray,
    candidate_emb: np.ndarray,
    gold: Sequence[np.ndarray],
    candidate_langs: np.ndarray,
    setting: RankSetting,
) -> np.ndarray:
    """Each question's LAReQA AP over the full pool ranked under `setting`."""
    from relkt.metrics.ranking import gold_ranks, per_question_metrics  # deferred: ranking imports numba lazily

    ranking = LanguageAwareRanking(question_emb, candidate_emb, candidate_langs, setting)
    return per_question_metrics(gold_ranks(question_emb, candidate_emb, gold, adjust=ranking), (1,), ())["AP"]


def choose_setting(
    question_emb: np.ndarray,
    candidate_emb: np.ndarray,
    gold: Sequence[np.ndarray],
    candidate_langs: np.ndarray,
    grid: Sequence[RankSetting] = GRID,
) -> tuple[RankSetting, dict[str, float]]:
    """The setting of `grid` with the highest mAP on this (dev) pool, and every setting's dev mAP. Ties keep the
    earlier setting: `none` first, so an adjustment is chosen only when it helps."""
    maps = {s.name: float(np.nanmean(setting_ap(question_emb, candidate_emb, gold, candidate_langs, s))) for s in grid}
    best = max(grid, key=lambda s: (maps[s.name], -grid.index(s)))
    return best, maps


def crossfit_settings(
    question_emb: np.ndarray,
    candidate_emb: np.ndarray,
    gold: Sequence[np.ndarray],
    candidate_langs: np.ndarray,
    halves: np.ndarray,
    grid: Sequence[RankSetting] = GRID,
) -> tuple[list[RankSetting], dict]:
    """For a pool scored whole (no dev split of its kind): each half's setting chosen on the other half's questions
    (`article_halves`), so no question's gold answers choose its own setting. One setting a question, and the record
    of the choice (each half's chosen setting and every setting's mAP on the half that chose it)."""
    aps = {s.name: setting_ap(question_emb, candidate_emb, gold, candidate_langs, s) for s in grid}
    settings: list[RankSetting] = [grid[0]] * len(halves)
    chosen = {}
    for half in (0, 1):
        dev = halves != half
        maps = {name: float(np.nanmean(ap[dev])) if dev.any() else float("nan") for name, ap in aps.items()}
        best = max(grid, key=lambda s: (np.nan_to_num(maps[s.name], nan=-1.0), -grid.index(s)))
        for i in np.flatnonzero(halves == half):
            settings[i] = best
        chosen[f"half_{half}"] = {"chosen": best.name, "questions": int((halves == half).sum()), "chosen_on": maps}
    return settings, chosen
