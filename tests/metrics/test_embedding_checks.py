"""Embeddings that cannot rank are refused before they are scored (a collapsed model's scores all tie, and ranking
by candidate index then reads like a result)."""

import numpy as np
import pytest

from relkt.data import LareqaPool
from relkt.errors import DegenerateError, NonFiniteError
from relkt.metrics import LareqaEvaluator
from relkt.metrics.embedding_checks import check_embeddings, spread


def unit_rows(n: int, dim: int, seed: int = 0) -> np.ndarray:
    x = np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_spread_is_the_rms_distance_to_the_mean_direction():
    # Two opposite unit rows: their mean is 0, each is 1 away from it. Two equal rows: 0.
    assert spread(np.array([[1.0, 0.0], [-1.0, 0.0]])) == pytest.approx(1.0)
    assert spread(np.array([[0.6, 0.8], [0.6, 0.8]])) == pytest.approx(0.0, abs=1e-12)
    # Rows (1, 0) and (0, 1): mean (0.5, 0.5), each at distance sqrt(0.5).
    assert spread(np.array([[1.0, 0.0], [0.0, 1.0]])) == pytest.approx(np.sqrt(0.5))
    # Blocks change nothing.
    rows = unit_rows(50, 8)
    assert spread(rows, block=7) == pytest.approx(spread(rows))


def test_real_looking_embeddings_pass_even_when_close():
    check_embeddings(unit_rows(100, 16), "candidate")
    # Rows ~0.1 apart around one direction (a randomly initialised transformer's cosines of ~0.99) still rank.
    base = unit_rows(1, 16)[0]
    close = base + 0.03 * unit_rows(100, 16, seed=1)
    check_embeddings(close / np.linalg.norm(close, axis=1, keepdims=True), "candidate")
    check_embeddings(unit_rows(1, 16), "question")  # one row: nothing to compare
    check_embeddings(np.zeros((0, 16), np.float32), "question")


def test_zero_rows_nan_rows_and_one_vector_are_refused_with_counts():
    rows = unit_rows(6, 8)
    rows[[1, 4]] = 0.0  # the student at learning rate 1e8: some texts map to norm 0
    with pytest.raises(DegenerateError, match=r"2 of 6 question embeddings are zero vectors \(first: row 1\)"):
        check_embeddings(rows, "question")
    rows[1] = np.nan
    with pytest.raises(NonFiniteError, match=r"1 of 6 question embeddings hold NaN"):
        check_embeddings(rows, "question")
    same = np.repeat(unit_rows(1, 8), 5, axis=0) + np.float32(1e-7)  # one vector, up to rounding
    with pytest.raises(DegenerateError, match=r"all 5 candidate embeddings are the same vector"):
        check_embeddings(same, "candidate")
    with pytest.raises(DegenerateError, match=r"all 5 candidate embeddings are the same vector"):
        check_embeddings(same, "candidate", ["a", "b", "a", "a", "a"])  # two texts, one vector: collapsed
    check_embeddings(same, "question", ["where?"] * 5)  # one question asked five times is one vector by right


def test_the_evaluator_refuses_a_collapsed_encoder_instead_of_scoring_ties(tiny_data):
    class ConstantEncoder:  # every text to one unit vector: every score ties
        def encode(self, texts, batch_size=64, progress=False):
            return np.tile(np.array([[0.6, 0.8]], np.float32), (len(texts), 1))

    with pytest.raises(DegenerateError, match=r"all 12 question embeddings are the same vector"):
        LareqaEvaluator(LareqaPool.load(tiny_data))(ConstantEncoder())
