import numpy as np
import pytest

from relkt.metrics.ranking import gold_ranks, per_question_metrics, summarize
from tests.helpers.fakes import paper_reference


def one_dim(scores):
    """Question = [1]; candidate j = [scores[j]]: the score of candidate j is scores[j]."""
    return np.ones((1, 1), np.float32), np.asarray(scores, np.float32)[:, None]


def test_hand_computed_average_precision():
    # Scores rank candidates 3,1,0,2,4 (0.9 > 0.8 > 0.5 > 0.3 > 0.1). Gold {1, 2} sit at ranks 2 and 4:
    # AP = (1/2 + 2/4) / 2 = 0.5; MRR = 1/2; P@1 = 0; P@5 = 2/5; mAP@20 = (1/2 + 2/4) / min(2, 20) = 0.5.
    q, c = one_dim([0.5, 0.8, 0.3, 0.9, 0.1])
    ranks = gold_ranks(q, c, [np.array([1, 2])])
    assert ranks.tolist() == [[2.0, 4.0]]
    m = summarize(per_question_metrics(ranks, ks=(1, 5)))
    assert m["mAP"] == pytest.approx(0.5) and m["MRR"] == pytest.approx(0.5)
    assert m["P@1"] == 0 and m["P@5"] == pytest.approx(0.4) and m["mAP@20"] == pytest.approx(0.5)
    assert m["R@5"] == 1 and m["hit@1"] == 0 and m["hit@5"] == 1


def test_ties_break_by_candidate_index():
    # Candidates 0, 2, 4 all score 0.5; candidate 1 scores 0.9. Order: 1, 0, 2, 4, 3.
    # Gold {2, 4}: ranks 3 and 4 (candidate 0 wins the tie against both). AP = (1/3 + 2/4) / 2 = 5/12.
    q, c = one_dim([0.5, 0.9, 0.5, 0.1, 0.5])
    ranks = gold_ranks(q, c, [np.array([4, 2])])
    assert ranks.tolist() == [[3.0, 4.0]]
    assert per_question_metrics(ranks)["AP"][0] == pytest.approx(5 / 12)
    # Negative zero and zero are the same score: the tie goes to the lower index.
    q, c = one_dim([0.0, -0.0, 1.0])
    assert gold_ranks(q, c, [np.array([1])]).tolist() == [[3.0]]


def test_more_golds_than_k():
    # 12 candidates, the 11 golds 0..10 score 10..0 and the distractor (11) scores 5.5: gold ranks
    # 1..5 then 7..12. P@5 = 5/5 = 1. mAP@5 divides by min(R=11, k=5) = 5: (1+1+1+1+1)/5 = 1.
    # mAP@10: golds ranked <= 10 are j=1..5 (prec 1) and j=6..9 at ranks 7..10 (6/7, 7/8, 8/9, 9/10);
    # divisor min(11, 10) = 10.
    scores = [10 - j for j in range(11)] + [5.5]
    q, c = one_dim(scores)
    m = per_question_metrics(gold_ranks(q, c, [np.arange(11)]), ks=(5, 10), map_ks=(5, 10))
    assert m["P@5"][0] == 1.0 and m["P@10"][0] == pytest.approx(9 / 10)
    assert m["AP@5"][0] == pytest.approx(1.0)
    assert m["AP@10"][0] == pytest.approx((5 + 6 / 7 + 7 / 8 + 8 / 9 + 9 / 10) / 10)
    assert m["R@10"][0] == pytest.approx(9 / 11)


def test_question_without_gold_is_not_averaged():
    q, c = one_dim([0.1, 0.9])
    q = np.vstack([q, q])
    per_q = per_question_metrics(gold_ranks(q, c, [np.array([1]), np.array([], dtype=np.int64)]))
    s = summarize(per_q)
    assert s["mAP"] == 1.0 and s["n_questions"] == 1 and s["n_unanswerable"] == 1


@pytest.mark.parametrize("chunk_size", [1, 7, 1000])
def test_matches_paper_reference_on_random_embeddings_with_ties(chunk_size):
    # Small-integer embeddings: every score is an integer below 2**24, exact in float32 whatever order a BLAS
    # kernel sums in, so the ties (duplicated rows, and the many equal sums of a 7-value alphabet) are exact on
    # both sides. Random floats are not: a GEMM need not give equal columns bit-equal scores.
    rng = np.random.default_rng(0)
    q = rng.integers(-3, 4, size=(40, 8)).astype(np.float32)
    c = rng.integers(-3, 4, size=(60, 8)).astype(np.float32)
    c[10:20] = c[0]  # duplicate candidates give exact score ties
    gold = [rng.choice(60, size=rng.integers(1, 12), replace=False) for _ in range(40)]
    gold[0] = np.array([5, 15, 0])
    ours = per_question_metrics(gold_ranks(q, c, gold, chunk_size=chunk_size), ks=(1, 5, 10))
    ref = paper_reference(q, c, gold)
    for key in ref:
        np.testing.assert_allclose(ours[key], ref[key], rtol=1e-12, err_msg=key)


def test_out_of_range_gold_is_rejected():
    q, c = one_dim([0.1, 0.2])
    with pytest.raises(ValueError, match="out of range"):
        gold_ranks(q, c, [np.array([2])])


def test_non_finite_embeddings_are_refused_not_ranked_by_index():
    from relkt.errors import NonFiniteError

    q, c = one_dim([0.1, 0.2, 0.3])
    c[1, 0] = np.nan  # NaN scores would sort by candidate index and give a plausible-looking mAP
    with pytest.raises(NonFiniteError, match="1 of 3 candidate embeddings hold NaN or inf \\(first: row 1\\)"):
        gold_ranks(q, c, [np.array([0])])
    with pytest.raises(NonFiniteError, match="question embeddings"):
        gold_ranks(np.full((1, 1), np.inf, np.float32), np.ones((2, 1), np.float32), [np.array([0])])


def test_blocked_scoring_gives_exactly_the_ranks_of_one_block_with_ties():
    # The same pool scored in one block (every question at once) and in blocks of a few score elements each: ranks,
    # and so every metric, are equal to the bit. Integer embeddings make the ties (duplicated candidates, and equal
    # sums of a 5-value alphabet) exact whatever the blocks are.
    rng = np.random.default_rng(3)
    q = rng.integers(-2, 3, size=(57, 6)).astype(np.float32)
    c = rng.integers(-2, 3, size=(90, 6)).astype(np.float32)
    c[30:45] = c[7]
    gold = [rng.choice(90, size=rng.integers(1, 12), replace=False) for _ in range(57)]
    whole = gold_ranks(q, c, gold, block_elements=57 * 90)
    for block_elements in (1, 90, 91, 5 * 90 + 3, 10**9):
        np.testing.assert_array_equal(gold_ranks(q, c, gold, block_elements=block_elements), whole)
    ties = np.sum(np.diff(np.sort(q @ c.T, axis=1), axis=1) == 0)
    assert ties > 1000  # the pool is full of ties, so the tie path is what is compared
    np.testing.assert_allclose(whole, gold_ranks(q, c, gold, chunk_size=4))
