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

    def __init__(
        self, student: SentenceEncoder, columns: Sequence[str] | None = None, length_chunks: int = 1, **kwargs
    ):
        """`length_chunks` > 1: each input's rows encoded in that many runs of like length, each cut to its own
        longest text (features with a `padding_mask`): the same embeddings, loss and gradients as one pass over the
        batch padded to its longest, with far less padding (a random batch of parallel text pads to ~4x)."""
        super().__init__(**kwargs)
        if length_chunks < 1:
            raise ValueError(f"length_chunks must be >= 1, got {length_chunks}")
        self.student = student
        self.columns = list(student_inputs(TERMS) if columns is None else columns)
        self.length_chunks = int(length_chunks)
        self.measurements: dict[str, keras.metrics.Mean] = {}

    def call(self, inputs, training=False):
        return keras.ops.stack([self._embed(inputs, name, training) for name in self.columns], axis=1)

    def _embed(self, inputs, name: str, training: bool):
        """S(text) of input `name`. Where the batch says which rows hold one (`{name}_present`, text_dataset's
        `present`), only those rows are encoded and the others are zero rows. Why: a pair of general parallel text
        has no document, and the loss reads no term of it there, yet encoding its empty one cost a forward and
        backward pass as long as the batch's longest document (nearly every batch holds a QA example)."""
        features, present = inputs[name], inputs.get(name + PRESENT)
        if present is None and self.length_chunks == 1:
            return self.student(features, training=training)
        if present is None:
            batch = tf.shape(tf.nest.flatten(features)[0], out_type=tf.int64)[0]
            rows = tf.range(batch)
        else:
            batch = tf.shape(present, out_type=tf.int64)[0]
            rows = tf.where(present)[:, 0]
        if self.length_chunks > 1:  # shortest first, so each run is cut to its own longest
            mask = self._padding_mask(features)
            lengths = tf.reduce_sum(tf.cast(tf.gather(mask, rows), tf.int32), axis=1)
            rows = tf.gather(rows, tf.argsort(lengths, stable=True))
        n = tf.shape(rows, out_type=tf.int64)[0]
        taken, outs = [], []
        for i in range(self.length_chunks):
            run = rows[i * n // self.length_chunks : (i + 1) * n // self.length_chunks]
            # An empty run still encodes row 0, zeroed after: oneDNN's convolutions mis-shape an empty batch, and a
            # tf.cond around the encoder would turn the token table's sparse gradient dense (every row).
            empty = 1 - tf.minimum(tf.shape(run, out_type=tf.int64)[0], 1)
            take = tf.concat([run, tf.zeros([empty], tf.int64)], axis=0)
            part = tf.nest.map_structure(lambda t, take=take: tf.gather(t, take), features)
            if self.length_chunks > 1:
                width = tf.reduce_max(tf.reduce_sum(tf.cast(self._padding_mask(part), tf.int32), axis=1))
                part = tf.nest.map_structure(lambda t, width=width: t[:, :width] if t.shape.rank >= 2 else t, part)
            out = self.student(part, training=training)
            keep = tf.concat([tf.ones_like(run, out.dtype), tf.zeros([empty], out.dtype)], axis=0)
            taken.append(take)
            outs.append(out * keep[:, None])
        out = tf.concat(outs, axis=0)
        shape = tf.stack([batch, tf.shape(out, out_type=tf.int64)[1]])
        return tf.scatter_nd(tf.concat(taken, axis=0)[:, None], out, shape)

    def _padding_mask(self, features):
        if not isinstance(features, dict) or "padding_mask" not in features:
            raise ValueError(
                f"length_chunks > 1 cuts each run to its longest text by the features' padding_mask; "
                f"{type(self.student).__name__}'s features have none"
            )
        return features["padding_mask"]

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
