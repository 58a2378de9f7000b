"""Retrieval over a user's own pool: each question's top candidates with their scores, raw or language-aware (the
same adjusters the scorer offers), for an application rather than a benchmark.

    from relkt import api
    ranked = api.retrieve("muse", ["Wo liegt Bonn?"], ["Bonn liegt am Rhein.", "Paris is in France."],
                          langs=["de", "en"], top_k=2, margin="csls:1")
    ranked.hits[0][0].text, ranked.hits[0][0].score
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from relkt.errors import ConfigError


@dataclass(frozen=True)
class Hit:
    """One ranked candidate: its index in the candidates given, its text, language and (adjusted) score."""

    index: int
    text: str
    lang: str | None
    score: float


@dataclass
class RetrievalResult:
    """Each question's top candidates, best first (`hits[i]` for `questions[i]`), and the ranking used."""

    questions: list[str]
    hits: list[list[Hit]]
    margin: str


def _texts(value: object, name: str) -> list[str]:
    if isinstance(value, str) or not isinstance(value, Sequence) or not value:
        raise ConfigError(f"{name}: expected a non-empty list of texts, got {type(value).__name__}")
    bad = next((i for i, t in enumerate(value) if not isinstance(t, str) or not t.strip()), None)
    if bad is not None:
        raise ConfigError(f"{name}[{bad}]: expected a non-empty text, got {value[bad]!r}")
    return list(value)


def retrieve(
    encoder,
    questions: Sequence[str],
    candidates: Sequence[str],
    langs: Sequence[str] | None = None,
    top_k: int = 10,
    margin: str = "none",
    batch_size: int = 64,
) -> RetrievalResult:
    """Rank `candidates` for each of `questions` with `encoder` (a spec or a built encoder).

    Args:
        encoder: `muse`, `muse:RUN/best`, `hub:DIR` ... or a built encoder.
        questions: the queries.
        candidates: the pool every query ranks.
        langs: each candidate's language (needed to adjust within each language; None: one language).
        top_k: candidates kept a question.
        margin: `none`, `center`, `csls:K` or `margin:K` (relkt.metrics.language_aware_ranking). Choose it on a dev
            pool of your own with `api.score(..., rank_adjust="auto")`: it helps a pool that holds an answer in
            every language and can hurt one that does not.
        batch_size: texts per encoding batch.
    """
    from relkt.analysis.scoring_encoder import scoring_encoder  # deferred: TensorFlow
    from relkt.metrics.embedding_checks import check_embeddings  # deferred: beside it
    from relkt.metrics.language_aware_ranking import LanguageAwareRanking, RankSetting  # deferred: beside it

    questions, candidates = _texts(questions, "questions"), _texts(candidates, "candidates")
    if langs is not None and (isinstance(langs, str) or len(langs) != len(candidates)):
        raise ConfigError(f"langs: one language a candidate ({len(candidates)}), got {langs!r:.80}")
    if isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1:
        raise ConfigError(f"top_k: expected a whole number >= 1, got {top_k!r}")
    try:
        setting = RankSetting.parse(margin) if isinstance(margin, str) else None
    except ValueError as e:
        raise ConfigError(f"margin: {e}") from None
    if setting is None:
        raise ConfigError(f"margin: none, center, knn:K, csls:K or margin:K, got {margin!r}")
    built, _ = scoring_encoder(encoder)
    q = np.asarray(built.encode(questions, batch_size=batch_size), dtype=np.float32)
    c = np.asarray(built.encode(candidates, batch_size=batch_size), dtype=np.float32)
    check_embeddings(q, "question", questions)
    check_embeddings(c, "candidate", candidates)
    cand_langs = np.asarray(langs if langs is not None else [""] * len(candidates)).astype(str)
    ranking = LanguageAwareRanking(q, c, cand_langs, setting)
    k = min(top_k, len(candidates))
    hits = []
    for lo in range(0, len(q), 1024):
        scores = ranking(q[lo : lo + 1024] @ c.T, lo)
        top = np.argsort(-scores, axis=1, kind="stable")[:, :k]
        for row, order in zip(scores, top):
            hits.append(
                [Hit(int(j), candidates[j], None if langs is None else str(langs[j]), float(row[j])) for j in order]
            )
    return RetrievalResult(questions, hits, setting.name)
