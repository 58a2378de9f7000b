import pytest

from relkt.metrics import XxEnUnitEvaluator
from tests.helpers.fakes import LookupEncoder, units_by_hand


def test_unit_metrics_by_hand():
    # The case of units_by_hand: de P@1 = 1/2, MRR = (1 + 1/2)/2 = 3/4; en the same; P@10 = 1 (two candidates).
    units, questions, table = units_by_hand()
    enc = LookupEncoder(table)
    ev = XxEnUnitEvaluator(questions, units)
    results = ev.results(enc)
    assert results["article"]["de"]["P@1"] == 0.5 and results["article"]["de"]["MRR"] == pytest.approx(0.75)
    assert results["article"]["en"]["P@10"] == 1.0 and results["article"]["en"]["n_questions"] == 2
    assert ev.per_question["article"].tolist() == [1.0, 0.0, 0.0, 1.0]
    flat = XxEnUnitEvaluator.flat(results)
    assert flat["xx_en_article/de/P@1"] == 0.5 and flat["xx_en_article/P@1"] == 0.5
    assert "xx_en_article/n_questions" not in flat
