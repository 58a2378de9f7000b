import json

import numpy as np
import pytest

from relkt.data import LareqaPool, article_split
from relkt.errors import ConfigError, DataError

TABLE_1_CANDIDATES = {
    "ar": 1222,
    "de": 1276,
    "el": 1234,
    "en": 1180,
    "es": 1215,
    "hi": 1244,
    "ru": 1219,
    "th": 852,
    "tr": 1167,
    "vi": 1209,
    "zh": 1196,
}


def test_gold_answers_span_every_language(tiny_data):
    pool = LareqaPool.load(tiny_data)
    assert len(pool.questions) == 12 and len(pool.candidates) == 12
    relevant = pool.relevant()
    # "What do cats hunt?" (c2): sentence 1 of the Cats paragraph, in English and in German.
    assert relevant["en:c2"] == {"en:0.0.1", "de:0.0.1"} == relevant["de:c2"]
    assert {
        pool.candidates[j].sentence
        for j in pool.gold[pool.questions.index(next(q for q in pool.questions if q.qid == "de:c2"))]
    } == {"They hunt mice at night.", "Sie jagen nachts Mäuse."}


def test_subset_reindexes_gold(tiny_data):
    pool = LareqaPool.load(tiny_data)
    de_to_en = pool.subset(question_langs=["de"], candidate_langs=["en"])
    assert {q.lang for q in de_to_en.questions} == {"de"} and {c.lang for c in de_to_en.candidates} == {"en"}
    for q, g in zip(de_to_en.questions, de_to_en.gold):
        assert len(g) == 1
        assert de_to_en.candidates[g[0]].cid in pool.relevant()[q.qid]


def test_concat_keeps_each_sources_gold_and_refuses_a_shared_question_id(tiny_data):
    pool = LareqaPool.load(tiny_data)
    en, de = pool.subset(["en"], ["en"]), pool.subset(["de"], ["de"])
    both = LareqaPool.concat([en, de])
    # German's candidates come after English's 6: its gold moves by 6, and its candidate ids are marked as the
    # second source's (each source counts `article.paragraph.sentence` from 0).
    assert len(both.candidates) == 12 and both.candidates[6].cid == "de:1+" + de.candidates[0].cid.split(":")[1]
    for source in (en, de):
        for q, g in zip(source.questions, source.gold):
            mine = both.gold[both.questions.index(q)]
            assert [both.candidates[j].sentence for j in mine] == [source.candidates[j].sentence for j in g]
            assert len(g) == 1  # one language each: one gold sentence
    with pytest.raises(DataError, match=r"two QA sources share the question id 'en:b1' \(6 ids in all\)"):
        LareqaPool.concat([en, en])


def test_unknown_language_lists_available(tiny_data):
    with pytest.raises(DataError, match="no data for language.*xx.*available: de, en"):
        LareqaPool.load(tiny_data, langs=["en", "xx"])


def test_unknown_split_lists_valid(tiny_data):
    with pytest.raises(ConfigError, match="valid: train, dev, test, all"):
        LareqaPool.load(tiny_data, split="validation")


def test_missing_data_dir_is_named(tmp_path):
    with pytest.raises(DataError, match="nowhere does not exist"):
        LareqaPool.load(tmp_path / "nowhere")


def test_empty_pool_is_an_error(tmp_path):
    (tmp_path / "en.json").write_text('{"data": []}')
    with pytest.raises(DataError, match=r"en\.json: no paragraphs with context"):
        LareqaPool.load(tmp_path)


def test_a_language_file_without_questions_is_an_error_naming_it(tiny_data):
    # Left in the pool as non-gold candidates it would move every other language's scores (de mAP 12.45 -> 17.12
    # on XQuAD-R with es emptied), and its own row would silently vanish from the table.
    doc = json.loads((tiny_data / "de.json").read_text())
    for article in doc["data"]:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = []
    (tiny_data / "de.json").write_text(json.dumps(doc))
    with pytest.raises(DataError, match=r"de\.json: no questions \(every qas list is empty\)"):
        LareqaPool.load(tiny_data)
    LareqaPool.load(tiny_data, langs=["en"])  # a file the caller does not ask for is not read


def test_article_split_is_deterministic_disjoint_and_complete():
    titles = [f"article{i}" for i in range(48)]
    a = article_split(titles, (0.7, 0.1, 0.2), seed=0)
    assert a == article_split(list(reversed(titles)), (0.7, 0.1, 0.2), seed=0)
    assert a != article_split(titles, (0.7, 0.1, 0.2), seed=1)
    assert (len(a["train"]), len(a["dev"]), len(a["test"])) == (34, 5, 9)
    assert not (a["train"] & a["dev"]) and not (a["train"] & a["test"]) and not (a["dev"] & a["test"])
    assert a["train"] | a["dev"] | a["test"] == a["all"] == set(titles)
    with pytest.raises(ConfigError, match="summing to 1"):
        article_split(titles, (0.5, 0.1, 0.1))


def test_k_fold_splits_test_every_article_exactly_once():
    titles = [f"t{i:02d}" for i in range(48)]
    splits = [article_split(titles, (0.7, 0.1, 0.2), seed=3, folds=5, fold=k) for k in range(5)]
    tests = [s["test"] for s in splits]
    assert sorted(t for fold in tests for t in fold) == sorted(titles)  # every article test once, never twice
    assert sorted(len(t) for t in tests) == [9, 9, 10, 10, 10]
    for s in splits:
        assert not (s["train"] & s["dev"]) and not (s["train"] & s["test"]) and not (s["dev"] & s["test"])
        assert s["train"] | s["dev"] | s["test"] == set(titles)
        assert len(s["dev"]) == round(len(s["train"] | s["dev"]) / 8)  # dev:train = 0.1:0.7 of the other folds
    assert splits[2] == article_split(list(reversed(titles)), (0.7, 0.1, 0.2), seed=3, folds=5, fold=2)
    assert splits[2] != article_split(titles, (0.7, 0.1, 0.2), seed=4, folds=5, fold=2)


@pytest.mark.parametrize("folds,fold", [(1, 0), (5, 5), (5, -1), (48, 0)])
def test_k_fold_bad_settings_are_config_errors(folds, fold):
    with pytest.raises(ConfigError, match="k-fold split"):
        article_split([f"t{i}" for i in range(48)], folds=folds, fold=fold)


def test_pool_loads_one_fold(tiny_data):
    test = LareqaPool.load(tiny_data, split="test", folds=2, fold=1)
    train = LareqaPool.load(tiny_data, split="train", folds=2, fold=1)
    dev = LareqaPool.load(tiny_data, split="dev", folds=2, fold=1)
    articles = lambda pool: {q.article for q in pool.questions}  # noqa: E731
    assert len(articles(test)) == len(articles(dev)) == len(articles(train)) == 1
    assert articles(test) | articles(dev) | articles(train) == {"Cats", "Rivers", "Bread"}


def test_splits_keep_whole_articles(tiny_data):
    pools = {s: LareqaPool.load(tiny_data, split=s, fractions=(0.34, 0.33, 0.33)) for s in ("train", "dev", "test")}
    articles = {s: {q.article for q in p.questions} | {c.article for c in p.candidates} for s, p in pools.items()}
    assert all(len(a) == 1 for a in articles.values())
    assert len(set.union(*articles.values())) == 3


def test_xquad_r_matches_lareqa_table_1(shared_xquad_r):
    pool = LareqaPool.load(shared_xquad_r)
    counts = pool.counts()
    assert {lang: c["questions"] for lang, c in counts.items()} == {lang: 1190 for lang in TABLE_1_CANDIDATES}
    assert {lang: c["candidates"] for lang, c in counts.items()} == TABLE_1_CANDIDATES
    assert (len(pool.questions), len(pool.candidates)) == (13090, 13014)
    n_gold = np.array([len(g) for g in pool.gold])
    assert (n_gold == 11).mean() > 0.99 and pool.unmatched_answers == 0
    # Every gold candidate of a question holds that question's answer in its own language.
    en = pool.subset(question_langs=["en"])
    assert all({en.candidates[j].lang for j in g} == set(TABLE_1_CANDIDATES) for g in en.gold[:50])


def test_xquad_r_test_split_has_no_train_article(shared_xquad_r):
    train = {q.article for q in LareqaPool.load(shared_xquad_r, langs=["en"], split="train").questions}
    test = LareqaPool.load(shared_xquad_r, langs=["en", "th"], split="test")
    assert train and not ({q.article for q in test.questions} | {c.article for c in test.candidates}) & train
