import numpy as np
import pytest

from relkt.mining import mine_negatives


def circle(angles):
    angles = np.asarray(angles, dtype=np.float64)
    return np.stack([np.cos(angles), np.sin(angles)], 1).astype(np.float32)


def test_hard_and_semi_hard_windows_by_hand():
    # Anchor at angle 0; candidates at angles 0, 0.1, 0.3 (the positive), 0.5, 1.0, 3.0.
    # Cosine distance 1 - cos(angle): d(p) = 1 - cos 0.3 = 0.0447. Hard (d < 0.0447): angles 0 and 0.1.
    # Semi-hard with margin 0.1 (0.0447 < d < 0.1447): angle 0.5 (d = 0.122) only; 1.0 gives 0.46.
    c = circle([0.0, 0.1, 0.3, 0.5, 1.0, 3.0])
    a = circle([0.0])
    r = mine_negatives(a, c, np.array([2]), np.array([[2, -1]]), margin=0.1, pick="hardest")
    assert r.negatives.tolist() == [[0, 3]]
    assert r.n_hard.tolist() == [2] and r.n_semi_hard.tolist() == [1]
    # Candidate 0 is a gold answer in another language: never a negative; the next hardest is taken.
    r = mine_negatives(a, c, np.array([2]), np.array([[2, 0]]), margin=0.1, pick="hardest")
    assert r.negatives.tolist() == [[1, 3]]


def test_squared_l2_uses_its_own_margin_scale():
    # For unit vectors ||a - c||^2 = 2 (1 - cos): d(p) = 0.0893; window (0.0893, 0.1893) holds angle 0.5 (0.245)? No:
    # 0.245 > 0.1893, so with margin 0.1 no semi-hard; with margin 0.2 (window up to 0.2893) angle 0.5 qualifies.
    c, a = circle([0.0, 0.3, 0.5]), circle([0.0])
    r = mine_negatives(a, c, np.array([1]), np.array([[1]]), margin=0.1, hard=0, semi_hard=1, distance="squared_l2")
    assert r.negatives.tolist() == [[-1]] and r.anchors_without_negative == 1
    r = mine_negatives(a, c, np.array([1]), np.array([[1]]), margin=0.2, hard=0, semi_hard=1, distance="squared_l2")
    assert r.negatives.tolist() == [[2]]


def test_random_pick_is_seeded_and_stays_in_the_window():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((50, 8)).astype(np.float32)
    c = rng.standard_normal((200, 8)).astype(np.float32)
    a /= np.linalg.norm(a, axis=1, keepdims=True)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    pos = rng.integers(0, 200, 50)
    gold = np.stack([pos, rng.integers(0, 200, 50)], 1)
    r1 = mine_negatives(a, c, pos, gold, margin=0.3, hard=2, semi_hard=2, rng=np.random.default_rng(1), chunk_size=7)
    r2 = mine_negatives(a, c, pos, gold, margin=0.3, hard=2, semi_hard=2, rng=np.random.default_rng(1), chunk_size=7)
    np.testing.assert_array_equal(r1.negatives, r2.negatives)
    d = 1 - a @ c.T
    dp = d[np.arange(50), pos]
    for i in range(50):
        for slot, n in enumerate(r1.negatives[i]):
            if n < 0:
                continue
            assert n not in gold[i]
            assert d[i, n] < dp[i] if slot < 2 else dp[i] < d[i, n] < dp[i] + 0.3


def test_invalid_pick_lists_valid():
    with pytest.raises(ValueError, match="valid: random, hardest"):
        mine_negatives(circle([0]), circle([0, 1]), np.array([0]), np.array([[0]]), 0.1, pick="easy")
