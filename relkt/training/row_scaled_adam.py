"""Adam whose steps are scaled up on chosen rows of chosen variables (new vocabulary rows learn faster)."""

from __future__ import annotations

import keras
from keras import ops

from relkt.errors import ConfigError


@keras.saving.register_keras_serializable(package="relkt")
class RowScaledAdam(keras.optimizers.Adam):
    """Adam, except that on the variables named in `row_scales` ({variable path: (first_row, multiplier)})
    the update of rows `first_row:` is multiplied by `multiplier`.

    Why: rows added to a pretrained embedding table (relkt.encoders.vocab_extension) start untrained,
    while the learning rate suits fine-tuning the rest. Adam's step is about the learning rate whatever
    the gradient's size, so scaling gradients would do nothing; the update itself is scaled (a per-row
    learning rate). Old rows and every other variable get exactly Adam's update, and the optimizer's
    variables are Adam's, so checkpoints are interchangeable.
    """

    def __init__(self, learning_rate=0.001, row_scales: dict[str, tuple[int, float]] | None = None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.row_scales = {str(k): (int(v[0]), float(v[1])) for k, v in (row_scales or {}).items()}
        for path, (first, mult) in self.row_scales.items():
            if first < 0 or mult <= 0:
                raise ConfigError(
                    f"row_scales[{path!r}] = ({first}, {mult}): first_row must be >= 0 and multiplier > 0"
                )

    def update_step(self, gradient, variable, learning_rate):
        # The TF backend hands over the backing tf.Variable: find the Keras variable (and its path) by index.
        scale = self.row_scales.get(self._trainable_variables[self._get_variable_index(variable)].path)
        if scale is None or scale[1] == 1.0:
            return super().update_step(gradient, variable, learning_rate)
        first, mult = scale
        before = ops.copy(ops.convert_to_tensor(variable))
        super().update_step(gradient, variable, learning_rate)
        rows = ops.arange(ops.shape(before)[0])
        factor = ops.cast(ops.where(rows >= first, mult, 1.0), before.dtype)
        factor = ops.reshape(factor, (-1,) + (1,) * (len(before.shape) - 1))
        variable.assign(before + (ops.convert_to_tensor(variable) - before) * factor)

    def get_config(self) -> dict:
        return {**super().get_config(), "row_scales": {k: list(v) for k, v in self.row_scales.items()}}
