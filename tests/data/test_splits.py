"""Split units: article, context, question. Each keeps a question id on one side in every language; the overlap a
unit lets into training is measured (figures worked out by hand); a leaking unit is refused unless asked for."""

import json

import pytest

from relkt.cli import evaluate
from relkt.config import PoolSection
from relkt.data import LareqaPool, QaSource, split_overlap, unit_split
from relkt.data.english_answer_units import EnglishAnswerUnits, english_units
from relkt.data.records import Question
from relkt.data.splits import SplitSide
from relkt.errors import ConfigError
from relkt.metrics import XxEnUnitEvaluator
from tests.helpers.fakes import LookupEncoder


def questions(n_articles=6, paragraphs=3, per_paragraph=2, langs=("en", "de")):
    """n_articles x paragraphs x per_paragraph question ids, each in every language."""
    out = []
    for a in range(n_articles):
        for p in range(paragraphs):
            for k in range(per_paragraph):
                out += [Question(f"a{a}p{p}q{k}", lang, f"{lang} text", f"A{a}", p, 0) for lang in langs]
    return out


@pytest.mark.parametrize("unit", ["article", "context", "question"])
@pytest.mark.parametrize("folds,fold", [(0, 0), (3, 1)])
def test_each_unit_keeps_a_question_id_on_one_side_in_every_language(unit, folds, fold):
    qs = questions()
    sides = unit_split(qs, unit, fractions=(0.6, 0.2, 0.2), seed=1, folds=folds, fold=fold)
    side_of = {}
    for q in qs:
        on = [s for s in ("train", "dev", "test") if sides[s].keeps_question(q)]
        assert len(on) == 1, (q, on)
        assert side_of.setdefault(q.qas_id, on[0]) == on[0]  # en and de on the same side
    assert all(sides["all"].keeps_question(q) for q in qs)
    assert {"train", "dev", "test"} == set(side_of.values())


def test_units_cut_at_their_grain():
    qs = questions()
    by = {u: unit_split(qs, u, fractions=(0.6, 0.2, 0.2), seed=0) for u in ("article", "context", "question")}
    test_articles = {q.article for q in qs if by["article"]["test"].keeps_question(q)}
    train_articles = {q.article for q in qs if by["article"]["train"].keeps_question(q)}
    assert test_articles and not test_articles & train_articles
    ctx = {(q.article, q.paragraph) for q in qs if by["context"]["test"].keeps_question(q)}
    assert ctx and not ctx & {(q.article, q.paragraph) for q in qs if by["context"]["train"].keeps_question(q)}
    # 36 question ids: a question cut puts 0.2 x 36 = 7 of them in test
    assert len({q.qas_id for q in qs if by["question"]["test"].keeps_question(q)}) == 7


def test_overlap_worked_out_by_hand():
    """Questions: x1, x2 in A#0; x3 in A#1; x4 in B#0. Train {x1, x3}, test {x2, x4} by question id.
    x2: its context A#0 holds x1 (trained) -> context overlap; its article A too. x4: B trains nothing -> neither.
    So context 1/2, article 1/2. A context split (train A#0 and A#1 contexts, test B#0) overlaps nothing; one that
    trains A#0 and tests A#1 overlaps in article (x3's A) only: context 0, article 1."""
    qs = [
        Question("x1", "en", "", "A", 0, 0),
        Question("x2", "en", "", "A", 0, 0),
        Question("x3", "en", "", "A", 1, 0),
        Question("x4", "en", "", "B", 0, 0),
    ]
    qs += [Question(q.qas_id, "de", "", q.article, q.paragraph, 0) for q in qs]  # the same ids in German count once
    by_question = split_overlap(qs, SplitSide.of("question", {"x1", "x3"}, qs), SplitSide.of("question", {"x2", "x4"}))
    assert by_question == {"test_questions": 2, "context": 0.5, "article": 0.5}
    clean = split_overlap(qs, SplitSide.of("context", {"A#0", "A#1"}), SplitSide.of("context", {"B#0"}))
    assert clean == {"test_questions": 1, "context": 0.0, "article": 0.0}
    same_article = split_overlap(qs, SplitSide.of("context", {"A#0"}), SplitSide.of("context", {"A#1"}))
    assert same_article == {"test_questions": 1, "context": 0.0, "article": 1.0}
    whole = split_overlap(qs, SplitSide.of("article", {"A"}), SplitSide.of("article", {"B"}))
    assert whole["context"] == whole["article"] == 0.0


def test_a_question_split_of_a_real_pool_keeps_test_contexts_as_candidates(tiny_data):
    source = QaSource.open(tiny_data)
    cut = {"fractions": (0.34, 0.33, 0.33), "seed": 0}
    test = LareqaPool.from_source(source, split="test", unit="question", **cut)
    train = LareqaPool.from_source(source, split="train", unit="question", **cut)
    assert not {q.qas_id for q in test.questions} & {q.qas_id for q in train.questions}
    # candidates: the sentences of the test questions' own paragraphs, in both languages, each with its gold
    assert {(c.article, c.paragraph) for c in test.candidates} == {(q.article, q.paragraph) for q in test.questions}
    assert all(len(g) == 2 for g in test.gold)


def test_a_leaking_unit_is_refused_unless_asked_for(tiny_data, tmp_path, capsys):
    for unit in ("context", "question"):
        with pytest.raises(ConfigError, match="allow_test_overlap"):
            PoolSection(split_unit=unit).validate()
        PoolSection(split_unit=unit, allow_test_overlap=True).validate()
    with pytest.raises(ConfigError, match="not a unit"):
        PoolSection(split_unit="sentence", allow_test_overlap=True).validate()
    out = tmp_path / "r.json"
    args = ["--encoder", "ngram", "--data-dir", str(tiny_data), "--split-unit", "question", "--output", str(out)]
    args += ["--split-fractions", "0.34,0.33,0.33", "--split-seed", "1", "--no-progress"]
    args += ["--xx-en-unit", "article,scored_article"]
    assert evaluate.main(args) == 2 and not out.exists()
    assert "allow_test_overlap" in capsys.readouterr().err
    assert evaluate.main(args + ["--allow-test-overlap"]) == 0
    cut = json.loads(out.read_text())["setup"]["split_cut"]
    assert cut["unit"] == "question" and cut["allow_test_overlap"] is True
    # seed 1 cuts the 6 ids into train {r1, b1}, dev {c1, b2}, test {c2, r2}. c2: no Cats question trains; r2: its
    # paragraph (Rivers#0) holds r1, trained. So context 1/2, article 1/2.
    sides = unit_split(
        [q for d in QaSource.open(tiny_data).read() for q in d.questions],
        "question",
        fractions=(0.34, 0.33, 0.33),
        seed=1,
    )
    assert sides["train"].keys == {"r1", "b1"} and sides["test"].keys == {"c2", "r2"}
    assert cut["test_questions"] == 2 and cut["overlap"] == {"context": 0.5, "article": 0.5}


def test_the_reference_pool_ranks_only_the_scored_questions_documents():
    """English articles A = [1, 0], B = [0, 1], C = [0.7, 0.7]; q1 -> A, q2 -> B, q3 -> C. Scored: q1, q2 in German.
    de:q1 = [0.6, 0.8]: against every article C (0.98) > B (0.8) > A (0.6): rank 3. Against the scored questions'
    documents A and B alone: B 0.8 > A 0.6: rank 2. de:q2 = [0.1, 0.9]: C 0.7 < B 0.9, rank 1 in both.
    So P@1 1/2 in both pools; MRR (1/3 + 1)/2 = 2/3 against every article, (1/2 + 1)/2 = 3/4 against A and B."""
    whole = EnglishAnswerUnits("article", ("A", "B", "C"), ("A", "B", "C"), {"q1": 0, "q2": 1, "q3": 2})
    scored = whole.restricted(["q1", "q2"])
    assert scored.unit == "scored_article" and scored.texts == ("A", "B") and scored.gold_of == {"q1": 0, "q2": 1}
    qs = [Question("q1", "de", "d1", "A", 0, 0), Question("q2", "de", "d2", "B", 0, 0)]
    table = {"A": [1, 0], "B": [0, 1], "C": [0.7, 0.7], "d1": [0.6, 0.8], "d2": [0.1, 0.9]}
    flat = XxEnUnitEvaluator(qs, {"article": whole, "scored_article": scored})(LookupEncoder(table))
    assert flat["xx_en_article/de/P@1"] == flat["xx_en_scored_article/de/P@1"] == 0.5
    assert flat["xx_en_article/de/MRR"] == pytest.approx(2 / 3)
    assert flat["xx_en_scored_article/de/MRR"] == pytest.approx(3 / 4)


def test_scored_units_need_the_scored_questions(tiny_data):
    source = QaSource.open(tiny_data)
    with pytest.raises(ConfigError, match="scored questions"):
        english_units(source, ["scored_paragraph"])
    units = english_units(source, ["paragraph", "scored_paragraph"], scored=["c1", "c2"])
    assert len(units["paragraph"].texts) == 3 and units["scored_paragraph"].names == ("Cats#0",)
