import numpy as np
import pytest

from relkt.errors import DegenerateError
from relkt.metrics.pair_retrieval import centered, hub_share, pair_retrieval


def test_ranks_both_directions_worked_by_hand():
    # Three pairs in 2-d. X side: x0 = (1, 0), x1 = (0, 1), x2 = (0.6, 0.8).
    # English side: e0 = (0.8, 0.6), e1 = (0, 1), e2 = (1, 0).
    # xx>en: x0 scores e0 .8, e1 0, e2 1 -> e2 first, its gold e0 is 2nd (rank 2);
    #        x1 scores .6, 1, 0 -> gold e1 first (rank 1); x2 scores .96, .8, .6 -> gold e2 last (rank 3).
    # en>xx: e0 scores x0 .8, x1 .6, x2 .96 -> gold x0 2nd; e1 scores 0, 1, .8 -> gold x1 1st;
    #        e2 scores 1, 0, .6 -> gold x2 2nd.
    xx = np.array([[1, 0], [0, 1], [0.6, 0.8]], np.float32)
    en = np.array([[0.8, 0.6], [0, 1], [1, 0]], np.float32)
    r = pair_retrieval(xx, en, ["a", "b", "c"], ["A", "B", "C"], "test")
    assert r["xx>en"]["rank"].tolist() == [2, 1, 3] and r["en>xx"]["rank"].tolist() == [2, 1, 2]
    assert r["xx>en"]["P@1"] == pytest.approx(1 / 3) and r["xx>en"]["MRR"] == pytest.approx((1 / 2 + 1 + 1 / 3) / 3)
    assert r["en>xx"]["hit1"].tolist() == [False, True, False]


def test_a_repeated_english_side_is_gold_for_each_pair_holding_it():
    # x0 and x1 both translate "Hello." (e0 and e1 are the same text): x1 finding e0 first is a hit.
    xx = np.array([[1, 0], [1, 0.1], [0, 1]], np.float32)
    en = np.array([[1, 0], [0.9, 0.4], [0, 1]], np.float32)
    r = pair_retrieval(
        xx / np.linalg.norm(xx, axis=1, keepdims=True),
        en / np.linalg.norm(en, axis=1, keepdims=True),
        ["hallo", "hallo!", "tschüss"],
        ["Hello.", "Hello.", "Bye."],
        "test",
    )
    assert r["xx>en"]["hit1"].tolist() == [True, True, True]


def test_collapsed_embeddings_are_refused():
    same = np.ones((4, 3), np.float32) / np.sqrt(3)
    with pytest.raises(DegenerateError, match="fi X side"):
        pair_retrieval(same, np.eye(4, 3, dtype=np.float32), list("abcd"), list("ABCD"), "fi")


def test_hub_share_worked_by_hand():
    # Candidates: the four compass points. Three queries lie next to east, one next to north: east is nearest three
    # times, north once, south and west never.
    candidates = np.array([[1, 0], [0, 1], [-1, 0], [0, -1]], dtype=np.float32)
    queries = np.array([[1, 0.1], [1, -0.1], [0.9, 0.2], [0.1, 1]], dtype=np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    assert hub_share(queries, candidates, top=1) == pytest.approx(3 / 4)
    assert hub_share(queries, candidates, top=2) == pytest.approx(1.0)


def test_centering_takes_away_what_a_language_shares_worked_by_hand():
    # English texts share (0, 0, 1): e0 = (1, 0, 1)/sqrt2, e1 = (0, 1, 1)/sqrt2. The X texts share (0, 2, 0): x0 =
    # (1, 2, 0), x1 = (0, 3, 0) (unnormalised). Plain: x0 . e0 = 1/sqrt2 < x0 . e1 = 2/sqrt2 (times 1/|x0|), so x0
    # finds e1, a hub: P@1 1/2. Less the means (X: (0, 2, 0); English: (0, 0, 1/sqrt2)), x0 -> (1, 0, 0) and
    # x1 -> (0, 1, 0), e0 -> (1, 0, 0), e1 -> (0, 1, 0): each finds its own, P@1 1.
    e = np.array([[1, 0, 1], [0, 1, 1]], dtype=np.float32) / np.sqrt(2)
    x = np.array([[1, 2, 0], [0, 3, 0]], dtype=np.float32)
    plain = pair_retrieval(x / np.linalg.norm(x, axis=1, keepdims=True), e, ["a", "b"], ["A", "B"], "plain")
    assert plain["xx>en"]["hit1"].tolist() == [False, True]
    xc, ec = centered(x, [0, 2, 0]), centered(e, [0, 0, 1 / np.sqrt(2)])
    np.testing.assert_allclose(xc, [[1, 0, 0], [0, 1, 0]], atol=1e-6)
    np.testing.assert_allclose(ec, [[1, 0, 0], [0, 1, 0]], atol=1e-6)
    assert pair_retrieval(xc, ec, ["a", "b"], ["A", "B"], "centered")["xx>en"]["P@1"] == 1.0


def test_the_ratio_margin_by_hand_lifts_a_translation_a_hub_outscored():
    # x0's translation e0 (cos 0.5) loses raw to x1's translation h (cos 0.6 to x0), a hub x1 sits close to (0.9).
    # Ratio margin, k = 1: cos / ((nearest of the query + nearest of the candidate) / 2):
    #   x0 -> e0: 0.5 / ((0.6 + 0.5) / 2) = 0.909;  x0 -> h: 0.6 / ((0.6 + 0.9) / 2) = 0.8: e0 first
    xx = np.array([[1.0, 0.0, 0.0], [0.54, 0.72, np.sqrt(0.19)]], np.float32)
    en = np.array([[0.5, -np.sqrt(0.75), 0.0], [0.6, 0.8, 0.0]], np.float32)
    out = pair_retrieval(xx, en, ["a", "b"], ["a", "b"], "toy", margin_k=1)
    assert out["xx>en"]["hit1"].tolist() == [False, True] and out["xx>en"]["P@1"] == 0.5
    assert out["xx>en"]["margin_hit1"].tolist() == [True, True] and out["xx>en"]["margin P@1"] == 1.0
