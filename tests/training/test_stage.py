import numpy as np
import tensorflow as tf

from relkt.training.stage import length_sorted, text_dataset
from tests.helpers.tiny_muse import tiny_muse_encoder


class CountingEncoder:
    """Wraps an encoder; counts the batches its `preprocess` tokenizes (a variable: the count happens in tf.data)."""

    def __init__(self, encoder):
        self.encoder, self.calls = encoder, tf.Variable(0)

    def preprocess(self, texts):
        self.calls.assign_add(1)
        return self.encoder.preprocess(texts)


def test_every_batch_is_tokenized_once_before_training_and_targets_are_gathered_per_batch():
    encoder = tiny_muse_encoder()
    counting = CountingEncoder(encoder)
    texts = {"q": ["cat dog", "katze", "river flows", "hund fluss brot"], "d": ["a", "b b", "c", "d d d"]}
    table = np.arange(12, dtype="float32").reshape(6, 2)
    rows = np.array([[0, 3], [1, 4], [2, 5], [0, 4]], "int32")
    ds = text_dataset(texts, rows, counting, 3, target_table=table)
    assert int(counting.calls.numpy()) == 2 * 2  # two batches, two inputs: tokenized when the data set was built
    for _ in range(2):  # two passes read the cache: no batch is tokenized again
        batches = list(ds)
    assert int(counting.calls.numpy()) == 4
    (x0, y0), (x1, y1) = batches
    expected = encoder.preprocess(tf.constant(texts["q"][3:]))
    np.testing.assert_array_equal(x1["q"]["token_ids"].numpy(), expected["token_ids"].numpy())
    np.testing.assert_array_equal(y0.numpy(), table[rows[:3]])
    np.testing.assert_array_equal(y1.numpy(), table[rows[3:]])


def test_length_sorted_batches_hold_like_lengths_within_each_window():
    """8 examples, lengths 5 1 4 8 2 7 3 6 in order 0..7, batches of 2, windows of 2 batches: window 1 (examples
    0-3, lengths 5 1 4 8) sorts to 1 2 0 3 -> batches [1, 2] (1, 4) and [0, 3] (5, 8); window 2 (4-7, lengths 2 7 3
    6) sorts to 4 6 7 5 -> [4, 6] (2, 3) and [7, 5] (6, 7). Each window's two batches in an order the rng picks."""
    lengths = np.array([5, 1, 4, 8, 2, 7, 3, 6])
    order = np.arange(8)
    out = length_sorted(order, lengths, 2, 2, np.random.default_rng(0))
    batches = [tuple(b) for b in out.reshape(4, 2)]
    assert set(batches[:2]) == {(1, 2), (0, 3)} and set(batches[2:]) == {(4, 6), (7, 5)}
    assert sorted(out) == list(range(8))
    # padding: the sum of each batch's longest length, 4 + 8 + 3 + 7 = 22, against 8 + 8 + 7 + 6 = 29 unsorted
    assert sum(lengths[out].reshape(4, 2).max(1)) == 22
    # a last partial batch stays in its window, every example once
    odd = length_sorted(np.arange(7)[::-1], lengths[:7], 2, 2, np.random.default_rng(1))
    assert sorted(odd) == list(range(7)) and set(odd[-3:]) | set(odd[:4]) == set(range(7))
    # both batches shuffled over seeds: not always the short one first
    firsts = {tuple(length_sorted(order, lengths, 2, 2, np.random.default_rng(s))[:2]) for s in range(20)}
    assert firsts == {(1, 2), (0, 3)}
