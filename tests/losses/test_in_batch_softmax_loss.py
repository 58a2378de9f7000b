"""The in-batch softmax worked by hand on a 3 x 3 batch: duplicates, twins and empty negative slots left out."""

from __future__ import annotations

import numpy as np
import pytest

from relkt.losses.in_batch_softmax_loss import GOLD_PAD, NO_ID, InBatchSoftmaxLoss, in_batch_softmax_loss

RNG = np.random.default_rng(5)
Q = RNG.normal(size=(3, 4)).astype(np.float32)
A = RNG.normal(size=(3, 4)).astype(np.float32)
N = RNG.normal(size=(3, 4)).astype(np.float32)  # one negative a row
ANSWER_IDS = np.array([10, 11, 11])  # rows 1 and 2 have the same answer text (a duplicate)
NEGATIVE_IDS = np.array([12, NO_ID, 20])  # 12 is row 1's answer's twin in another language; row 1 has no negative
GOLD = np.array([[10, GOLD_PAD], [11, 12], [11, GOLD_PAD]])
SCALE = 3.0


def by_hand(i: int, kept: list[np.ndarray]) -> float:
    """-log of row i's own answer's softmax weight among the columns `kept` (its own answer first)."""
    scores = [SCALE * float(Q[i] @ c) for c in kept]
    return -scores[0] + float(np.log(sum(np.exp(s) for s in scores)))


def test_each_row_against_the_columns_it_may_call_negatives():
    expected = [
        by_hand(0, [A[0], A[1], A[2], N[0], N[2]]),  # row 0: every column but the empty slot
        by_hand(1, [A[1], A[0], N[2]]),  # row 1: not the duplicate A[2], not its twin N[0]
        by_hand(2, [A[2], A[0], N[0], N[2]]),  # row 2: not the duplicate A[1]
    ]
    got = np.asarray(in_batch_softmax_loss(Q, A, N, ANSWER_IDS, NEGATIVE_IDS, GOLD, SCALE))
    np.testing.assert_allclose(got, expected, rtol=1e-5)


def test_the_symmetric_term_masks_the_questions_an_answer_is_gold_for():
    def answer_row(j: int, kept: list[int]) -> float:
        scores = [SCALE * float(A[j] @ Q[i]) for i in kept]
        return -scores[0] + float(np.log(sum(np.exp(s) for s in scores)))

    forward = np.asarray(in_batch_softmax_loss(Q, A, N, ANSWER_IDS, NEGATIVE_IDS, GOLD, SCALE))
    backward = [answer_row(0, [0, 1, 2]), answer_row(1, [1, 0]), answer_row(2, [2, 0])]  # 11 is gold for q1 and q2
    got = np.asarray(in_batch_softmax_loss(Q, A, N, ANSWER_IDS, NEGATIVE_IDS, GOLD, SCALE, symmetric=True))
    np.testing.assert_allclose(got, 0.5 * (forward + np.array(backward)), rtol=1e-5)


def test_the_loss_class_reads_ids_as_the_trainer_packs_them():
    y = np.concatenate([ANSWER_IDS[:, None], NEGATIVE_IDS[:, None], GOLD], axis=1)
    pred = {"questions": Q, "answers": A, "negatives": N, "scale": SCALE}
    per_row = np.asarray(in_batch_softmax_loss(Q, A, N, ANSWER_IDS, NEGATIVE_IDS, GOLD, SCALE))
    assert float(InBatchSoftmaxLoss(negatives_per_row=1)(y, pred)) == pytest.approx(per_row.mean(), rel=1e-5)
    config = InBatchSoftmaxLoss(negatives_per_row=1, symmetric=True).get_config()
    assert config["negatives_per_row"] == 1 and config["symmetric"] is True
