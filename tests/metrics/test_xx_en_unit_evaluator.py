import pytest

from relkt.data.english_answer_units import EnglishAnswerUnits
from relkt.data.records import Question
from relkt.metrics import XxEnUnitEvaluator
from tests.helpers.fakes import LookupEncoder


def test_unit_metrics_by_hand():
    # Two English articles, A = [1, 0] and B = [0, 1]. Gold: q1 -> A, q2 -> B.
    # de:q1 = [0.9, 0.1] scores A 0.9 > B 0.1: hit. de:q2 = [0.8, 0.2] scores A 0.8 > B 0.2: gold B at rank 2.
    # en:q1 = [0.2, 0.8]: miss (rank 2); en:q2 = [0, 1]: hit.
    # de P@1 = 1/2, MRR = (1 + 1/2)/2 = 3/4; en the same; P@10 = 1 (two candidates); mean over languages P@1 = 1/2.
    units = {"article": EnglishAnswerUnits("article", ("A text", "B text"), ("A", "B"), {"q1": 0, "q2": 1})}
    questions = [
        Question("q1", "de", "de1", "A", 0, 0),
        Question("q2", "de", "de2", "B", 0, 0),
        Question("q1", "en", "en1", "A", 0, 0),
        Question("q2", "en", "en2", "B", 0, 0),
    ]
    enc = LookupEncoder(
        {"A text": [1, 0], "B text": [0, 1], "de1": [0.9, 0.1], "de2": [0.8, 0.2], "en1": [0.2, 0.8], "en2": [0, 1]}
    )
    ev = XxEnUnitEvaluator(questions, units)
    results = ev.results(enc)
    assert results["article"]["de"]["P@1"] == 0.5 and results["article"]["de"]["MRR"] == pytest.approx(0.75)
    assert results["article"]["en"]["P@10"] == 1.0 and results["article"]["en"]["n_questions"] == 2
    assert ev.per_question["article"].tolist() == [1.0, 0.0, 0.0, 1.0]
    flat = XxEnUnitEvaluator.flat(results)
    assert flat["xx_en_article/de/P@1"] == 0.5 and flat["xx_en_article/P@1"] == 0.5
    assert "xx_en_article/n_questions" not in flat
