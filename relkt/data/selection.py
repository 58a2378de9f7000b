"""Which questions and candidates a stage trains and evaluates on: every selection of the pool a run makes,
read off its config's `data` and `eval` sections (never the whole config), in one place. The sections are typed by
what is read of them (the protocols below: relkt.data imports no config code; relkt.config's sections have these
fields)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from relkt.data.lareqa_pool import LareqaPool
from relkt.data.parallel_corpus import pair_languages
from relkt.data.qa_source import QaSource
from relkt.data.sources import resolve_data_dir
from relkt.data.splits import split_overlap, unit_split
from relkt.data.unseen import check_unseen
from relkt.errors import ConfigError
from relkt.names import ALL, chosen, named

log = logging.getLogger(__name__)


class PoolSettings(Protocol):
    """Which source and split (relkt.config.PoolSection)."""

    data_dir: str | None
    format: str
    test_dir: str | None
    test_format: str
    split_fractions: Sequence[float]
    split_seed: int
    split_unit: str
    allow_test_overlap: bool
    folds: int
    fold: int
    with_context: bool
    max_train_questions: int


class StageData(PoolSettings, Protocol):
    """A stage's `data` section: the pool's settings and the languages it trains (teacher or student)."""

    source_lang: str


class EvalSettings(Protocol):
    """The `eval` section: what dev scores (relkt.config.EvalSection)."""

    langs: Any
    question_langs: Any
    max_questions: int
    xx_en_units: Sequence[str]


def sample_questions(pool: LareqaPool, n: int, seed: int) -> LareqaPool:
    """Keep `n` questions drawn at random (seeded); all candidates stay."""
    if n <= 0 or n >= len(pool.questions):
        return pool
    keep = np.sort(np.random.default_rng(seed).choice(len(pool.questions), n, replace=False))
    return LareqaPool(
        [pool.questions[i] for i in keep], pool.candidates, [pool.gold[i] for i in keep], pool.unmatched_answers
    )


def train_source(data: PoolSettings, download: bool = True) -> QaSource:
    """The training source: `data.data_dir` (else $RELKT_DATA_DIR, the cache, a download) read as `data.format`."""
    return QaSource.open(resolve_data_dir(data.data_dir, download=download), getattr(data, "format", "auto"))


def test_source(data: PoolSettings) -> QaSource | None:
    """`data.test_dir` read as `data.test_format`, or None: the test split of the training source."""
    return QaSource.open(data.test_dir, data.test_format) if getattr(data, "test_dir", "") else None


def test_sources(data: PoolSettings) -> list[QaSource]:
    """Every test source: `data.test_dir` (as `data.test_format`) then each of `data.more_test` (format auto)."""
    first = test_source(data)
    return [first, *(QaSource.open(path) for path in getattr(data, "more_test", []))] if first else []


def scored_source(data: PoolSettings, split: str) -> tuple[QaSource, str]:
    """The source a split is read from, and the split within it: `test` with a test source is all of that source."""
    test = test_source(data) if split == "test" else None
    return (test, "all") if test is not None else (train_source(data), split)


def load_split(data: PoolSettings, split: str, langs=None) -> LareqaPool:
    """The pool of one split, as a config's (or CLI's) `data` settings cut it. The test split of a run with a test
    source is that source whole, refused if it shares an article, context or question id with the training source."""
    source, within = scored_source(data, split)
    if within == split:
        return LareqaPool.from_source(
            source,
            langs=langs,
            split=split,
            fractions=tuple(data.split_fractions),
            seed=data.split_seed,
            folds=data.folds,
            fold=data.fold,
            unit=getattr(data, "split_unit", "article"),
        )
    tested, train = source.read(langs), train_source(data)
    check_unseen(train.read(), tested, str(train.path), str(source.path))
    return LareqaPool.from_language_data(tested)


def measured_split(data: PoolSettings, langs=None) -> dict[str, Any]:
    """The split a run's `data` settings cut, as every result states it: the unit, and the share of test questions
    whose context and whose article a training question shares (`relkt.data.splits.split_overlap`), measured on the
    languages `langs` (None: all) that the run's pools are cut from; 0 and 0 by construction for an article split and
    with a separate test source (`check_unseen` keeps it apart), where nothing is read."""
    unit = getattr(data, "split_unit", "article")
    out: dict[str, Any] = {"unit": unit, "allow_test_overlap": bool(getattr(data, "allow_test_overlap", False))}
    if test_source(data) is not None:
        return out | {"test_source": data.test_dir, "overlap": {"context": 0.0, "article": 0.0}}
    if unit == "article":
        return out | {"overlap": {"context": 0.0, "article": 0.0}}
    questions = [q for d in train_source(data).read(langs) for q in d.questions]
    sides = unit_split(
        questions,
        unit,
        fractions=tuple(data.split_fractions),
        seed=data.split_seed,
        folds=data.folds,
        fold=data.fold,
    )
    overlap = split_overlap(questions, sides["train"], sides["test"])
    dev = split_overlap(questions, sides["train"], sides["dev"])
    return out | {
        "test_questions": overlap["test_questions"],
        "overlap": {"context": overlap["context"], "article": overlap["article"]},
        "dev_overlap": {"context": dev["context"], "article": dev["article"]},
    }


def check_test_source(data: PoolSettings) -> None:
    """A run with `data.test_dir` is refused at its start, not when it is scored, if the test source shares an
    article, context or question id with the training source (relkt.data.unseen). A split that lets test questions'
    contexts or articles train (data.split_unit, allowed by data.allow_test_overlap) is said, with its measure."""
    if getattr(data, "split_unit", "article") != "article":
        cut = measured_split(data, pool_langs(data))
        if "test_questions" in cut:
            log.warning(
                "data.split_unit %s: %.1f%% of the test questions' contexts and %.1f%% of their articles are in "
                "training (data.allow_test_overlap); its test scores are not of unseen text",
                cut["unit"],
                100 * cut["overlap"]["context"],
                100 * cut["overlap"]["article"],
            )
    tests = test_sources(data)
    if tests:
        train = train_source(data)
        seen = train.read()
        for test in tests:
            check_unseen(seen, test.read(), str(train.path), str(test.path))


def more_qa_sources(data: PoolSettings) -> list[QaSource]:
    """The teacher's `data.more_qa` sources, opened (none for a student's data)."""
    return [QaSource.open(path) for path in getattr(data, "more_qa", [])]


def more_qa_pools(data: PoolSettings) -> list[LareqaPool]:
    """Each `data.more_qa` source whole, its `data.train_langs` questions against its `data.answer_langs`
    candidates; refused if it shares an article, context or question id with the training source (whose dev and
    test come from it) or the test source, or holds no train_langs question."""
    pools = []
    for source in more_qa_sources(data):
        langs = [x for x in pool_langs(data) or [] if x in source.languages()]
        if not set(langs) & set(data.train_langs):
            raise ConfigError(
                f"data.more_qa: {source.path} holds no {', '.join(data.train_langs)} questions (data.train_langs); "
                f"it holds {', '.join(source.languages())}"
            )
        extra = source.read(langs)
        tests = [(f"data.{'test_dir' if k == 0 else 'more_test'}", t) for k, t in enumerate(test_sources(data))]
        for key, held in [("data.data_dir", train_source(data, download=False)), *tests]:
            if held is not None:
                check_unseen(
                    extra,
                    held.read(),
                    f"{source.path} (data.more_qa)",
                    f"{held.path} ({key})",
                    fix="data.more_qa trains on every question it holds; remove the shared ones from one side",
                )
        pools.append(LareqaPool.from_language_data(extra).subset(data.train_langs, data.answer_langs))
    return pools


def pool_langs(data: PoolSettings) -> list[str] | None:
    """The languages a stage's training pool is cut from: a teacher's train and answer languages, a student's all."""
    return sorted(set(data.train_langs) | set(data.answer_langs)) if hasattr(data, "train_langs") else None


def teacher_pool(data: PoolSettings, seed: int) -> LareqaPool:
    """The teacher's training pool: `data.train_langs` questions against `data.answer_langs` candidates of the
    train split (as passages with `answer_unit: passage`), `data.max_train_questions` of them if set."""
    check_test_source(data)
    pool = load_split(data, "train", langs=pool_langs(data))
    pool = pool.subset(question_langs=data.train_langs, candidate_langs=data.answer_langs)
    pool = LareqaPool.concat([pool, *more_qa_pools(data)])
    if data.answer_unit == "passage":
        pool = pool.to_passages()
    if not any(len(g) for g in pool.gold):
        raise ConfigError(
            f"data.train_langs / data.answer_langs: no training anchors: no {data.train_langs} question "
            f"of the train split has an answer in {data.answer_langs}"
        )
    return sample_questions(pool, data.max_train_questions, seed)


def student_pool(data: StageData, seed: int) -> tuple[LareqaPool, list[str], list[str], list[str]]:
    """The student's training pool, the languages its QA examples come from, every student language, and every
    training text of those languages (what vocabulary extension reads: all of them, not just the sampled questions).

    A student language needs no QA file: one the QA source lacks learns from its pairs in `data.corpus_dir` alone, and
    the source language's own QA examples (q_en, q_en, d) then give the d and dq terms their documents. With
    `data.max_train_questions`, N source questions are drawn and each keeps its translations."""
    check_test_source(data)
    pool = load_split(data, "train")
    langs = chosen(data.student_langs, pool.langs)
    if data.source_lang not in pool.langs:
        raise ConfigError(
            f"data.source_lang: no {data.source_lang} data in the training source (it holds {', '.join(pool.langs)})"
        )
    for key in ("romanize_langs", "translate_langs", "code_switch_langs", "corpus_langs"):
        outside = [x for x in named(getattr(data, key)) or [] if x not in langs]
        if outside:  # a code no student language has (a typo, `qq`) would be ignored
            raise ConfigError(
                f"data.{key}: {', '.join(outside)} is not a student language ({', '.join(langs)}"
                f"{': every language of the training source' if data.student_langs == ALL else ''}); add it to "
                "data.student_langs or drop it"
            )
    outside = [x for x in getattr(data, "corpus_other_domain", {}) if x not in langs]
    if outside:
        raise ConfigError(
            f"data.corpus_other_domain: {', '.join(outside)} is not a student language ({', '.join(langs)}); "
            "add it to data.student_langs or drop it"
        )
    qa_langs = [x for x in langs if x in pool.langs] if data.parallel == "dataset" else list(langs)
    pairs_only = [x for x in langs if x not in qa_langs]
    if pairs_only:
        have = (pair_languages(data.corpus_dir) if data.corpus_dir else []) + [
            x for folder in data.more_pairs for x in pair_languages(folder)
        ]
        missing = [x for x in pairs_only if x not in have and x not in data.code_switch_langs]
        if missing:
            where = (
                f"nor pairs in data.corpus_dir ({data.corpus_dir})"
                if data.corpus_dir
                else "and no data.corpus_dir is set"
            )
            raise ConfigError(
                f"data.student_langs: no data for {', '.join(missing)}: no QA data in the training source "
                f"(it holds {', '.join(pool.langs)}) {where}"
            )
        qa_langs = sorted(set(qa_langs) | {data.source_lang})
    keep = sorted(set(qa_langs) | {data.source_lang}) if data.parallel == "dataset" else [data.source_lang]
    pool = pool.subset(question_langs=keep, candidate_langs=keep)
    language_texts = sorted(set(pool.question_texts()) | set(pool.candidate_texts(data.with_context)))
    if data.max_train_questions:
        sources = pool.subset(question_langs=[data.source_lang], candidate_langs=keep)
        keep_ids = {q.qas_id for q in sample_questions(sources, data.max_train_questions, seed).questions}
        idx = [i for i, q in enumerate(pool.questions) if q.qas_id in keep_ids]
        pool = LareqaPool([pool.questions[i] for i in idx], pool.candidates, [pool.gold[i] for i in idx])
    return pool, qa_langs, list(langs), language_texts


def dev_pool(data: PoolSettings, eval: EvalSettings, seed: int) -> LareqaPool:  # noqa: A002 (the section's name)
    """The dev split a run evaluates on: `eval.langs` (the questions of `eval.question_langs` alone, when set),
    passages for a passage teacher, `eval.max_questions`."""
    pool = load_split(data, "dev", langs=named(eval.langs))
    if eval.question_langs != ALL:
        pool = pool.subset(question_langs=eval.question_langs)
    if getattr(data, "answer_unit", "sentence") == "passage":
        pool = pool.to_passages()
    return sample_questions(pool, eval.max_questions, seed)


def languages_read(data: PoolSettings, eval: EvalSettings) -> set[str] | None:  # noqa: A002
    """The languages whose files a run reads (None: every file of the folder): what its fingerprints must cover,
    and no more (a file it never reads cannot change its result). A teacher reads its train and answer languages,
    its dev languages (all when `eval.langs` says all) and English for `eval.xx_en_units`; a student reads all."""
    if not hasattr(data, "train_langs") or eval.langs == ALL:
        return None
    return set(data.train_langs) | set(data.answer_langs) | set(eval.langs) | ({"en"} if eval.xx_en_units else set())
