"""The in-batch model's cached step (gradient caching) gives the gradients of the whole batch in one graph."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from relkt.stages.in_batch_model import InBatchModel
from tests.helpers.tiny_muse import tiny_muse_encoder

QUESTIONS = ["the cat sat", "a dog ran far", "birds sing", "rain falls now", "the sun is warm", "snow"]
ANSWERS = ["the cat is black", "dogs run", "songs of birds", "wet rain", "warm sun today", "cold snow falls"]
NEGATIVES = ["a red mat", "", "morning", "clouds", "the moon", "ice"]


def batch(encoder):
    x = {
        "anchor": encoder.preprocess(tf.constant(QUESTIONS)),
        "positive": encoder.preprocess(tf.constant(ANSWERS)),
        "negative_0": encoder.preprocess(tf.constant(NEGATIVES)),
    }
    ids = np.arange(6)
    negative_ids = np.where([bool(t) for t in NEGATIVES], 100 + ids, -1)
    y = np.stack([ids, negative_ids, ids], axis=1).astype(np.int32)
    return x, tf.constant(y)


def dense(grads):
    return [tf.convert_to_tensor(g).numpy() for g in grads]


@pytest.mark.parametrize("symmetric", [False, True])
def test_cached_and_uncached_steps_give_the_same_loss_and_gradients(symmetric):
    encoder = tiny_muse_encoder(seed=4)
    x, y = batch(encoder)
    whole = InBatchModel(encoder, batch_size=6, negatives_per_row=1, chunk_size=0, symmetric=symmetric)
    cached = InBatchModel(encoder, batch_size=6, negatives_per_row=1, chunk_size=4, symmetric=symmetric)
    loss_w, grads_w, scale_w = whole.gradients(x, y)
    loss_c, grads_c, scale_c = cached.gradients(x, y)
    assert float(loss_c) == pytest.approx(float(loss_w), rel=1e-6)
    assert float(scale_c) == pytest.approx(float(scale_w), rel=1e-4)
    assert len(grads_w) == len(grads_c) == len(encoder.trainable_variables)
    assert any(isinstance(g, tf.IndexedSlices) for g in grads_c)  # the token table's gradient stays sparse
    for gw, gc in zip(dense(grads_w), dense(grads_c)):
        np.testing.assert_allclose(gc, gw, rtol=1e-3, atol=1e-6)  # float32 sums in another order, nothing more
    assert max(np.abs(g).max() for g in dense(grads_w)) > 1e-3  # the loss reaches the weights


def test_a_fixed_scale_stays_and_a_trainable_one_moves():
    encoder = tiny_muse_encoder(seed=4)
    x, y = batch(encoder)
    for trainable in (False, True):
        model = InBatchModel(encoder, batch_size=6, negatives_per_row=1, chunk_size=3, scale_trainable=trainable)
        model.compile(optimizer="adam")
        model.train_step((x, y))
        moved = abs(float(tf.exp(model.log_scale)) - 20.0) > 1e-6
        assert moved == trainable
