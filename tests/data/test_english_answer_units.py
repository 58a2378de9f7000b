import numpy as np
import pytest

from relkt.data import EnglishAnswerUnits, LareqaPool
from relkt.data.records import Candidate, Question
from relkt.errors import ConfigError, DataError


def two_article_pool() -> LareqaPool:
    """Article A: paragraph 0 holds sentences s0 and s1, paragraph 1 holds s2; article B: paragraph 0 holds s3.
    q1's answer is s2 (A, paragraph 1); q2's is s3 (B); q3 has no answer found."""
    a0, a1, b0 = "A zero one. A zero two.", "A one.", "B zero."
    c = [
        Candidate("en:s0", "en", "A zero one.", a0, "A", 0, 0, 11),
        Candidate("en:s1", "en", "A zero two.", a0, "A", 0, 12, 23),
        Candidate("en:s2", "en", "A one.", a1, "A", 1, 0, 6),
        Candidate("en:s3", "en", "B zero.", b0, "B", 0, 0, 7),
    ]
    q = [
        Question("q1", "en", "one?", "A", 1, 0),
        Question("q2", "en", "b?", "B", 0, 0),
        Question("q3", "en", "none?", "B", 0, 0),
    ]
    gold = [np.array([2]), np.array([3]), np.array([], dtype=np.int64)]
    return LareqaPool(q, c, gold)


def test_units_hold_the_right_texts_and_gold():
    pool = two_article_pool()
    sentence = EnglishAnswerUnits.from_pool(pool, "sentence")
    assert sentence.texts == ("A zero one.", "A zero two.", "A one.", "B zero.")
    assert sentence.gold_of == {"q1": 2, "q2": 3}
    paragraph = EnglishAnswerUnits.from_pool(pool, "paragraph")
    assert paragraph.texts == ("A zero one. A zero two.", "A one.", "B zero.")
    assert paragraph.names == ("A#0", "A#1", "B#0") and paragraph.gold_of == {"q1": 1, "q2": 2}
    article = EnglishAnswerUnits.from_pool(pool, "article")
    assert article.texts == ("A zero one. A zero two.\nA one.", "B zero.") and article.gold_of == {"q1": 0, "q2": 1}
    # Any language's question finds its gold by qas_id; an unknown or unanswered one gets -1.
    assert article.gold(["q2", "q1", "q3", "zz"]).tolist() == [[1], [0], [-1], [-1]]


def test_units_need_an_english_pool_and_a_known_unit(tiny_data):
    pool = LareqaPool.load(tiny_data)
    with pytest.raises(DataError, match="answer units in en need a pool of en alone; it holds de"):
        EnglishAnswerUnits.from_pool(pool, "article")
    german = EnglishAnswerUnits.from_pool(pool.subset(["de"], ["de"]), "paragraph", lang="de")  # in-language units
    assert len(german.texts) == 3 and all("Katzen" in t for t in german.texts[:1])
    with pytest.raises(DataError, match="answer units in de need a pool of de alone; it holds en"):
        EnglishAnswerUnits.from_pool(pool.subset(["de"], ["de", "en"]), "article", lang="de")
    with pytest.raises(ConfigError, match="unknown XX->EN unit 'chapter'"):
        EnglishAnswerUnits.from_pool(pool.subset(candidate_langs=["en"]), "chapter")


def test_xquad_has_48_articles_and_240_paragraphs(shared_xquad_r):
    english = LareqaPool.load(shared_xquad_r, langs=["en"], split="all")
    units = {u: EnglishAnswerUnits.from_pool(english, u) for u in ("article", "paragraph")}
    assert len(units["article"].texts) == 48 and len(units["paragraph"].texts) == 240
    assert len(units["article"].gold_of) == 1190  # every English question's answer is found
