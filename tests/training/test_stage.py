import numpy as np
import tensorflow as tf

from relkt.training.stage import text_dataset
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
