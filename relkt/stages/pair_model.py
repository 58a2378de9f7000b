"""Wraps the student so Keras `fit` trains it on batches of its named inputs against cached teacher targets."""

from __future__ import annotations

from collections.abc import Sequence

import keras
import tensorflow as tf

from relkt.encoders.sentence_encoder import SentenceEncoder
from relkt.losses.distillation_loss import DistillationLoss
from relkt.losses.loss_terms import TERMS, student_inputs
from relkt.training.stage import PRESENT


class PairModel(keras.Model):
    """Input: {input name: features}, one entry per student input of the loss-term table (relkt.losses.loss_terms:
    "q" for q_x, "d" for d). Output: (batch, inputs, dim), the student's embedding of each, in `columns` order:
    [S(q_x), S(d)] for the paper's terms; the compiled `DistillationLoss` reads its columns by the same names.
    An input given with `{name}_present` flags is encoded on its flagged rows only (zeros elsewhere).

    Compiled with a `DistillationLoss`, it logs the loss's own terms (`q`, `d`, `dq`, and the `*_rank` terms
    with `contrast`) as the loss computes them (`DistillationLoss.components`): nothing is computed twice.
    """

    def __init__(self, student: SentenceEncoder, columns: Sequence[str] | None = None, **kwargs):
        super().__init__(**kwargs)
        self.student = student
        self.columns = list(student_inputs(TERMS) if columns is None else columns)
        self.measurements: dict[str, keras.metrics.Mean] = {}

    def call(self, inputs, training=False):
        return keras.ops.stack([self._embed(inputs, name, training) for name in self.columns], axis=1)

    def _embed(self, inputs, name: str, training: bool):
        """S(text) of input `name`. Where the batch says which rows hold one (`{name}_present`, text_dataset's
        `present`), only those rows are encoded and the others are zero rows. Why: a pair of general parallel text
        has no document, and the loss reads no term of it there, yet encoding its empty one cost a forward and
        backward pass as long as the batch's longest document (nearly every batch holds a QA example)."""
        present = inputs.get(name + PRESENT)
        if present is None:
            return self.student(inputs[name], training=training)
        rows = tf.where(present)  # (rows with a text, 1)
        # A batch without one still encodes its first row, zeroed after: oneDNN's convolutions mis-shape an empty
        # batch, and a tf.cond around the encoder would turn the token table's sparse gradient dense (every row).
        rows = tf.concat([rows, tf.zeros([1 - tf.minimum(tf.shape(rows)[0], 1), 1], tf.int64)], axis=0)
        out = self.student(tf.nest.map_structure(lambda t: tf.gather_nd(t, rows), inputs[name]), training=training)
        out = out * tf.cast(tf.gather_nd(present, rows), out.dtype)[:, None]
        shape = tf.stack([tf.shape(present, out_type=tf.int64)[0], tf.shape(out, out_type=tf.int64)[1]])
        return tf.scatter_nd(rows, out, shape)

    def compile(self, optimizer, loss: DistillationLoss, **kwargs):
        if loss.student_inputs != self.columns:
            raise ValueError(f"the loss reads student inputs {loss.student_inputs}; this model gives {self.columns}")
        super().compile(optimizer=optimizer, loss=loss, **kwargs)
        # Keras tracks them in `metrics`
        self.measurements = {name: keras.metrics.Mean(name=name) for name in loss.measurement_names()}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        per_example, parts = self.loss.components(y, y_pred)
        for name, value in parts.items():
            self.measurements[name].update_state(value)
        loss = keras.ops.mean(per_example)
        replicas = tf.distribute.get_strategy().num_replicas_in_sync  # as Keras scales a compiled loss
        return loss / replicas if replicas > 1 else loss
