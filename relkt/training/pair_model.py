"""Wraps the student so Keras `fit` trains it on (q_x, d) batches against cached teacher targets."""

from __future__ import annotations

import keras
import tensorflow as tf

from relkt.encoders.sentence_encoder import SentenceEncoder
from relkt.losses.distillation_loss import DistillationLoss, stack_columns


class PairModel(keras.Model):
    """Input: {"q": features of q_x, "d": features of d}. Output: (batch, 2, dim) = [S(q_x), S(d)], the
    stage-2 contract of `relkt.losses.distillation_loss`, whose `y_true` holds the teacher's [T(q_en), T(d)].

    Compiled with a `DistillationLoss`, it logs the loss's own terms (`q`, `d`, `dq`, and the `*_rank` terms
    with `contrast`) as the loss computes them (`DistillationLoss.components`): nothing is computed twice.
    """

    def __init__(self, student: SentenceEncoder, **kwargs):
        super().__init__(**kwargs)
        self.student = student
        self.measurements: dict[str, keras.metrics.Mean] = {}

    def call(self, inputs, training=False):
        return stack_columns(self.student(inputs["q"], training=training), self.student(inputs["d"], training=training))

    def compile(self, optimizer, loss: DistillationLoss, **kwargs):
        super().compile(optimizer=optimizer, loss=loss, **kwargs)
        names = ["q", "d", "dq"] + (["q_rank", "d_rank", "dq_rank"] if loss.contrast else [])
        self.measurements = {name: keras.metrics.Mean(name=name) for name in names}  # Keras tracks them in `metrics`

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        per_example, parts = self.loss.components(y, y_pred)
        for name, value in parts.items():
            self.measurements[name].update_state(value)
        loss = keras.ops.mean(per_example)
        replicas = tf.distribute.get_strategy().num_replicas_in_sync  # as Keras scales a compiled loss
        return loss / replicas if replicas > 1 else loss
