"""Wraps the student so Keras `fit` trains it on (q_x, d) batches against cached teacher targets."""

from __future__ import annotations

import keras

from relkt.encoders.sentence_encoder import SentenceEncoder


class PairModel(keras.Model):
    """Input: {"q": features of q_x, "d": features of d}. Output: (batch, 2, dim) = [S(q_x), S(d)]
    for `relkt.losses.DistillationLoss`, whose `y_true` holds the teacher's [T(q_en), T(d)]."""

    def __init__(self, student: SentenceEncoder, **kwargs):
        super().__init__(**kwargs)
        self.student = student

    def call(self, inputs, training=False):
        return keras.ops.stack([self.student(inputs["q"], training=training),
                                self.student(inputs["d"], training=training)], axis=1)
