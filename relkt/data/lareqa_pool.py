"""The LAReQA multilingual pool: all questions, all candidate sentences, gold answers by qas_id."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from relkt.data.qa_source import QaSource
from relkt.data.records import Candidate, LanguageData, Question
from relkt.data.sources import resolve_data_dir
from relkt.data.splits import SPLITS, SplitSide, unit_split
from relkt.errors import ConfigError, DataError

log = logging.getLogger(__name__)


@dataclass
class LareqaPool:
    """Questions, candidates and gold answers, as LAReQA defines them.

    The gold answers of a question are the candidates, in every loaded language, whose sentence
    span holds the `answer_start` of that question's `qas_id` in that language. `gold[i]` holds
    candidate indices for question `i`, sorted.
    """

    questions: list[Question]
    candidates: list[Candidate]
    gold: list[np.ndarray]
    unmatched_answers: int = 0
    # True when some file came without sentence breaks and relkt.data.sentence_splitter cut its contexts
    split_by_relkt: bool = False

    @classmethod
    def load(
        cls,
        data_dir: str | Path | None = None,
        langs: Sequence[str] | None = None,
        split: str = "all",
        fractions: tuple[float, float, float] = (0.7, 0.1, 0.2),
        seed: int = 0,
        folds: int = 0,
        fold: int = 0,
        format: str = "auto",
        unit: str = "article",
    ) -> LareqaPool:
        """Load a QA source (XQuAD-R by default; any format relkt.data.qa_source reads) and keep one split by `unit`
        (article, context or question; of fold `fold` of `folds` when `folds` > 1: see `article_split`)."""
        source = QaSource.open(resolve_data_dir(data_dir), format)
        return cls.from_source(source, langs, split, fractions=fractions, seed=seed, folds=folds, fold=fold, unit=unit)

    @classmethod
    def from_source(
        cls, source: QaSource, langs: Sequence[str] | None = None, split: str = "all", unit: str = "article", **cut
    ) -> LareqaPool:
        """`load` of an opened source; `cut`: `article_split`'s fractions, seed, folds and fold."""
        if split not in SPLITS:
            raise ConfigError(f"unknown split {split!r}; valid: {', '.join(SPLITS)}")
        datas = source.read(langs)
        side = unit_split([q for d in datas for q in d.questions], unit, **cut)[split]
        if split != "all" and not any(side.keeps_question(q) for d in datas for q in d.questions):
            total = sum(len(d.questions) for d in datas)
            units = len({q.article for d in datas for q in d.questions})
            raise DataError(
                f"{source.path}: its {split} split is empty (the source holds {total} questions in {units} articles, "
                f"none cut into {split} by {', '.join(f'{k}={v}' for k, v in cut.items()) or 'the defaults'}, unit "
                f"{unit}): change data.split_fractions or data.folds, or give a source with more articles"
            )
        return cls.from_language_data(datas, side)

    @classmethod
    def from_language_data(cls, datas: Iterable[LanguageData], side: SplitSide | None = None) -> LareqaPool:
        """Build the pool from parsed files, keeping the questions and candidates of one split `side` (all when
        None)."""
        datas = list(datas)
        keep_q = (lambda q: True) if side is None else side.keeps_question
        keep_c = (lambda c: True) if side is None else side.keeps_candidate
        candidates: list[Candidate] = []
        offsets = {}
        for d in datas:
            kept = [i for i, c in enumerate(d.candidates) if keep_c(c)]
            new_index = {old: len(candidates) + j for j, old in enumerate(kept)}
            offsets[d.lang] = new_index
            candidates.extend(d.candidates[i] for i in kept)
        answers_by_qas: dict[str, list[int]] = {}
        for d in datas:
            for qas_id, old in d.answer_sentence.items():
                if old in offsets[d.lang]:
                    answers_by_qas.setdefault(qas_id, []).append(offsets[d.lang][old])
        questions = [q for d in datas for q in d.questions if keep_q(q)]
        gold = [np.array(sorted(answers_by_qas.get(q.qas_id, [])), dtype=np.int64) for q in questions]
        unmatched = sum(len(d.unmatched_answers) for d in datas)
        split = any(d.split_by_relkt for d in datas)
        pool = cls(questions, candidates, gold, unmatched_answers=unmatched, split_by_relkt=split)
        if not questions or not candidates:
            names = ", ".join(str(d.path) for d in datas) or "no files"
            raise DataError(f"empty pool ({len(questions)} questions, {len(candidates)} candidates) from {names}")
        return pool

    @classmethod
    def concat(cls, pools: Sequence[LareqaPool]) -> LareqaPool:
        """One pool of several sources' pools (a teacher's training folds and `data.more_qa`): candidates appended,
        gold re-indexed. Candidate ids count positions within a source, so the K-th pool's (K > 0) are marked
        `lang:K+...`; a question id two sources share would merge their gold: refused."""
        questions: list[Question] = []
        candidates: list[Candidate] = []
        gold: list[np.ndarray] = []
        for k, pool in enumerate(pools):
            gold.extend(g + len(candidates) for g in pool.gold)
            questions.extend(pool.questions)
            candidates.extend(
                replace(c, cid=f"{c.lang}:{k}+{c.cid.split(':', 1)[1]}") if k else c for c in pool.candidates
            )
        qids = [q.qid for q in questions]
        if len(set(qids)) < len(qids):
            twice = sorted({x for x, n in Counter(qids).items() if n > 1})
            raise DataError(f"two QA sources share the question id {twice[0]!r} ({len(twice)} ids in all)")
        split = any(pool.split_by_relkt for pool in pools)
        return cls(questions, candidates, gold, sum(pool.unmatched_answers for pool in pools), split)

    # ----- views -------------------------------------------------------------------------
    @property
    def question_langs(self) -> np.ndarray:
        return np.array([q.lang for q in self.questions])

    @property
    def candidate_langs(self) -> np.ndarray:
        return np.array([c.lang for c in self.candidates])

    @property
    def langs(self) -> list[str]:
        return sorted({q.lang for q in self.questions} | {c.lang for c in self.candidates})

    def question_texts(self) -> list[str]:
        return [q.text for q in self.questions]

    def candidate_texts(self, with_context: bool = False) -> list[str]:
        """Candidate encoder inputs: the sentence, or `sentence + " " + context` (LAReQA's option)."""
        if with_context:
            return [f"{c.sentence} {c.context}" for c in self.candidates]
        return [c.sentence for c in self.candidates]

    def queries(self) -> dict[str, str]:
        return {q.qid: q.text for q in self.questions}

    def corpus(self, with_context: bool = False) -> dict[str, str]:
        return dict(zip((c.cid for c in self.candidates), self.candidate_texts(with_context)))

    def relevant(self) -> dict[str, set[str]]:
        return {q.qid: {self.candidates[j].cid for j in g} for q, g in zip(self.questions, self.gold)}

    def subset(
        self, question_langs: Sequence[str] | None = None, candidate_langs: Sequence[str] | None = None
    ) -> LareqaPool:
        """A pool restricted to some question and/or candidate languages; gold is re-indexed."""
        q_keep = np.arange(len(self.questions))
        if question_langs is not None:
            q_keep = np.flatnonzero(np.isin(self.question_langs, list(question_langs)))
        c_keep = np.arange(len(self.candidates))
        if candidate_langs is not None:
            c_keep = np.flatnonzero(np.isin(self.candidate_langs, list(candidate_langs)))
        remap = np.full(len(self.candidates), -1, dtype=np.int64)
        remap[c_keep] = np.arange(len(c_keep))
        gold = [remap[self.gold[i]] for i in q_keep]
        return LareqaPool(
            questions=[self.questions[i] for i in q_keep],
            candidates=[self.candidates[j] for j in c_keep],
            gold=[g[g >= 0] for g in gold],
            unmatched_answers=self.unmatched_answers,
            split_by_relkt=self.split_by_relkt,
        )

    def to_passages(self) -> LareqaPool:
        """The same questions over paragraph candidates (CL-ReLKT's answer unit): a paragraph is
        gold when it holds a gold sentence. A candidate's `sentence` is the whole paragraph."""
        keys = [(c.lang, c.article, c.paragraph) for c in self.candidates]
        first: dict[tuple, int] = {}
        for j, key in enumerate(keys):
            first.setdefault(key, j)
        passage_of = {key: i for i, key in enumerate(first)}
        to_passage = np.array([passage_of[key] for key in keys], dtype=np.int64)
        passages = []
        for (lang, article, paragraph), j in first.items():
            c = self.candidates[j]
            passages.append(
                Candidate(
                    cid=f"{lang}:{c.cid.split(':')[1].rsplit('.', 1)[0]}",
                    lang=lang,
                    sentence=c.context,
                    context=c.context,
                    article=article,
                    paragraph=paragraph,
                    start=0,
                    end=len(c.context),
                )
            )
        gold = [np.unique(to_passage[g]) for g in self.gold]
        return LareqaPool(self.questions, passages, gold, self.unmatched_answers, self.split_by_relkt)

    def counts(self) -> dict[str, dict[str, int]]:
        """Per language: questions, candidates, and questions whose gold set misses a language."""
        out = {}
        n_langs = len({c.lang for c in self.candidates})
        for lang in self.langs:
            mask = self.question_langs == lang
            out[lang] = {
                "questions": int(mask.sum()),
                "candidates": int((self.candidate_langs == lang).sum()),
                "incomplete_gold": int(sum(len(self.gold[i]) < n_langs for i in np.flatnonzero(mask))),
            }
        return out
