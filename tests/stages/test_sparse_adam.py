import keras
import numpy as np
import pytest
import tensorflow as tf

from relkt.errors import ConfigError
from relkt.stages.sparse_adam import SparseAdam
from tests.helpers.tiny_muse import tiny_muse_encoder


def sparse(values, ids, height):
    return tf.IndexedSlices(
        tf.constant(np.asarray(values, "float32")), tf.constant(ids, tf.int32), tf.constant([height, 3])
    )


def test_lazy_is_adam_on_rows_read_every_step_and_leaves_unread_rows_as_they_are():
    """Five steps on a 6-row table: rows 0 and 2 are read every step (row 2 twice a step: its slices add up), row 4
    at step 0 only, rows 1, 3 and 5 never. Dense Adam gets the same gradients densified."""
    rng = np.random.default_rng(0)
    start = rng.normal(size=(6, 3)).astype("float32")
    lazy, dense = keras.Variable(start, name="lazy"), keras.Variable(start, name="dense")
    ours, adam = SparseAdam(0.05, "lazy"), keras.optimizers.Adam(0.05)
    after_step0 = None
    for step in range(5):
        ids = [0, 2, 2] + ([4] if step == 0 else [])
        g = sparse(rng.normal(size=(len(ids), 3)), ids, 6)
        ours.apply([g], [lazy])
        adam.apply([tf.convert_to_tensor(g)], [dense])
        if step == 0:
            after_step0 = lazy.numpy().copy()
    np.testing.assert_allclose(lazy.numpy()[[0, 2]], dense.numpy()[[0, 2]], rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(lazy.numpy()[[1, 3, 5]], start[[1, 3, 5]])  # never read: bit-identical
    np.testing.assert_array_equal(dense.numpy()[[1, 3, 5]], start[[1, 3, 5]])  # (Adam too: zero moments)
    # Row 4, read once: lazy Adam moved it at step 0 and never again; Adam kept moving it on its momentum.
    np.testing.assert_array_equal(lazy.numpy()[4], after_step0[4])
    assert np.abs(dense.numpy()[4] - after_step0[4]).min() > 1e-3
    # Only the rows read have moments: the unread rows' moments are still zero.
    m = ours._momentums[0].numpy()
    assert np.all(m[[1, 3, 5]] == 0) and np.all(m[[0, 2, 4]] != 0)


def test_dense_choice_is_keras_adam_bit_for_bit():
    rng = np.random.default_rng(1)
    start = rng.normal(size=(5, 3)).astype("float32")
    ours_v, adam_v = keras.Variable(start, name="a"), keras.Variable(start, name="b")
    ours, adam = SparseAdam(0.05, "dense"), keras.optimizers.Adam(0.05)
    for step in range(3):
        g = sparse(rng.normal(size=(2, 3)), [step, 4], 5)
        ours.apply([g], [ours_v])
        adam.apply([g], [adam_v])
    np.testing.assert_array_equal(ours_v.numpy(), adam_v.numpy())


def test_a_fit_step_hands_the_optimizer_a_sparse_table_gradient_and_moves_only_the_rows_read():
    """End to end through `fit` on relkt's muse architecture: the token table's gradient reaches the optimizer as
    tf.IndexedSlices (not densified on the way), and lazy Adam leaves every row the batch did not read
    bit-identical, while every other weight trains."""
    seen = {}

    class Spy(SparseAdam):
        def update_step(self, gradient, variable, learning_rate):
            seen[self._trainable_variables[self._get_variable_index(variable)].path] = type(gradient).__name__
            return super().update_step(gradient, variable, learning_rate)

    enc = tiny_muse_encoder()
    texts = ["cat dog river", "katze hund fluss", "cat bread", "hund brot"]
    features = enc.preprocess(tf.constant(texts))
    read = np.unique(features["token_ids"].numpy()[features["padding_mask"].numpy()])
    inputs = keras.Input(shape=(None,), dtype="int32", name="token_ids")
    mask = keras.Input(shape=(None,), dtype="bool", name="padding_mask")
    model = keras.Model({"token_ids": inputs, "padding_mask": mask}, enc({"token_ids": inputs, "padding_mask": mask}))
    model.compile(optimizer=Spy(0.05, "lazy"), loss="mse")
    table = enc.token_embedding.embeddings
    before, dense_before = table.numpy().copy(), enc.d0.kernel.numpy().copy()
    target = np.roll(enc.encode(texts), 1, axis=0)
    model.fit(dict(features), target, batch_size=4, epochs=2, verbose=0, shuffle=False)
    assert seen[table.path] == "IndexedSlices" and seen[enc.d0.kernel.path] != "IndexedSlices"
    unread = np.setdiff1d(np.arange(table.shape[0]), read)
    np.testing.assert_array_equal(table.numpy()[unread], before[unread])
    assert np.abs(table.numpy()[read] - before[read]).max() > 1e-3
    assert not np.allclose(enc.d0.kernel.numpy(), dense_before)


@pytest.mark.parametrize("choice", ["lazy", "dense"])
def test_rows_from_first_step_multiplier_times_as_far_and_the_rest_as_adam(choice):
    g = sparse([[1.0, -2.0, 0.5], [0.5, 0.1, -1.0], [3.0, -1.0, 2.0], [-0.2, 0.4, 1.0]], [0, 1, 2, 3], 4)
    v = keras.Variable(np.zeros((4, 3), "float32"), name="table")
    plain = keras.Variable(np.zeros((4, 3), "float32"), name="plain")
    keras.optimizers.Adam(0.1).apply([g], [plain])
    SparseAdam(0.1, choice, row_scales={v.path: (2, 3.0)}).apply([g], [v])
    # Adam's first step is lr * g / (|g| + eps) ~ -0.1 * sign(g); rows 2-3 take it three times.
    np.testing.assert_allclose(v.numpy()[:2], plain.numpy()[:2], rtol=1e-6)
    np.testing.assert_allclose(v.numpy()[2:], 3 * plain.numpy()[2:], rtol=1e-5)


def test_row_scales_on_a_dense_gradient_and_the_config_round_trips():
    v = keras.Variable(np.zeros((4, 2), "float32"), name="table")
    g = tf.constant([[1.0, -2.0], [0.5, 0.1], [3.0, -1.0], [-0.2, 0.4]])
    plain = keras.Variable(np.zeros((4, 2), "float32"), name="plain")
    keras.optimizers.Adam(0.1).apply([g], [plain])
    opt = SparseAdam(0.1, "lazy", row_scales={v.path: (2, 3.0)})
    opt.apply([g], [v])
    np.testing.assert_allclose(v.numpy(), plain.numpy() * np.array([[1], [1], [3], [3]]), rtol=1e-5)
    again = SparseAdam.from_config(opt.get_config())
    assert (again.sparse_rows, again.row_scales) == ("lazy", {v.path: (2, 3.0)})


def test_bad_settings_fail_at_once():
    with pytest.raises(ConfigError, match="multiplier > 0"):
        SparseAdam(0.1, "lazy", row_scales={"t": (0, 0.0)})
    with pytest.raises(ConfigError, match="lazy, dense"):
        SparseAdam(0.1, "sometimes")


MIRRORED_SCRIPT = """
import json, numpy as np, tensorflow as tf, keras
cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(cpu, [tf.config.LogicalDeviceConfiguration()] * 2)
from relkt.encoders.token_embedding import TokenEmbedding
from relkt.stages.sparse_adam import SparseAdam
from relkt.training.distributed_loop import DistributedFit
seen = []
class Spy(SparseAdam):
    def update_step(self, gradient, variable, learning_rate):
        if len(variable.shape) == 2 and variable.shape[0] == 50:
            seen.append(type(gradient).__name__)
        return super().update_step(gradient, variable, learning_rate)
strategy = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
x = np.array([[1, 2], [3, 4], [1, 5], [2, 2]], "int32")
y = np.ones((4, 4), "float32")
out = {}
for loop in ("keras_fit", "strategy_run"):
    with strategy.scope():
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((2,), dtype="int32"), TokenEmbedding(50, 4), keras.layers.Flatten(),
                                  keras.layers.Dense(4)])
        model.compile(optimizer=Spy(0.1, "lazy"), loss=keras.losses.MeanSquaredError(reduction=None))
    table = model.layers[0].embeddings
    before = table.numpy()
    ds = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)
    if loop == "keras_fit":
        model.fit(ds, epochs=1, verbose=0)
    else:
        DistributedFit(model, model.loss, strategy).fit(ds, verbose=0)
    moved = sorted(np.flatnonzero(np.abs(table.numpy() - before).sum(1)).tolist())
    out[loop] = {"gradients": sorted(set(seen)), "moved": moved}
    seen.clear()
print("RESULT " + json.dumps(out))
"""


def test_the_table_gradient_stays_sparse_across_mirrored_replicas():
    """MirroredStrategy over 2 logical CPUs (a fresh process), through Keras `fit` and relkt's `strategy.run` loop:
    the replicas' summed table gradient reaches the optimizer as IndexedSlices, and only the rows read (1-5) move."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(root)}
    proc = subprocess.run(
        [sys.executable, "-c", MIRRORED_SCRIPT], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(proc.stdout.split("RESULT ")[-1])
    for loop in ("keras_fit", "strategy_run"):
        assert result[loop] == {"gradients": ["IndexedSlices"], "moved": [1, 2, 3, 4, 5]}, (loop, result)
