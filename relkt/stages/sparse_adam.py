"""Adam that keeps an embedding table's gradient sparse: a step touches the rows its batch read, not the table."""

from __future__ import annotations

from typing import Literal

import keras
import tensorflow as tf
from keras import ops

from relkt.errors import ConfigError

SPARSE_ROWS = ("lazy", "dense")
SparseRows = Literal["lazy", "dense"]


def summed_rows(gradient: tf.IndexedSlices) -> tuple[tf.Tensor, tf.Tensor]:
    """(distinct row ids, each one's summed gradient): a lookup hands one slice a token read, repeats included."""
    ids, position = tf.unique(tf.cast(gradient.indices, tf.int32))
    return ids, tf.math.unsorted_segment_sum(gradient.values, position, tf.shape(ids)[0])


@keras.saving.register_keras_serializable(package="relkt")
class SparseAdam(keras.optimizers.Adam):
    """Adam, with two choices for embedding tables (any variable whose gradient arrives as `tf.IndexedSlices`):

    - `sparse_rows="lazy"`: only the rows a batch read move, and only their moments decay ("lazy" Adam, as TF
      Addons' `LazyAdam` and TF1's `LazyAdamOptimizer`). A row read at every step follows exactly Adam's path; a row
      a batch did not read keeps its value and its moments, where Adam would move it on its stale momentum. A step
      costs the rows read (a few hundred of mUSE's 128,010), not the whole table and its two moments.
    - `sparse_rows="dense"` (the default, as `schedule.sparse_rows`'s): Keras's Adam, which densifies the gradient and
      updates every row every step.

    Dense gradients (every other weight) get Keras's Adam either way. `row_scales` ({variable path: (first_row,
    multiplier)}) multiplies the step of rows `first_row:` of that variable: rows added to a pretrained table
    (relkt.encoders.vocab_extension) start untrained while the learning rate suits fine-tuning the rest, and since
    Adam's step is about the rate whatever the gradient's size, the update itself is scaled (a per-row rate). The
    optimizer's variables are Adam's, so checkpoints are interchangeable across both choices.
    """

    def __init__(
        self,
        learning_rate=0.001,
        sparse_rows: SparseRows = "dense",
        row_scales: dict[str, tuple[int, float]] | None = None,
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if sparse_rows not in SPARSE_ROWS:
            raise ConfigError(f"sparse_rows must be one of {', '.join(SPARSE_ROWS)}, got {sparse_rows!r}")
        self.sparse_rows = sparse_rows
        self.row_scales = {str(k): (int(v[0]), float(v[1])) for k, v in (row_scales or {}).items()}
        for path, (first, mult) in self.row_scales.items():
            if first < 0 or mult <= 0:
                raise ConfigError(
                    f"row_scales[{path!r}] = ({first}, {mult}): first_row must be >= 0 and multiplier > 0"
                )

    def update_step(self, gradient, variable, learning_rate):
        # The TF backend hands over the backing tf.Variable: find the Keras variable (and its path) by index.
        index = self._get_variable_index(variable)
        first, mult = self.row_scales.get(self._trainable_variables[index].path, (0, 1.0))
        if isinstance(gradient, tf.IndexedSlices) and self.sparse_rows == "lazy":
            return self._lazy_step(gradient, variable, learning_rate, index, first, mult)
        if mult == 1.0:
            return super().update_step(gradient, variable, learning_rate)
        before = ops.copy(ops.convert_to_tensor(variable))
        super().update_step(gradient, variable, learning_rate)
        rows = ops.arange(ops.shape(before)[0])
        factor = ops.cast(ops.where(rows >= first, mult, 1.0), before.dtype)
        factor = ops.reshape(factor, (-1,) + (1,) * (len(before.shape) - 1))
        variable.assign(before + (ops.convert_to_tensor(variable) - before) * factor)

    def _lazy_step(self, gradient, variable, learning_rate, index, first, mult):
        """Adam's arithmetic, term for term as Keras writes it, on the rows the batch read."""
        ids, values = summed_rows(gradient)
        dtype = variable.dtype
        values = tf.cast(values, dtype)
        step = tf.cast(self.iterations + 1, dtype)
        beta_1_power = tf.pow(tf.cast(self.beta_1, dtype), step)
        beta_2_power = tf.pow(tf.cast(self.beta_2, dtype), step)
        alpha = tf.cast(learning_rate, dtype) * tf.sqrt(1 - beta_2_power) / (1 - beta_1_power)
        m, v = self._momentums[index], self._velocities[index]
        # Gather from the backing tf.Variables (a sparse read): gathering from the Keras variables reads them whole.
        m_rows = tf.gather(m.value, ids)
        v_rows = tf.gather(v.value, ids)
        m_rows = m_rows + (values - m_rows) * (1 - self.beta_1)
        v_rows = v_rows + (tf.square(values) - v_rows) * (1 - self.beta_2)
        self.assign(m, tf.IndexedSlices(m_rows, ids))
        self.assign(v, tf.IndexedSlices(v_rows, ids))
        move = (m_rows * alpha) / (tf.sqrt(v_rows) + self.epsilon)
        if mult != 1.0:
            move = move * tf.where(ids >= first, tf.cast(mult, dtype), tf.cast(1.0, dtype))[:, None]
        self.assign_sub(variable, tf.IndexedSlices(move, ids))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "sparse_rows": self.sparse_rows,
            "row_scales": {k: list(v) for k, v in self.row_scales.items()},
        }
