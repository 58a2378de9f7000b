"""Questions written in a student language, with no English twin: ARCD, CMRC, iApp, TQuAD, MLQA test's
cross-language files (`data.native_qa`). Such a question has nothing for the q term's teacher side, T(q_en); its
answer sentence stands in: the teacher's embedding of it is the target of the student's question (the dq term, and
the q term with the document in q_en's place), and the document term puts the student's reading of the question's
own-language answer sentence on it. The teacher reads that sentence where it reads the language; for a taught
language (one it does not read) it reads the answer's twin in a language it does (MLQA's answer sentences are
parallel across languages by question id), so where the user has passages in L the document term teaches the
student to read them; without a twin, the own-language sentence is both sides.

A source is read whole, refused if it shares an article, context or question id with the training source or a test
source (`data.test_dir`, `data.more_test`; `relkt.data.unseen.check_unseen`, naming both), and drawn per language
with the run's seed."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from relkt.data.lareqa_pool import LareqaPool
from relkt.data.parallel import ParallelExamples
from relkt.data.qa_source import QaSource
from relkt.data.records import LanguageData
from relkt.data.selection import test_sources, train_source
from relkt.data.unseen import check_unseen
from relkt.errors import ConfigError, DataError

FIX = "data.native_qa trains on every question it holds; remove the shared ones from one side, or drop the source"


def native_sources(data: Any) -> list[QaSource]:
    """Each `data.native_qa` source, opened, in the config's order."""
    return [QaSource.open(path) for path in getattr(data, "native_qa", {})]


def native_fingerprint_files(data: Any) -> dict[str, Path]:
    """Every file the native sources read, by `native_qa/K/NAME` (what a resumed run must find again)."""
    sources = enumerate(native_sources(data))
    return {f"native_qa/{k}/{name}": path for k, source in sources for name, path in source.files().items()}


def native_examples(data: Any, langs: Sequence[str], seed: int, taught: Sequence[str] = ()) -> ParallelExamples:
    """The rows of `data.native_qa` (a StudentDataSection's: source -> questions drawn per language, 0 = all) for
    the student languages `langs` other than `data.source_lang`: (target, question, target, own-language document),
    the target a gold sentence the teacher reads (`taught`: the languages it does not)."""
    tests = [(f"data.{'test_dir' if k == 0 else 'more_test'}", t) for k, t in enumerate(test_sources(data))]
    held = [
        (key, source, source.read())
        for key, source in [("data.data_dir", train_source(data, download=False)), *tests]
        if source is not None
    ]
    out = ParallelExamples()
    for k, (source, share) in enumerate(zip(native_sources(data), data.native_qa.values())):
        name = f"data.native_qa.{source.path}"
        wanted = [x for x in source.languages() if x in langs and x != data.source_lang]
        if not wanted:
            raise ConfigError(
                f"{name}: holds questions in {', '.join(source.languages())}, none a student language "
                f"({', '.join(langs)}) other than the source language {data.source_lang}"
            )
        datas = source.read()
        for key, other, other_datas in held:
            check_unseen(datas, other_datas, f"{source.path} (data.native_qa)", f"{other.path} ({key})", fix=FIX)
        rows = _rows(datas, wanted, share, seed + k, data.with_context, set(taught))
        if not len(rows):
            raise DataError(f"{name}: no question in {', '.join(wanted)} has a gold answer sentence to train on")
        out.extend(rows)
    return out


def _rows(
    datas: list[LanguageData], langs: list[str], share: int, seed: int, with_context: bool, taught: set[str]
) -> ParallelExamples:
    pool = LareqaPool.from_language_data(datas)
    texts = pool.candidate_texts(with_context)
    rng = np.random.default_rng(seed)
    out = ParallelExamples()
    for lang in langs:
        answered = [i for i, q in enumerate(pool.questions) if q.lang == lang and len(pool.gold[i])]
        if share:
            answered = sorted(rng.permutation(answered)[:share].tolist())
        for i in answered:
            question, gold = pool.questions[i], pool.gold[i]
            own = [j for j in gold if pool.candidates[j].lang == lang]
            read = [j for j in gold if pool.candidates[j].lang not in taught]
            target = texts[(([] if lang in taught else own) + read + list(gold))[0]]
            document = texts[own[0]] if own else target
            out.append(target, question.text, target, document, lang, f"native:{question.qid}")
    return out
