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


def _top_means(scores: np.ndarray, ks: Sequence[int]) -> dict[int, np.ndarray]:
    """For each k of `ks`, the mean of each row's k highest scores (all of them when the row is shorter): one partition
    at the largest k, its values sorted best first and summed in that order, so a k gives the same numbers whichever
    other ks it is computed with."""
    n = scores.shape[1]
    if n == 0:  # no column to take a mean of (a pool without questions, for the candidates' side)
        return {k: np.full(len(scores), np.nan, np.float32) for k in ks}
    top = min(max(ks), n)
    best = scores if top == n else np.partition(scores, n - top, axis=1)[:, n - top :]
    sums = np.cumsum(-np.sort(-best, axis=1), axis=1, dtype=np.float32)
    return {k: sums[:, min(k, n) - 1] / np.float32(min(k, n)) for k in ks}


def _top_mean(scores: np.ndarray, k: int) -> np.ndarray:
    """The mean of each row's `k` highest scores (all of them when the row is shorter)."""
    return _top_means(scores, (k,))[k]


def _columns(index: np.ndarray) -> slice | np.ndarray:
    """A language's candidate columns: a slice when they are contiguous (a view, no copy), else their indices."""
    if len(index) and index[-1] - index[0] + 1 == len(index):
        return slice(int(index[0]), int(index[-1]) + 1)
    return index


class _Neighbourhoods:
    """One block of scores' statistics by candidate language (its mean, its k best means), each computed once and
    shared by every setting that ranks the block."""

    def __init__(self, scores: np.ndarray, blocks: dict[str, slice | np.ndarray], ks: Sequence[int]):
        self.scores, self.blocks, self.ks = scores, blocks, sorted(set(ks))
        self._top: dict[str, dict[int, np.ndarray]] = {}

    def top_mean(self, lang: str, k: int) -> np.ndarray:
        if lang not in self._top:
            self._top[lang] = _top_means(self.scores[:, self.blocks[lang]], self.ks or [k])
        return self._top[lang][k]


class LanguageAwareRanking:
    """The score adjuster `relkt.metrics.ranking.gold_ranks` applies block by block: each question row gets its own
    setting (one for all, or one a question when settings were cross-fitted), each candidate column its language.

    Args:
        question_emb: (n_q, d) the pool's questions.
        candidate_emb: (n_c, d) the candidates the scores rank.
        candidate_langs: (n_c,) each candidate's language.
        settings: one `RankSetting` for every question, or a sequence of one a question.
        also: more settings `adjusted` will be asked for (their candidates' neighbourhoods computed now, in one pass).
    """

    def __init__(
        self,
        question_emb: np.ndarray,
        candidate_emb: np.ndarray,
        candidate_langs: np.ndarray,
        settings: RankSetting | Sequence[RankSetting],
        also: Sequence[RankSetting] = (),
    ):
        n_q = len(question_emb)
        self.settings = [settings] * n_q if isinstance(settings, RankSetting) else list(settings)
        if len(self.settings) != n_q:
            raise ValueError(f"{len(self.settings)} rank settings for {n_q} questions")
        self.langs = np.asarray(candidate_langs).astype(str)
        self.blocks = {lang: _columns(np.flatnonzero(self.langs == lang)) for lang in sorted(set(self.langs))}
        ks = sorted({s.k for s in [*self.settings, *also] if s.method in ("csls", "margin")})  # those that read r_c
        self.hub = _candidate_hubness(question_emb, candidate_emb, ks) if ks else {}

    def subset(self, columns: np.ndarray) -> LanguageAwareRanking:
        """The same adjuster over the candidate columns `columns` only (e.g. XX->EN's English candidates)."""
        out = object.__new__(LanguageAwareRanking)
        out.settings = self.settings
        out.langs = self.langs[columns]
        out.blocks = {lang: _columns(np.flatnonzero(out.langs == lang)) for lang in sorted(set(out.langs))}
        out.hub = {k: v[columns] for k, v in self.hub.items()}
        return out

    def __call__(self, scores: np.ndarray, first_row: int) -> np.ndarray:
        """`scores` (rows first_row.. of the questions x this adjuster's candidates) adjusted."""
        rows = self.settings[first_row : first_row + len(scores)]
        kinds = set(rows)
        if len(kinds) == 1:  # one setting for the whole block (the usual case): no row mask
            return self.adjusted(scores, rows[0])
        out = np.array(scores, dtype=np.float32, copy=True)
        for setting in kinds:
            mine = np.flatnonzero([r == setting for r in rows])
            out[mine] = self.adjusted(scores[mine], setting)
        return out

    def adjusted(self, scores: np.ndarray, setting: RankSetting, stats: _Neighbourhoods | None = None) -> np.ndarray:
        """`scores` under `setting` (`none`: `scores` themselves), language block by language block; `stats`: the
        block's neighbourhoods when several settings rank it (computed once for all of them)."""
        if setting.method == "none":
            return scores
        out = np.empty(scores.shape, np.float32)  # every column is in one language's block
        stats = stats or _Neighbourhoods(scores, self.blocks, [setting.k] if setting.k else [])
        for lang, cols in self.blocks.items():
            block = scores[:, cols]
            if setting.method == "center":
                out[:, cols] = block - block.mean(axis=1, keepdims=True)
                continue
            r_q = stats.top_mean(lang, setting.k)[:, None]
            if setting.method == "knn":
                out[:, cols] = block - r_q
                continue
            r_c = self.hub[setting.k][cols][None, :]
            if setting.method == "csls":
                out[:, cols] = 2 * block - r_q - r_c
            else:
                out[:, cols] = block / np.maximum((r_q + r_c) / 2, 1e-6)
        return out


def _candidate_hubness(q: np.ndarray, c: np.ndarray, ks: Sequence[int], chunk: int = 4096) -> dict[int, np.ndarray]:
    """r_c for each k of `ks`: each candidate's mean score over its k nearest questions, from one pass over blocks of
    candidates."""
    q, c = np.asarray(q, np.float32), np.asarray(c, np.float32)
    parts = [_top_means(c[lo : lo + chunk] @ q.T, ks) for lo in range(0, len(c), chunk)]
    return {k: np.concatenate([p[k] for p in parts]) if parts else np.zeros(0, np.float32) for k in ks}


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
    return settings_ap(question_emb, candidate_emb, gold, candidate_langs, (setting,))[setting.name]


def settings_ap(
    question_emb: np.ndarray,
    candidate_emb: np.ndarray,
    gold: Sequence[np.ndarray],
    candidate_langs: np.ndarray,
    grid: Sequence[RankSetting],
) -> dict[str, np.ndarray]:
    """Each question's LAReQA AP over the full pool ranked under each setting of `grid`, by name. One pass: a block
    of scores is computed once, its neighbourhoods once, and ranked under every setting."""
    from relkt.metrics.ranking import gold_ranks_each, per_question_metrics  # deferred: numba, at the first ranking

    ranking = LanguageAwareRanking(question_emb, candidate_emb, candidate_langs, RankSetting(), also=grid)
    ks = sorted({s.k for s in grid if s.k})

    def each(scores: np.ndarray, first_row: int) -> dict[str, np.ndarray]:
        stats = _Neighbourhoods(scores, ranking.blocks, ks)
        return {s.name: ranking.adjusted(scores, s, stats) for s in grid}

    ranks = gold_ranks_each(question_emb, candidate_emb, gold, each)
    none = ranks.get("", np.full((0, 1), np.inf))  # a pool without questions ranks nothing
    return {s.name: per_question_metrics(np.sort(ranks.get(s.name, none), axis=1), (1,), ())["AP"] for s in grid}


def choose_setting(
    question_emb: np.ndarray,
    candidate_emb: np.ndarray,
    gold: Sequence[np.ndarray],
    candidate_langs: np.ndarray,
    grid: Sequence[RankSetting] = GRID,
) -> tuple[RankSetting, dict[str, float]]:
    """The setting of `grid` with the highest mAP on this (dev) pool, and every setting's dev mAP. Ties keep the
    earlier setting: `none` first, so an adjustment is chosen only when it helps."""
    aps = settings_ap(question_emb, candidate_emb, gold, candidate_langs, grid)
    maps = {s.name: float(np.nanmean(aps[s.name])) for s in grid}
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
    aps = settings_ap(question_emb, candidate_emb, gold, candidate_langs, grid)
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
