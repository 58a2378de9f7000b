import keras
import numpy as np
import pytest

from relkt.errors import ConfigError
from relkt.training.row_scaled_adam import RowScaledAdam


def one_fit_step(make_optimizer, seed=0):
    """Two compiled `fit` steps of a 6-row embedding + dense model; returns (table before, table after)."""
    keras.utils.set_random_seed(seed)
    model = keras.Sequential(
        [
            keras.Input((3,), dtype="int32"),
            keras.layers.Embedding(6, 4, name="emb"),
            keras.layers.GlobalAveragePooling1D(),
            keras.layers.Dense(2),
        ]
    )
    table = model.get_layer("emb").embeddings
    before = table.numpy().copy()
    model.compile(optimizer=make_optimizer(table.path), loss="mse")
    x = np.array([[0, 2, 4], [1, 3, 5], [5, 4, 0]])  # every row is used
    y = np.array([[1.0, -1.0], [0.5, 2.0], [-1.0, 0.0]])
    model.fit(x, y, batch_size=3, epochs=2, verbose=0, shuffle=False)  # two steps: momentum state matters too
    return table, before, table.numpy(), model


def test_rows_from_first_move_multiplier_times_as_far_and_the_rest_as_adam():
    _, before, adam_after, _ = one_fit_step(lambda path: keras.optimizers.Adam(0.01))
    table, before2, scaled_after, model = one_fit_step(lambda path: RowScaledAdam(0.01, row_scales={path: (4, 10.0)}))
    path = table.path
    np.testing.assert_array_equal(before, before2)
    # Step 1 is identical for rows 0-3; rows 4-5 move 10x as far. After step 2 rows 0-3 still match Adam
    # closely (their gradients see rows 4-5 only through the pooled mean, so they differ a little).
    adam_delta, scaled_delta = adam_after - before, scaled_after - before
    assert np.abs(scaled_delta[4:]).mean() > 5 * np.abs(adam_delta[4:]).mean()
    np.testing.assert_allclose(scaled_delta[:4], adam_delta[:4], atol=0.01)
    # Other variables: plain Adam (the dense layer is not named).
    assert RowScaledAdam.from_config(model.optimizer.get_config()).row_scales == {path: (4, 10.0)}


def test_single_step_is_exactly_scaled():
    import tensorflow as tf

    v = keras.Variable(np.zeros((4, 2), "float32"), name="table")
    g = tf.constant([[1.0, -2.0], [0.5, 0.1], [3.0, -1.0], [-0.2, 0.4]])
    plain = keras.Variable(np.zeros((4, 2), "float32"), name="plain")
    keras.optimizers.Adam(0.1).apply([g], [plain])
    RowScaledAdam(0.1, row_scales={v.path: (2, 3.0)}).apply([g], [v])
    # Adam's first step is lr * g / (|g| + eps) ~ -0.1 * sign(g); rows 2-3 take it three times.
    np.testing.assert_allclose(v.numpy()[:2], plain.numpy()[:2], rtol=1e-6)
    np.testing.assert_allclose(v.numpy()[2:], 3 * plain.numpy()[2:], rtol=1e-5)


def test_bad_row_scales_fail_at_once():
    with pytest.raises(ConfigError, match="multiplier > 0"):
        RowScaledAdam(0.1, row_scales={"t": (0, 0.0)})
