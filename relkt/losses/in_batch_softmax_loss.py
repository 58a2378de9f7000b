"""LAReQA's teacher objective: an in-batch sampled softmax over the batch's answers (Henderson et al. 2017)."""

from __future__ import annotations

import keras
from keras import ops

MASKED = -1e9  # a logit that takes no part in the softmax (a finite value: -inf times a zero gradient is NaN)
NO_ID = -1  # a column with no candidate behind it (an anchor with fewer mined negatives than the batch asks)
GOLD_PAD = -2  # pads a question's gold ids; never equal to a column's id


def false_negatives(gold_ids, column_ids):
    """(rows, columns) booleans: column j holds one of row i's gold answers (its own, a duplicate text, or a twin in
    another language: the caller gives canonical ids, one per distinct text, and every gold id of the question)."""
    gold_ids = ops.cast(gold_ids, "int32")
    column_ids = ops.cast(column_ids, "int32")
    return ops.any(ops.equal(gold_ids[:, :, None], column_ids[None, None, :]), axis=1)


def in_batch_softmax_loss(
    questions, answers, negatives, answer_ids, negative_ids, gold_ids, scale, symmetric: bool = False
):
    """Per-question `-log softmax(scale * q_i . [answers; negatives])[i]`, the batch's other answers and the mined
    `negatives` as the classes; a column that is one of question i's gold answers (but its own) is left out of
    row i, and a column with id `NO_ID` out of every row. With `symmetric`, the mean with the answer -> question
    direction (answer j against the batch's questions, masked the same way). Returns shape (batch,).

    `answer_ids` (batch,) and `negative_ids` (n,) are canonical candidate ids (equal texts share one); `gold_ids`
    (batch, G) every gold id of each question, padded with `GOLD_PAD`."""
    q = ops.cast(questions, "float32")
    a = ops.cast(answers, "float32")
    columns = ops.concatenate([a, ops.cast(negatives, "float32")], axis=0)
    column_ids = ops.concatenate([ops.cast(answer_ids, "int32"), ops.cast(negative_ids, "int32")], axis=0)
    scale = ops.cast(scale, "float32")
    batch = ops.shape(q)[0]
    own = ops.eye(batch, ops.shape(columns)[0], dtype="bool")
    gold = false_negatives(gold_ids, column_ids)
    drop = ops.logical_or(ops.logical_and(gold, ops.logical_not(own)), ops.equal(column_ids, NO_ID)[None, :])
    logits = ops.where(drop, MASKED, scale * ops.matmul(q, ops.transpose(columns)))
    positive = scale * ops.sum(q * a, axis=-1)
    loss = ops.logsumexp(logits, axis=1) - positive
    if not symmetric:
        return loss
    # answer j's row over the questions: question i is left out when answer j is gold for it (a twin, a duplicate)
    drop_t = ops.logical_and(ops.transpose(gold[:, :batch]), ops.logical_not(own[:, :batch]))
    logits_t = ops.where(drop_t, MASKED, scale * ops.matmul(a, ops.transpose(q)))
    return 0.5 * (loss + ops.logsumexp(logits_t, axis=1) - positive)


@keras.saving.register_keras_serializable(package="relkt")
class InBatchSoftmaxLoss(keras.losses.Loss):
    """The in-batch sampled softmax: each question is classified among every answer of its batch (and the mined
    negatives the batch carries), similarity times a scale.

    A triplet compares a question with one negative at a time; here every other answer of the batch is a negative at
    every step, so a batch of B questions gives B - 1 negatives each for the price of encoding B answers. Columns that
    are the question's gold answer under another id (the same sentence twice, its twin in another language) are never
    counted as negatives.

    Args:
        symmetric: also classify each answer among the batch's questions, the two directions averaged.

    Inputs:
        | argument | shape                  | holds                                                                 |
        |----------|------------------------|-----------------------------------------------------------------------|
        | `y_true` | (batch, 1 + k + G) int | each row's canonical answer id, its k negatives' ids (`NO_ID` where    |
        |          |                        | none), then its question's gold ids padded with `GOLD_PAD`            |
        | `y_pred` | dict                   | `questions` (batch, dim), `answers` (batch, dim), `negatives`          |
        |          |                        | (batch * k, dim: row r's j-th negative at r * k + j), `scale` ()      |

    Example:
        >>> import numpy as np
        >>> loss = InBatchSoftmaxLoss()
        >>> eye = np.eye(2, dtype="float32")   # two questions, each equal to its answer
        >>> y = np.array([[0, 0], [1, 1]])     # answer ids 0 and 1; each question's gold: its own answer
        >>> pred = {"questions": eye, "answers": eye, "negatives": np.zeros((0, 2), "float32"), "scale": 1.0}
        >>> round(float(loss(y, pred)), 4)     # -log(e / (e + 1))
        0.3133

    References:
        Henderson et al., "Efficient Natural Language Response Suggestion for Smart Reply", 2017 (the in-batch
        softmax); Roy et al., "LAReQA: Language-agnostic answer retrieval from a multilingual pool", EMNLP 2020, Sec. 4.
    """

    def __init__(self, negatives_per_row: int = 0, symmetric: bool = False, name: str = "in_batch_softmax", **kwargs):
        super().__init__(name=name, **kwargs)
        self.negatives_per_row, self.symmetric = int(negatives_per_row), bool(symmetric)

    def call(self, y_true, y_pred):
        k = self.negatives_per_row
        y_true = ops.cast(y_true, "int32")
        return in_batch_softmax_loss(
            y_pred["questions"],
            y_pred["answers"],
            y_pred["negatives"],
            y_true[:, 0],
            ops.reshape(y_true[:, 1 : 1 + k], (-1,)),
            y_true[:, 1 + k :],
            y_pred["scale"],
            self.symmetric,
        )

    def get_config(self):
        return {**super().get_config(), "negatives_per_row": self.negatives_per_row, "symmetric": self.symmetric}
