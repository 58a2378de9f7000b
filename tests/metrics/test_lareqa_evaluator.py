import numpy as np
import pytest

from relkt.data import LareqaPool
from relkt.metrics import LareqaEvaluator, RetrievalEvaluator
from tests.helpers.fakes import LookupEncoder


def test_retrieval_evaluator_flat_metrics_by_hand():
    # Two queries, three documents in 2-D. q1 = [1, 0]: scores d1=1, d2=0.6, d3=0 -> gold d2 at rank 2.
    # q2 = [0, 1]: scores d1=0, d2=0.8, d3=1 -> golds {d1, d3} at ranks 3 and 1:
    # AP(q1) = 1/2; AP(q2) = (1/1 + 2/3)/2 = 5/6; mAP = (1/2 + 5/6)/2 = 2/3. MRR = (1/2 + 1)/2 = 3/4.
    enc = LookupEncoder({"q1": [1, 0], "q2": [0, 1], "d1": [1, 0], "d2": [0.6, 0.8], "d3": [0, 1]})
    ev = RetrievalEvaluator(
        {"a": "q1", "b": "q2"}, {"x": "d1", "y": "d2", "z": "d3"}, {"a": {"y"}, "b": {"x", "z"}}, name="toy"
    )
    m = ev(enc)
    assert ev.primary_metric == "toy_mAP"  # a key of its own metrics, prefix included
    assert m["toy_mAP"] == pytest.approx(2 / 3) and m["toy_MRR"] == pytest.approx(0.75)
    assert m["toy_P@1"] == pytest.approx(0.5)  # q1 misses at 1, q2 hits
    with pytest.raises(ValueError, match="not in the corpus"):
        RetrievalEvaluator({"a": "q1"}, {"x": "d1"}, {"a": {"w"}})


def perfect_table(pool, shuffle_en_answers=False):
    """Each qas_id gets a one-hot axis; questions and all gold sentences of that id sit on it."""
    ids = sorted({q.qas_id for q in pool.questions})
    dim = len(ids) + len(pool.candidates)
    table = {}
    for q, gold in zip(pool.questions, pool.gold):
        table[q.text] = np.eye(dim)[ids.index(q.qas_id)]
        for j in gold:
            table[pool.candidates[j].sentence] = np.eye(dim)[ids.index(q.qas_id)]
    return table


def test_perfect_alignment_scores_one(tiny_data):
    pool = LareqaPool.load(tiny_data)
    results = LareqaEvaluator(pool).results(LookupEncoder(perfect_table(pool)))
    lareqa = results["lareqa"]
    # Both golds (en + de) tie at score 1 above every other candidate (score 0): ranks 1 and 2.
    assert lareqa["mAP"] == 1.0 and lareqa["P@1"] == 1.0 and lareqa["MRR"] == 1.0
    assert lareqa["P@5"] == pytest.approx(2 / 5)  # only 2 golds exist, so P@5 <= 2/5
    assert lareqa["n_questions"] == 12 and lareqa["n_candidates"] == 12
    assert set(lareqa["per_language"]) == {"de", "en"}
    assert results["xx_en"]["de"]["P@1"] == 1.0 and results["xx_en"]["de"]["n_questions"] == 6


def test_language_only_encoder(tiny_data):
    # Every text embeds to its language axis: all candidates tie, so ranks follow candidate index
    # (en candidates 0..5, de 6..11). For "en:c2" (golds en:0.0.1 at index 1, de:0.0.1 at index 7):
    # ranks 2 and 8 -> AP = (1/2 + 2/8)/2 = 0.375.
    pool = LareqaPool.load(tiny_data)
    table = {}
    for q in pool.questions:
        table[q.text] = [1.0, 0.0] if q.lang == "en" else [0.0, 1.0]
    for c in pool.candidates:
        table[c.sentence] = [1.0, 0.0] if c.lang == "en" else [0.0, 1.0]
    ev = LareqaEvaluator(pool)
    results = ev.results(LookupEncoder(table))
    i = [q.qid for q in pool.questions].index("en:c2")
    assert ev.per_question["lareqa"]["AP"][i] == pytest.approx(0.375)
    # German questions score their German candidates higher than English ones: de gold first.
    assert results["lareqa"]["per_language"]["de"]["P@1"] < 1.0
    flat = LareqaEvaluator.flat(results)
    assert flat["lareqa/mAP"] == results["lareqa"]["mAP"] and "xx_en/de/P@1" in flat and "xx_en/P@1" in flat


def test_bitext_finds_each_questions_english_twin(tiny_data):
    # Six qas_ids asked in en and de. Every English question sits on its own one-hot axis; German questions
    # 0-3 sit on their twin's axis (cos 1, ranked first), 4 and 5 swap axes (cos 0, the other's twin first):
    # bitext de P@1 = 4/6, mean cos = (4 * 1 + 2 * 0) / 6 = 2/3. English questions are not scored.
    pool = LareqaPool.load(tiny_data)
    ids = sorted({q.qas_id for q in pool.questions})
    swap = {ids[4]: ids[5], ids[5]: ids[4]}
    table = {c.sentence: np.eye(8)[6 if c.lang == "en" else 7] for c in pool.candidates}  # apart from the questions
    for q in pool.questions:
        axis = ids.index(swap.get(q.qas_id, q.qas_id) if q.lang == "de" else q.qas_id)
        table[q.text] = np.eye(8)[axis]
    ev = LareqaEvaluator(pool)
    results = ev.results(LookupEncoder(table))
    assert set(results["bitext"]) == {"de"}
    assert results["bitext"]["de"]["P@1"] == pytest.approx(4 / 6) and results["bitext"]["de"]["cos"] == pytest.approx(
        2 / 3
    )
    assert results["bitext"]["de"]["n_questions"] == 6
    hit = ev.per_question["bitext"]["hit@1"]
    assert np.isnan(hit[pool.question_langs == "en"]).all()
    flat = LareqaEvaluator.flat(results)
    assert flat["bitext/de/P@1"] == flat["bitext/P@1"] == pytest.approx(4 / 6)
    # Switched off, or a pool with no English twin: no bitext section.
    assert "bitext" not in LareqaEvaluator(pool, bitext=False).results(LookupEncoder(table))
    assert "bitext" not in LareqaEvaluator(pool.subset(question_langs=["de"], candidate_langs=["de", "en"])).results(
        LookupEncoder(table)
    )
