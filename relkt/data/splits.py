"""Deterministic splits of a QA source by a unit: the article (the default, so no paragraph of a test article is ever
trained on), the context (paragraph), or the question id (CL-ReLKT's reference code: a test question's own paragraph
is then a training positive). A question id is on the same side in every language whatever the unit."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from relkt.data.records import Candidate, Question
from relkt.errors import ConfigError

SPLITS = ("train", "dev", "test", "all")
# What a split keeps together (mirrored by relkt.config.sections.SPLIT_UNITS, which imports no data code).
SPLIT_UNITS = ("article", "context", "question")


def context_key(item: Question | Candidate) -> str:
    """A paragraph's key, the same in every language of a parallel source: `title#paragraph index`."""
    return f"{item.article}#{item.paragraph}"


def unit_key(unit: str, question: Question) -> str:
    """The key a question is split by: its article title, its context key or its qas_id."""
    if unit == "article":
        return question.article
    if unit == "context":
        return context_key(question)
    if unit == "question":
        return question.qas_id
    raise ConfigError(f"data.split_unit: unknown unit {unit!r}; valid: {', '.join(SPLIT_UNITS)}")


@dataclass(frozen=True)
class SplitSide:
    """One side of a split (train, dev, test or all): which questions and candidates it keeps.

    | unit     | a question is kept when       | a candidate is kept when                           |
    |----------|-------------------------------|----------------------------------------------------|
    | article  | its article is on this side   | its article is on this side                        |
    | context  | its paragraph is on this side | its paragraph is on this side                      |
    | question | its qas_id is on this side    | its paragraph holds a question kept on this side   |
    """

    unit: str
    keys: frozenset[str]
    contexts: frozenset[str] = frozenset()  # unit question: the paragraphs of the kept questions

    @classmethod
    def of(cls, unit: str, keys: Iterable[str], questions: Iterable[Question] = ()) -> SplitSide:
        keys = frozenset(keys)
        contexts = (
            frozenset(context_key(q) for q in questions if q.qas_id in keys) if unit == "question" else frozenset()
        )
        return cls(unit, keys, contexts)

    def keeps_question(self, q: Question) -> bool:
        return unit_key(self.unit, q) in self.keys

    def keeps_candidate(self, c: Candidate) -> bool:
        if self.unit == "article":
            return c.article in self.keys
        if self.unit == "context":
            return context_key(c) in self.keys
        return context_key(c) in self.contexts


def article_split(
    articles: list[str],
    fractions: tuple[float, float, float] = (0.7, 0.1, 0.2),
    seed: int = 0,
    folds: int = 0,
    fold: int = 0,
) -> dict[str, set[str]]:
    """Assign each key (article title, context key or qas_id) to train/dev/test: shuffle the sorted keys with `seed`,
    cut by `fractions`.

    Sorting first makes the split independent of file order and of which languages are loaded.
    Each split gets at least one key when there are enough keys.

    With `folds` = K > 1 (k-fold cross-validation) the shuffled keys are cut into K folds of near-equal size;
    fold `fold` is test, and dev is carved from the other folds' keys in the ratio of the dev and train
    fractions (at least one), so across the K folds every key is test exactly once.
    """
    if len(fractions) != 3 or any(f < 0 for f in fractions) or abs(sum(fractions) - 1) > 1e-6:
        raise ConfigError(f"split fractions must be three non-negative numbers summing to 1, got {fractions}")
    titles = sorted(set(articles))
    order = np.random.default_rng(seed).permutation(len(titles))
    if folds:
        return _fold_split([titles[i] for i in order], fractions, folds, fold)
    n = len(titles)
    n_train = int(round(fractions[0] * n))
    n_dev = int(round(fractions[1] * n))
    if n >= 3:  # keep every non-empty fraction non-empty
        n_dev = max(n_dev, 1 if fractions[1] > 0 else 0)
        n_test = max(n - n_train - n_dev, 1 if fractions[2] > 0 else 0)
        n_train = n - n_dev - n_test
    shuffled = [titles[i] for i in order]
    return {
        "train": set(shuffled[:n_train]),
        "dev": set(shuffled[n_train : n_train + n_dev]),
        "test": set(shuffled[n_train + n_dev :]),
        "all": set(titles),
    }


def unit_split(questions: list[Question], unit: str = "article", **cut) -> dict[str, SplitSide]:
    """Every side of the split of `questions` by `unit` (`cut`: `article_split`'s fractions, seed, folds, fold)."""
    keys = article_split([unit_key(unit, q) for q in questions], **cut)
    sides = {side: SplitSide.of(unit, ks, questions) for side, ks in keys.items()}
    sides["all"] = SplitSide.of("article", {q.article for q in questions})  # the whole source, whatever the unit
    return sides


def split_overlap(questions: list[Question], train: SplitSide, test: SplitSide) -> dict[str, float | int]:
    """What a split lets into training, measured: the share of test questions (distinct qas_ids) whose context, and
    whose article, is also the context or article of a training question (0 and 0 for an article split)."""
    trained = [q for q in questions if train.keeps_question(q)]
    train_contexts = {context_key(q) for q in trained}
    train_articles = {q.article for q in trained}
    tested = {q.qas_id: q for q in questions if test.keeps_question(q)}
    n = len(tested)
    in_context = sum(context_key(q) in train_contexts for q in tested.values())
    in_article = sum(q.article in train_articles for q in tested.values())
    return {
        "test_questions": n,
        "context": in_context / n if n else 0.0,
        "article": in_article / n if n else 0.0,
    }


def _fold_split(
    shuffled: list[str], fractions: tuple[float, float, float], folds: int, fold: int
) -> dict[str, set[str]]:
    if folds < 2 or not 0 <= fold < folds:
        raise ConfigError(f"k-fold split: need folds >= 2 and 0 <= fold < folds, got folds={folds}, fold={fold}")
    if len(shuffled) < folds + 1:
        raise ConfigError(f"k-fold split: {len(shuffled)} units cannot make {folds} test folds and a train split")
    bounds = np.linspace(0, len(shuffled), folds + 1).round().astype(int)
    test = shuffled[bounds[fold] : bounds[fold + 1]]
    rest = shuffled[: bounds[fold]] + shuffled[bounds[fold + 1] :]
    dev_share = fractions[1] / max(fractions[0] + fractions[1], 1e-12)
    n_dev = max(int(round(dev_share * len(rest))), 1 if fractions[1] > 0 else 0)
    n_dev = min(n_dev, len(rest) - 1)
    return {"train": set(rest[n_dev:]), "dev": set(rest[:n_dev]), "test": set(test), "all": set(shuffled)}
