"""Adam that moves chosen rows of one embedding table at their own rates; the rest frozen or at a fraction."""

from __future__ import annotations

import math
from collections.abc import Sequence

import keras
import numpy as np
import tensorflow as tf

from relkt.errors import ConfigError
from relkt.stages.sparse_adam import SPARSE_ROWS, SparseRows, summed_rows


def _handle(variable) -> tf.Tensor:
    """The resource handle of a Keras variable or of the tf.Variable behind one (Keras hands update_step either)."""
    return variable.handle if hasattr(variable, "handle") else variable.value.handle


@keras.saving.register_keras_serializable(package="relkt")
class RowSubsetAdam(keras.optimizers.Adam):
    """Adam on rows `rows` of the variable at `table_path`, row `rows[i]` stepping `scales[i]` times the learning
    rate, and everything else `rest_scale` times it. With `rest_scale=0` (the default) every other row stays where it
    is and the model must hand it that one variable: `build` refuses any other trainable variable, so "the rest is
    frozen" is checked, not assumed. With `rest_scale > 0` every trainable variable and every other row of the table
    moves too, at that fraction of the rate: a whole network fine-tuned gently while the new languages' rows learn
    at the full rate (a rate per row, which a single learning rate cannot give).

    Why: a student that learns a new language through its own token rows (`student.language_rows`,
    relkt.encoders.language_rows) leaves every other weight, and so every language the base model reads, as it was.
    The table's gradient holds the rows a batch reads (128k x 512 floats for mUSE, a few hundred of them used), so
    the update is sparse too: Adam's moments and a row move only at steps whose batch reads it ("lazy" Adam, as
    TF1's LazyAdamOptimizer), and a step costs what the batch reads, not the whole table. `sparse_rows="dense"`
    updates every chosen row every step instead, as Adam restricted to those rows would (an unread row's gradient is
    zero, and it moves on its momentum); with `rest_scale > 0` it is Keras's Adam on the whole table, each row's
    move scaled by its factor. `rest_rows` says how the table's other rows move when `rest_scale > 0`: as
    `sparse_rows` (None), or `"lazy"` beside dense chosen rows: the chosen rows as Adam on them, the other rows only
    at steps whose batch reads them. Adam over the whole table and its moments is most of a step on mUSE's 128k rows
    (bench_row_optimizers.py); at a rest's rate of a few thousandths, what an unread row's momentum would move it is
    small.
    """

    def __init__(
        self,
        learning_rate=0.001,
        table_path: str = "",
        rows: Sequence[int] = (),
        scales: Sequence[float] | float = 1.0,
        sparse_rows: SparseRows = "lazy",
        rest_scale: float = 0.0,
        rest_rows: SparseRows | None = None,
        **kwargs,
    ):
        super().__init__(learning_rate=learning_rate, **kwargs)
        if sparse_rows not in SPARSE_ROWS:
            raise ConfigError(f"sparse_rows must be one of {', '.join(SPARSE_ROWS)}, got {sparse_rows!r}")
        self.sparse_rows = sparse_rows
        self.table_path, self.rows = str(table_path), [int(r) for r in rows]
        self.scales = [float(scales)] * len(self.rows) if np.isscalar(scales) else [float(s) for s in scales]
        if not self.table_path or not self.rows:
            raise ConfigError("RowSubsetAdam needs a table_path and at least one row to train")
        if len(self.scales) != len(self.rows) or min(self.scales) <= 0 or min(self.rows) < 0:
            raise ConfigError(f"RowSubsetAdam: {len(self.rows)} rows need as many scales > 0 and rows >= 0")
        if len(set(self.rows)) != len(self.rows):
            raise ConfigError("RowSubsetAdam: rows must be distinct")
        if not math.isfinite(rest_scale) or rest_scale < 0:
            raise ConfigError(f"RowSubsetAdam: rest_scale must be a finite number >= 0 (0 = frozen), got {rest_scale}")
        self.rest_scale = float(rest_scale)
        self.rest_rows = sparse_rows if rest_rows is None else rest_rows
        if self.rest_rows not in SPARSE_ROWS or (sparse_rows == "lazy" and self.rest_rows == "dense"):
            raise ConfigError(
                f"RowSubsetAdam: rest_rows must be lazy or dense, and lazy where the chosen rows are "
                f"(sparse_rows={sparse_rows!r}), got {rest_rows!r}"
            )
        self._factor = None

    def build(self, variables):
        tables = [v for v in variables if v.path == self.table_path]
        if len(tables) != 1 or (self.rest_scale == 0 and len(variables) != 1):
            raise ConfigError(
                f"RowSubsetAdam trains only {self.table_path!r}"
                f"{'' if self.rest_scale == 0 else ' and the rest at rest_scale'}; "
                f"{'freeze the other variables first ' if self.rest_scale == 0 else ''}"
                f"(trainable: {', '.join(v.path for v in variables) or 'none'})"
            )
        height = int(tables[0].shape[0])
        if max(self.rows) >= height:
            raise ConfigError(f"RowSubsetAdam: row {max(self.rows)} is outside {self.table_path!r} ({height} rows)")
        factor = np.full(height, self.rest_scale, np.float32)
        factor[self.rows] = self.scales
        self._factor = factor  # numpy: build may run inside a traced step, so each trace makes its own constant
        position = np.full(height, -1, np.int32)
        position[self.rows] = np.arange(len(self.rows))
        self._position = position  # table row -> its place in `rows` (-1: not chosen), for the dense choice
        super().build(variables)

    def update_step(self, gradient, variable, learning_rate):
        index = self._get_variable_index(variable)
        if self._trainable_variables[index].path != self.table_path:  # only with rest_scale > 0 (build checks)
            return super().update_step(gradient, variable, learning_rate * self.rest_scale)
        slices = isinstance(gradient, tf.IndexedSlices)
        sparse = slices and self.sparse_rows == "lazy"
        if self.rest_scale and not sparse and (self.rest_rows == "dense" or not slices):
            # every row moves: Adam on the table at the rest's rate, then the rows'
            return self._dense_with_rest(gradient, variable, learning_rate, index)
        if sparse:  # the rows a batch read, once each
            ids, values = summed_rows(gradient)
        elif isinstance(gradient, tf.IndexedSlices):  # dense: every chosen row, zero where the batch did not read it
            read, summed = summed_rows(gradient)
            place = tf.gather(tf.constant(self._position), read)
            keep = place >= 0
            ids = tf.constant(self.rows, tf.int32)
            values = tf.math.unsorted_segment_sum(
                tf.boolean_mask(summed, keep), tf.boolean_mask(place, keep), len(self.rows)
            )
            if self.rest_scale:  # rest_rows lazy: and the other rows this batch read, at the rest's rate
                ids = tf.concat([ids, tf.boolean_mask(read, ~keep)], 0)
                values = tf.concat([values, tf.boolean_mask(summed, ~keep)], 0)
        else:  # a dense gradient (e.g. under a strategy that densifies): its chosen rows
            ids = tf.constant(self.rows, tf.int32)
            values = tf.gather(gradient, ids)
        factor = tf.gather(tf.constant(self._factor), ids)
        keep = factor > 0
        ids, values, factor = tf.boolean_mask(ids, keep), tf.boolean_mask(values, keep), tf.boolean_mask(factor, keep)
        values = tf.cast(values, variable.dtype)
        step = tf.cast(self.iterations + 1, variable.dtype)
        lr = tf.cast(learning_rate, variable.dtype) * tf.sqrt(1 - self.beta_2**step) / (1 - self.beta_1**step)
        m, v = self._momentums[index], self._velocities[index]
        # Gather from the backing tf.Variables (a sparse read): gathering from the Keras variables reads them whole.
        m_rows = tf.gather(m.value, ids) * self.beta_1 + values * (1 - self.beta_1)
        v_rows = tf.gather(v.value, ids) * self.beta_2 + tf.square(values) * (1 - self.beta_2)
        self.assign(m, tf.IndexedSlices(m_rows, ids))
        self.assign(v, tf.IndexedSlices(v_rows, ids))
        move = lr * factor[:, None] * m_rows / (tf.sqrt(v_rows) + self.epsilon)
        self.assign_sub(variable, tf.IndexedSlices(move, ids))

    def _dense_with_rest(self, gradient, variable, learning_rate, index: int) -> None:
        """Adam on every row at `rest_scale` times the rate in TensorFlow's fused kernel (one pass over the table and
        its moments), then each chosen row's remaining `scale - rest_scale` of its move from the moments just
        updated. The same arithmetic as Keras's Adam with each row's move scaled, but Keras's Adam makes some ten
        table-sized temporaries a step (and the scaling three more): 65M weights made it most of a step's time."""
        dtype = variable.dtype
        if isinstance(gradient, tf.IndexedSlices):  # dense, zero where the batch read nothing
            gradient = tf.math.unsorted_segment_sum(gradient.values, gradient.indices, tf.shape(variable)[0])
        step = tf.cast(self.iterations + 1, dtype)
        lr = tf.cast(learning_rate, dtype)
        m, v = self._momentums[index], self._velocities[index]
        tf.raw_ops.ResourceApplyAdam(
            var=_handle(variable),
            m=_handle(m),
            v=_handle(v),
            beta1_power=tf.pow(tf.cast(self.beta_1, dtype), step),
            beta2_power=tf.pow(tf.cast(self.beta_2, dtype), step),
            lr=lr * self.rest_scale,
            beta1=tf.cast(self.beta_1, dtype),
            beta2=tf.cast(self.beta_2, dtype),
            epsilon=tf.cast(self.epsilon, dtype),
            grad=tf.cast(gradient, dtype),
        )
        extra = np.asarray(self.scales, np.float32) - self.rest_scale
        ids = tf.constant(np.asarray(self.rows, np.int32)[extra != 0])
        if not int(ids.shape[0]):
            return
        alpha = lr * tf.sqrt(1 - self.beta_2**step) / (1 - self.beta_1**step)
        m_rows, v_rows = tf.gather(m.value, ids), tf.gather(v.value, ids)
        move = alpha * tf.constant(extra[extra != 0], dtype)[:, None] * m_rows / (tf.sqrt(v_rows) + self.epsilon)
        self.assign_sub(variable, tf.IndexedSlices(move, ids))

    def get_config(self) -> dict:
        return {
            **super().get_config(),
            "table_path": self.table_path,
            "rows": list(self.rows),
            "scales": list(self.scales),
            "sparse_rows": self.sparse_rows,
            "rest_scale": self.rest_scale,
            "rest_rows": self.rest_rows,
        }
