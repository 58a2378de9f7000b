import keras
import numpy as np
import pytest
import tensorflow as tf

from relkt.errors import ConfigError
from relkt.stages.row_subset_adam import RowSubsetAdam


def test_only_chosen_rows_move_each_at_its_scale():
    table = keras.Variable(np.zeros((6, 2), "float32"), name="table")
    # A sparse gradient as an embedding lookup gives it: row 2 read twice (its slices add up), rows 1, 2, 5.
    g = tf.IndexedSlices(
        tf.constant([[1.0, -2.0], [0.5, 0.5], [0.5, 0.5], [-3.0, 1.0]]), tf.constant([1, 2, 2, 5]), tf.constant([6, 2])
    )
    RowSubsetAdam(0.1, table.path, rows=[2, 5, 4], scales=[1.0, 3.0, 1.0]).apply([g], [table])
    # Adam's first step is lr * g / (|g| + eps) ~ 0.1 * sign(g), subtracted. Row 1 has a gradient but is not chosen;
    # row 4 is chosen but unread; row 2's summed gradient is (1, 1); row 5 takes three steps' worth.
    expected = np.zeros((6, 2), "float32")
    expected[2] = [-0.1, -0.1]
    expected[5] = [0.3, -0.3]
    np.testing.assert_allclose(table.numpy(), expected, rtol=1e-5)


def test_matches_adam_on_the_chosen_rows_over_several_steps():
    """Steps whose batches read every chosen row: lazy Adam on those rows is Adam."""
    rng = np.random.default_rng(0)
    subset = keras.Variable(np.ones((5, 3), "float32"), name="table")
    plain = keras.Variable(np.ones((2, 3), "float32"), name="plain")
    ours, adam = RowSubsetAdam(0.05, subset.path, rows=[1, 3]), keras.optimizers.Adam(0.05)
    for _ in range(4):
        g = rng.normal(size=(2, 3)).astype("float32")
        ours.apply([tf.IndexedSlices(tf.constant(g), tf.constant([1, 3]), tf.constant([5, 3]))], [subset])
        adam.apply([tf.constant(g)], [plain])
    np.testing.assert_allclose(subset.numpy()[[1, 3]], plain.numpy(), rtol=1e-5)
    np.testing.assert_array_equal(subset.numpy()[[0, 2, 4]], 1.0)


def test_dense_gradient_moves_only_the_chosen_rows():
    table = keras.Variable(np.zeros((4, 2), "float32"), name="table")
    RowSubsetAdam(0.1, table.path, rows=[0, 3]).apply([tf.fill([4, 2], 2.0)], [table])
    np.testing.assert_allclose(table.numpy()[:, 0], [-0.1, 0.0, 0.0, -0.1], rtol=1e-5)


def test_refuses_a_variable_that_is_not_the_table():
    table, other = (
        keras.Variable(np.zeros((4, 2), "float32"), name="table"),
        keras.Variable(np.zeros(2, "float32"), name="w"),
    )
    with pytest.raises(ConfigError, match="freeze the other variables"):
        RowSubsetAdam(0.1, table.path, rows=[0]).build([table, other])
    with pytest.raises(ConfigError, match="outside"):
        RowSubsetAdam(0.1, table.path, rows=[7]).build([table])


def test_bad_settings_fail_at_once_and_the_config_round_trips():
    with pytest.raises(ConfigError, match="as many scales"):
        RowSubsetAdam(0.1, "t", rows=[0, 1], scales=[1.0])
    with pytest.raises(ConfigError, match="distinct"):
        RowSubsetAdam(0.1, "t", rows=[1, 1])
    with pytest.raises(ConfigError, match="at least one row"):
        RowSubsetAdam(0.1, "t", rows=[])
    config = RowSubsetAdam(0.1, "t", rows=[3, 1], scales=[2.0, 1.0]).get_config()
    again = RowSubsetAdam.from_config(config)
    assert (again.table_path, again.rows, again.scales) == ("t", [3, 1], [2.0, 1.0])


def test_dense_choice_keeps_moving_a_chosen_row_a_batch_did_not_read():
    """Rows 1 and 3 chosen; step 0 reads rows 1, 3 and 0, step 1 reads row 1 alone. Lazy: row 3 stays where step 0
    put it. Dense: Adam on the chosen rows, so row 3 moves on its momentum; row 0 (not chosen) never moves."""
    after = {}
    for choice in ("lazy", "dense"):
        table = keras.Variable(np.zeros((5, 2), "float32"), name="table")
        opt = RowSubsetAdam(0.1, table.path, rows=[1, 3], sparse_rows=choice)
        opt.apply(
            [tf.IndexedSlices(tf.constant([[1.0, 1.0]] * 3), tf.constant([1, 3, 0]), tf.constant([5, 2]))], [table]
        )
        step0 = table.numpy().copy()
        opt.apply([tf.IndexedSlices(tf.constant([[1.0, -1.0]]), tf.constant([1]), tf.constant([5, 2]))], [table])
        after[choice] = (step0, table.numpy())
    (lazy0, lazy1), (dense0, dense1) = after["lazy"], after["dense"]
    np.testing.assert_array_equal(lazy0, dense0)  # step 0 read every chosen row: the same
    np.testing.assert_array_equal(lazy1[3], lazy0[3])
    assert np.all(dense1[3] < dense0[3] - 0.05)  # moved on: Adam's step with m > 0 and g = 0
    np.testing.assert_allclose(lazy1[1], dense1[1], rtol=1e-6)  # read at both steps: the same
    assert np.all(lazy1[[0, 2, 4]] == 0) and np.all(dense1[[0, 2, 4]] == 0)
    with pytest.raises(ConfigError, match="lazy, dense"):
        RowSubsetAdam(0.1, "t", rows=[1], sparse_rows="never")


def test_rest_scale_moves_everything_else_at_its_fraction():
    """rest_scale 0.1: chosen row 2 steps at the rate, read row 1 (not chosen) and the other weight at a tenth;
    lazily, unread rows 0, 3, 4, 5 stay. Adam's first step is lr * g / (|g| + eps) ~ lr * sign(g)."""
    table = keras.Variable(np.zeros((6, 2), "float32"), name="table")
    weight = keras.Variable(np.zeros(3, "float32"), name="w")
    g = tf.IndexedSlices(tf.constant([[1.0, -2.0], [0.5, -0.5]]), tf.constant([1, 2]), tf.constant([6, 2]))
    RowSubsetAdam(0.1, table.path, rows=[2], rest_scale=0.1).apply([g, tf.constant([2.0, -1.0, 0.0])], [table, weight])
    expected = np.zeros((6, 2), "float32")
    expected[1] = [-0.01, 0.01]
    expected[2] = [-0.1, 0.1]
    np.testing.assert_allclose(table.numpy(), expected, rtol=1e-4, atol=1e-7)  # eps: |g| of 0.5 is off by ~1e-5
    np.testing.assert_allclose(weight.numpy(), [-0.01, 0.01, 0.0], rtol=1e-4, atol=1e-7)


@pytest.mark.parametrize("sparse_rows", ["lazy", "dense"])
def test_rest_scale_is_adam_at_each_rows_rate_over_several_steps(sparse_rows):
    """Against Keras's Adam on copies: the chosen row follows Adam at lr, the other weight and (dense choice) every
    other row Adam at lr * rest_scale, unread rows moving on their momentum; lazily an unread row waits."""
    rng = np.random.default_rng(1)
    start = rng.normal(size=(5, 2)).astype("float32")
    table, weight = keras.Variable(start, name="table"), keras.Variable(np.ones(3, "float32"), name="w")
    full, rest, plain = (keras.Variable(start.copy()), keras.Variable(start.copy()), keras.Variable(np.ones(3)))
    ours = RowSubsetAdam(0.05, table.path, rows=[1], rest_scale=0.2, sparse_rows=sparse_rows)
    adam_full, adam_rest, adam_plain = (
        keras.optimizers.Adam(0.05),
        keras.optimizers.Adam(0.01),
        keras.optimizers.Adam(0.01),
    )
    reads = [[1, 3], [1, 3], [1]]  # row 3 is unread at the last step
    for ids in reads:
        values = rng.normal(size=(len(ids), 2)).astype("float32")
        dense = np.zeros((5, 2), "float32")
        dense[ids] = values
        w = rng.normal(size=3).astype("float32")
        ours.apply(
            [tf.IndexedSlices(tf.constant(values), tf.constant(ids), tf.constant([5, 2])), tf.constant(w)],
            [table, weight],
        )
        adam_full.apply([tf.constant(dense)], [full])
        adam_rest.apply([tf.constant(dense)], [rest])
        adam_plain.apply([tf.constant(w)], [plain])
    got = table.numpy()
    np.testing.assert_allclose(got[1], full.numpy()[1], rtol=1e-5)
    np.testing.assert_allclose(weight.numpy(), plain.numpy(), rtol=1e-5)
    if sparse_rows == "dense":
        np.testing.assert_allclose(got[[0, 2, 3, 4]], rest.numpy()[[0, 2, 3, 4]], rtol=1e-5)
    else:  # rows 0, 2, 4 never read; row 3 read twice, then waits
        np.testing.assert_array_equal(got[[0, 2, 4]], start[[0, 2, 4]])
        assert np.abs(got[3] - start[3]).max() > 1e-3 and np.abs(got[3] - rest.numpy()[3]).max() > 1e-4


def test_rest_scale_needs_the_table_and_round_trips():
    table, other = (
        keras.Variable(np.zeros((4, 2), "float32"), name="table"),
        keras.Variable(np.zeros(2, "float32"), name="w"),
    )
    RowSubsetAdam(0.1, table.path, rows=[0], rest_scale=0.5).build([table, other])  # the rest may train
    with pytest.raises(ConfigError, match="and the rest at rest_scale"):
        RowSubsetAdam(0.1, table.path, rows=[0], rest_scale=0.5).build([other])
    for bad in (-1.0, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="rest_scale must be a finite number >= 0"):
            RowSubsetAdam(0.1, "t", rows=[0], rest_scale=bad)
    again = RowSubsetAdam.from_config(RowSubsetAdam(0.1, "t", rows=[0], rest_scale=0.25).get_config())
    assert again.rest_scale == 0.25


def test_rest_scale_dense_is_adam_at_each_rows_own_rate_compiled():
    """The fused dense path under tf.function: rows 1 and 3 step at 1 and 4 times the rate, the rest at 0.25 times,
    through a gradient that repeats a row (a lookup's slices) and one that arrives dense; each row against Keras's
    Adam at its own rate on a copy."""
    rng = np.random.default_rng(2)
    start = rng.normal(size=(6, 3)).astype("float32")
    table = keras.Variable(start, name="table")
    ours = RowSubsetAdam(0.02, table.path, rows=[1, 3], scales=[1.0, 4.0], rest_scale=0.25, sparse_rows="dense")
    copies = {rate: keras.Variable(start.copy()) for rate in (0.02, 0.08, 0.005)}
    adams = {rate: keras.optimizers.Adam(rate) for rate in copies}
    step = tf.function(lambda g: ours.apply([g], [table]))
    for ids, dense_arrival in (([1, 4, 1], False), ([3, 0], False), ([2], True), ([5], False)):
        values = rng.normal(size=(len(ids), 3)).astype("float32")
        dense = np.zeros((6, 3), "float32")
        np.add.at(dense, ids, values)
        slices = tf.IndexedSlices(tf.constant(values), tf.constant(ids), tf.constant([6, 3]))
        g = tf.constant(dense) if dense_arrival else slices
        step(g)
        for rate, copy in copies.items():
            adams[rate].apply([tf.constant(dense)], [copy])
    got = table.numpy()
    np.testing.assert_allclose(got[1], copies[0.02].numpy()[1], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[3], copies[0.08].numpy()[3], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[[0, 2, 4, 5]], copies[0.005].numpy()[[0, 2, 4, 5]], rtol=1e-5, atol=1e-6)
    assert np.abs(got - start).min() > 1e-4  # every row moved (those unread at the last step on their momentum)


def test_rest_rows_lazy_beside_dense_chosen_rows_compiled():
    """sparse_rows dense, rest_rows lazy, under tf.function: chosen row 1 follows Adam at lr even at a step that does
    not read it; row 3 (not chosen, read at every step) follows Adam at lr * rest_scale; row 4, read at the first
    step only, then waits where dense Adam would move it on its momentum; the other weight is Adam at the rest's
    rate. Each against Keras's Adam on a copy."""
    rng = np.random.default_rng(3)
    start = rng.normal(size=(5, 2)).astype("float32")
    table, weight = keras.Variable(start, name="table"), keras.Variable(np.ones(3, "float32"), name="w")
    full, rest, plain = (keras.Variable(start.copy()), keras.Variable(start.copy()), keras.Variable(np.ones(3)))
    ours = RowSubsetAdam(0.05, table.path, rows=[1], rest_scale=0.2, sparse_rows="dense", rest_rows="lazy")
    adam_full, adam_rest, adam_plain = (
        keras.optimizers.Adam(0.05),
        keras.optimizers.Adam(0.01),
        keras.optimizers.Adam(0.01),
    )
    step = tf.function(lambda g, w: ours.apply([g, w], [table, weight]))
    row4 = []
    for ids in ([1, 3, 3, 4], [1, 3], [3]):  # row 1 unread at the last step
        values = rng.normal(size=(len(ids), 2)).astype("float32")
        dense = np.zeros((5, 2), "float32")
        np.add.at(dense, ids, values)
        w = rng.normal(size=3).astype("float32")
        step(tf.IndexedSlices(tf.constant(values), tf.constant(ids), tf.constant([5, 2])), tf.constant(w))
        adam_full.apply([tf.constant(dense)], [full])
        adam_rest.apply([tf.constant(dense)], [rest])
        adam_plain.apply([tf.constant(w)], [plain])
        row4.append(rest.numpy()[4])
    got = table.numpy()
    np.testing.assert_allclose(got[1], full.numpy()[1], rtol=1e-5)  # moved on its momentum at the last step
    np.testing.assert_allclose(got[3], rest.numpy()[3], rtol=1e-5)
    np.testing.assert_allclose(got[4], row4[0], rtol=1e-5)  # where the first step put it
    assert np.abs(row4[-1] - row4[0]).max() > 1e-3  # dense Adam moved it on
    np.testing.assert_array_equal(got[[0, 2]], start[[0, 2]])
    np.testing.assert_allclose(weight.numpy(), plain.numpy(), rtol=1e-5)
    again = RowSubsetAdam.from_config(ours.get_config())
    assert (again.sparse_rows, again.rest_rows) == ("dense", "lazy")
    with pytest.raises(ConfigError, match="rest_rows must be lazy or dense"):
        RowSubsetAdam(0.1, "t", rows=[0], rest_scale=0.1, sparse_rows="lazy", rest_rows="dense")
