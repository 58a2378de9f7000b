"""A test source apart from the training source: scored whole, refused when it shares what a leak shares."""

import json

import pytest

from relkt.config.sections import DataSection, PoolSection
from relkt.config.student_config import StudentDataSection
from relkt.data.selection import load_split, student_pool, teacher_pool
from relkt.errors import ConfigError, DataError
from tests.helpers.data import ARTICLES, english_only, other_articles


def test_the_test_source_is_scored_whole_and_dev_comes_from_training(tiny_data, tmp_path):
    train = other_articles(tmp_path)
    data = PoolSection(data_dir=str(train), test_dir=str(tiny_data), split_fractions=[0.7, 0.3, 0.0])
    test = load_split(data, "test")
    # Three articles in two languages: every question, which no article split of the training source could give.
    assert len(test.questions) == 12 and test.langs == ["de", "en"]
    dev = load_split(data, "dev")
    assert dev.langs == ["en"] and {q.article for q in dev.questions} < {"Old Cats", "Old Rivers", "Old Bread"}


def test_overlap_with_the_training_source_is_refused_naming_it(tiny_data, tmp_path):
    train = english_only(tmp_path, "train", {"Rivers"})
    with pytest.raises(
        DataError,
        match=r"test source .*xquad-r: article 'Rivers' \(.*\.json\) also occurs in the "
        r"training source .*train \(.*en.json\); a test set must be unseen",
    ):
        load_split(PoolSection(data_dir=str(train), test_dir=str(tiny_data)), "test")
    # A question id alone is a leak too: the same id under another title.
    doc = json.loads((train / "en.json").read_text())
    doc["data"][0]["title"] = "Streams"
    doc["data"][0]["paragraphs"][0]["context"] += " Boats sail on it."
    (train / "en.json").write_text(json.dumps(doc))
    with pytest.raises(DataError, match=r"question id 'r1'"):
        load_split(PoolSection(data_dir=str(train), test_dir=str(tiny_data)), "test")


def test_a_student_language_without_qa_data_learns_from_pairs(tmp_path):
    train = english_only(tmp_path, "train", {"Cats", "Rivers", "Bread"})
    pairs = tmp_path / "pairs"
    pairs.mkdir()
    (pairs / "fi.tsv").write_text("source\ten\txx\nt\tHello.\tHei.\nt\tThanks.\tKiitos.\n", encoding="utf-8")
    data = StudentDataSection(
        data_dir=str(train), split_fractions=[1.0, 0.0, 0.0], student_langs=["fi"], corpus_dir=str(pairs)
    )
    pool, qa_langs, langs, _ = student_pool(data, seed=0)
    # Finnish has no QA file: its pairs teach it; the English questions give the d and dq terms their documents.
    assert qa_langs == ["en"] and langs == ["fi"] and pool.langs == ["en"]
    with pytest.raises(
        ConfigError,
        match=r"no data for sw: no QA data in the training source \(it holds en\) nor pairs "
        r"in data.corpus_dir",
    ):
        student_pool(StudentDataSection(data_dir=str(train), student_langs=["fi", "sw"], corpus_dir=str(pairs)), 0)
    with pytest.raises(ConfigError, match="no data for fi: .* and no data.corpus_dir is set"):
        student_pool(StudentDataSection(data_dir=str(train), student_langs=["fi"]), 0)


def test_languages_of_the_test_fixture():
    assert sorted(ARTICLES) == ["de", "en"]  # what the counts above assume


def test_more_qa_trains_every_question_it_holds_and_nothing_it_shares(tiny_data, tmp_path):
    more = other_articles(tmp_path)  # "Old Cats", "Old Rivers", "Old Bread": 6 English questions
    base = {"data_dir": str(tiny_data), "split_fractions": [0.7, 0.3, 0.0]}
    alone = teacher_pool(DataSection(**base), seed=0)
    both = teacher_pool(DataSection(**base, more_qa=[str(more)]), seed=0)
    added = both.questions[len(alone.questions) :]
    assert both.questions[: len(alone.questions)] == alone.questions
    assert len(added) == 6 and {q.article for q in added} == {"Old Cats", "Old Rivers", "Old Bread"}
    # Each added question's gold is its own sentence in its own article ("What do cats hunt?": the mice sentence).
    hunt = next(i for i, q in enumerate(both.questions) if q.qas_id == "old-c2")
    assert [both.candidates[j].sentence for j in both.gold[hunt]] == ["They hunt mice at night."]
    assert both.candidates[both.gold[hunt][0]].article == "Old Cats"
    # Dev and test come from data_dir alone.
    dev = load_split(DataSection(**base, more_qa=[str(more)]), "dev")
    assert not {q.article for q in dev.questions} & {"Old Cats", "Old Rivers", "Old Bread"}


def test_more_qa_that_shares_an_article_or_lacks_the_question_languages_is_refused(tiny_data, tmp_path):
    leak = english_only(tmp_path, "leak", {"Rivers"})
    with pytest.raises(
        DataError,
        match=r"test source .*xquad-r \(data.data_dir\): article 'Rivers' .* also occurs in the training source "
        r".*leak \(data.more_qa\) .*: data.more_qa trains on every question it holds",
    ):
        teacher_pool(DataSection(data_dir=str(tiny_data), more_qa=[str(leak)]), seed=0)
    more = other_articles(tmp_path)
    with pytest.raises(
        ConfigError, match=r"data.more_qa: .*other holds no de questions \(data.train_langs\); it holds en"
    ):
        teacher_pool(DataSection(data_dir=str(tiny_data), train_langs=["de"], more_qa=[str(more)]), seed=0)
    with pytest.raises(ConfigError, match=r"data.more_qa: a list of QA folders or files, got ''"):
        DataSection(more_qa="").validate()
