"""Per-question scores joined across folds or student groups, and summarised."""

import numpy as np
import pytest

from relkt.errors import DataError
from relkt.metrics.per_question_scores import concatenate_scores, scores_by_language, summarise_scores


def scores(ids, langs, ap, hit):
    return {
        "qas_id": np.array(ids),
        "lang": np.array(langs),
        "AP": np.array(ap, float),
        "xx_en_article_hit1": np.array(hit, float),
    }


def test_each_language_comes_from_the_part_that_owns_it():
    # Both students scored all four questions. Student a owns en and de, b owns el:
    # en q1 (a: AP 1.0, hit), de q1 (a: 0.5, miss), el q1 (b: 0.25, hit), el q2 (b: 1.0, hit).
    a = scores(["q1", "q1", "q1", "q2"], ["en", "de", "el", "el"], [1.0, 0.5, 0.1, 0.2], [1, 0, 0, 0])
    b = scores(["q1", "q1", "q1", "q2"], ["en", "de", "el", "el"], [0.9, 0.9, 0.25, 1.0], [0, 1, 1, 1])
    combined = scores_by_language({"a": a, "b": b}, {"en": "a", "de": "a", "el": "b"}, "x")
    rows = sorted(zip(combined["lang"].tolist(), combined["qas_id"].tolist(), combined["AP"].tolist()))
    assert rows == [("de", "q1", 0.5), ("el", "q1", 0.25), ("el", "q2", 1.0), ("en", "q1", 1.0)]
    summary = summarise_scores(combined)
    # mAP over the four kept rows: (1.0 + 0.5 + 0.25 + 1.0) / 4; el's P@1: both of b's el questions hit.
    assert summary["lareqa"]["mAP"] == pytest.approx(0.6875)
    assert summary["lareqa"]["per_language"]["el"]["mAP"] == pytest.approx(0.625)
    assert summary["xx_en_article"]["el"] == {"P@1": 1.0, "n_questions": 2}
    assert summary["xx_en_article"]["de"] == {"P@1": 0.0, "n_questions": 1}


def test_a_language_no_part_owns_or_a_question_twice_is_an_error():
    a = scores(["q1", "q1"], ["en", "hi"], [1.0, 0.5], [1, 0])
    with pytest.raises(DataError, match="x: hi is scored but no part owns it"):
        scores_by_language({"a": a}, {"en": "a"}, "x")
    with pytest.raises(DataError, match="pooled: a question is scored twice"):
        concatenate_scores([a, a], "pooled")
