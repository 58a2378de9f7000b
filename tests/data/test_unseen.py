"""A test source apart from the training source: scored whole, refused when it shares what a leak shares."""

import json

import pytest

from relkt.config.sections import PoolSection
from relkt.config.student_config import StudentDataSection
from relkt.data.selection import load_split, student_pool
from relkt.errors import ConfigError, DataError
from tests.helpers.data import ARTICLES, squad_json


def english_only(tmp_path, name, articles):
    folder = tmp_path / name
    folder.mkdir()
    doc = squad_json("en")
    doc["data"] = [a for a in doc["data"] if a["title"] in articles]
    (folder / "en.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


def other_articles(tmp_path):
    """The fixture's English articles under other titles, ids and contexts: a training source sharing nothing."""
    folder = english_only(tmp_path, "other", {"Cats", "Rivers", "Bread"})
    doc = json.loads((folder / "en.json").read_text())
    for article in doc["data"]:
        article["title"] = "Old " + article["title"]
        for paragraph in article["paragraphs"]:
            paragraph["context"] += " Then more."
            paragraph["sentences"].append("Then more.")
            paragraph["sentence_breaks"].append([len(paragraph["context"]) - 10, len(paragraph["context"])])
            for qa in paragraph["qas"]:
                qa["id"] = "old-" + qa["id"]
    (folder / "en.json").write_text(json.dumps(doc), encoding="utf-8")
    return folder


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
