"""The English candidates of CL-ReLKT's XX->EN protocol, at the answer unit the paper scores: the article."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from relkt.data.lareqa_pool import LareqaPool
from relkt.data.qa_source import QaSource
from relkt.errors import ConfigError, DataError

UNITS = ("article", "paragraph", "sentence", "scored_article", "scored_paragraph")  # the paper's document first
# The reference code's pool (CL-ReLKT's evaluation script): the candidates are the scored questions' own documents,
# each embedded whole, not every unit of the data set. `scored_UNIT` is UNIT restricted so.
SCORED = "scored_"

# mUSE has no position embeddings: its 512-piece default only caps training memory. Scoring reads whole texts, as
# the TF Hub model does, so the paper's article unit is the whole article (XQuAD's longest: 1,852 pieces).
SCORING_MAX_LENGTH = 8192


@dataclass(frozen=True)
class EnglishAnswerUnits:
    """Every English unit of a data set, and which one answers each `qas_id`.

    CL-ReLKT (Sec. 4) ranks English *documents* for a question in language X; on XQuAD a document is one of the
    48 articles. The candidates are every unit of the whole data set whichever questions are scored, so a test
    article competes with the training articles too (distractors, not leaks: no question of theirs is scored).

    | unit      | candidate text                                   | gold                                   |
    |-----------|--------------------------------------------------|----------------------------------------|
    | sentence  | an English answer sentence (LAReQA's candidate)  | the sentence holding the English answer |
    | paragraph | a paragraph's context                            | the paragraph holding it               |
    | article   | the article's paragraphs, in order, one per line | the article holding it                 |
    """

    unit: str
    texts: tuple[str, ...]
    names: tuple[str, ...]  # article title, "title#paragraph" or the sentence's candidate id
    gold_of: dict[str, int]  # qas_id -> index into texts

    @classmethod
    def from_pool(cls, english: LareqaPool, unit: str, lang: str = "en") -> EnglishAnswerUnits:
        """Units of an English pool (load it with `split="all"` for the paper's candidate pool); with `lang`, of a
        pool in that one language (in-language retrieval: its questions against its own paragraphs or articles)."""
        if unit not in UNITS or unit.startswith(SCORED):
            raise ConfigError(f"unknown XX->EN unit {unit!r}; valid: {', '.join(UNITS[:3])}")
        others = sorted({c.lang for c in english.candidates} - {lang})
        if others:
            raise DataError(
                f"answer units in {lang} need a pool of {lang} alone; it holds {', '.join(others)} candidates"
            )
        sentences = english.candidates
        if unit == "sentence":
            keys = [c.cid for c in sentences]
        elif unit == "paragraph":
            keys = [f"{c.article}#{c.paragraph}" for c in sentences]
        else:
            keys = [c.article for c in sentences]
        index: dict[str, int] = {}
        unit_of = np.array([index.setdefault(k, len(index)) for k in keys], dtype=np.int64)
        contexts: dict[str, dict[int, str]] = {}
        for c in sentences:
            contexts.setdefault(c.article, {})[c.paragraph] = c.context
        if unit == "sentence":
            texts = [c.sentence for c in sentences]
        elif unit == "paragraph":
            texts = [contexts[title][int(p)] for title, _, p in (k.rpartition("#") for k in index)]
        else:
            texts = ["\n".join(contexts[title][p] for p in sorted(contexts[title])) for title in index]
        gold_of = {q.qas_id: int(unit_of[g[0]]) for q, g in zip(english.questions, english.gold) if len(g)}
        return cls(unit=unit, texts=tuple(texts), names=tuple(index), gold_of=gold_of)

    def restricted(self, qas_ids) -> EnglishAnswerUnits:
        """The reference code's pool: only the units that answer one of `qas_ids` (the scored questions), in their
        order here, as unit `scored_UNIT`."""
        wanted = {self.gold_of[q] for q in qas_ids if q in self.gold_of}
        kept = [i for i in range(len(self.texts)) if i in wanted]
        new_index = {old: new for new, old in enumerate(kept)}
        return EnglishAnswerUnits(
            unit=SCORED + self.unit,
            texts=tuple(self.texts[i] for i in kept),
            names=tuple(self.names[i] for i in kept),
            gold_of={q: new_index[g] for q, g in self.gold_of.items() if g in new_index},
        )

    def gold(self, qas_ids) -> np.ndarray:
        """(n, 1) int64 gold unit per question, -1 where the qas_id has no English answer here."""
        return np.array([[self.gold_of.get(q, -1)] for q in qas_ids], dtype=np.int64).reshape(-1, 1)


def english_units(
    source: QaSource, units: Sequence[str], scored: Sequence[str] | None = None
) -> dict[str, EnglishAnswerUnits]:
    """The XX->EN candidates: every English unit of the whole source scored (split `all`), whatever split is scored;
    a `scored_UNIT` keeps only the units answering the `scored` qas_ids (the reference code's pool; needs them)."""
    if not units:
        return {}
    bad = [u for u in units if u not in UNITS]
    if bad:
        raise ConfigError(f"unknown XX->EN unit {bad[0]!r}; valid: {', '.join(UNITS)}")
    english = LareqaPool.from_source(source, langs=["en"], split="all")
    out = {}
    for unit in units:
        whole = EnglishAnswerUnits.from_pool(english, unit.removeprefix(SCORED))
        if unit.startswith(SCORED):
            if scored is None:
                raise ConfigError(f"XX->EN unit {unit}: the scored questions' documents need the scored questions")
            whole = whole.restricted(scored)
        out[unit] = whole
    return out


QA_UNITS = ("paragraph", "article")  # the units of answer retrieval in a QA source scored whole, the paper's last
# A QA source scored whole: its pool (split `all`) and its English answer units ({} where it has no English)
ScoredSource = tuple[LareqaPool, dict[str, EnglishAnswerUnits]]


def scored_source(source: QaSource, units: Sequence[str]) -> ScoredSource:
    """`source` read once for scoring it whole: its pool, and its English `units` where it has English."""
    pool = LareqaPool.from_source(source)
    return pool, english_units(source, units) if "en" in pool.langs else {}
