"""The in-batch model's cached step (gradient caching) gives the gradients of the whole batch in one graph."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from relkt.metrics.answer_context import context_weight, mix
from relkt.stages.in_batch_model import InBatchModel
from tests.helpers.tiny_muse import tiny_muse_encoder

QUESTIONS = ["the cat sat", "a dog ran far", "birds sing", "rain falls now", "the sun is warm", "snow"]
ANSWERS = ["the cat is black", "dogs run", "songs of birds", "wet rain", "warm sun today", "cold snow falls"]
NEGATIVES = ["a red mat", "", "morning", "clouds", "the moon", "ice"]


PARAGRAPHS = ["cats and mats", "dogs in the park", "a forest at dawn", "weather", "a summer day", "winter"]


def batch(encoder, contexts: bool = False):
    texts = {"anchor": QUESTIONS, "positive": ANSWERS, "negative_0": NEGATIVES}
    if contexts:
        texts.update(positive_context=PARAGRAPHS, negative_0_context=PARAGRAPHS[::-1])
    x = {name: encoder.preprocess(tf.constant(column)) for name, column in texts.items()}
    ids = np.arange(6)
    negative_ids = np.where([bool(t) for t in NEGATIVES], 100 + ids, -1)
    y = np.stack([ids, negative_ids, ids], axis=1).astype(np.int32)
    return x, tf.constant(y)


def dense(grads):
    return [tf.convert_to_tensor(g).numpy() for g in grads]


@pytest.mark.parametrize("symmetric,context", [(False, False), (True, False), (False, True)])
def test_cached_and_uncached_steps_give_the_same_loss_and_gradients(symmetric, context):
    encoder = tiny_muse_encoder(seed=4)
    x, y = batch(encoder, contexts=context)
    kw = dict(batch_size=6, negatives_per_row=1, symmetric=symmetric, answer_context=context)
    whole = InBatchModel(encoder, chunk_size=0, **kw)
    cached = InBatchModel(encoder, chunk_size=4, **kw)
    loss_w, grads_w, scalars_w = whole.gradients(x, y)
    loss_c, grads_c, scalars_c = cached.gradients(x, y)
    assert float(loss_c) == pytest.approx(float(loss_w), rel=1e-6)
    assert len(scalars_w) == len(scalars_c) == (2 if context else 1)  # the log scale, the context weight
    for sw, sc in zip(scalars_w, scalars_c):
        assert float(sc) == pytest.approx(float(sw), rel=1e-4, abs=1e-7)
    if context:
        assert abs(float(scalars_w[1])) > 1e-6  # the loss reaches the context weight
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


def test_answer_context_mixes_each_candidate_with_its_paragraph_and_its_weight_learns():
    encoder = tiny_muse_encoder(seed=4)
    x, y = batch(encoder, contexts=True)
    model = InBatchModel(encoder, batch_size=6, negatives_per_row=1, answer_context=True, context_weight=0.5)
    assert model.input_names == ["anchor", "positive", "negative_0", "positive_context", "negative_0_context"]
    assert context_weight(encoder) == pytest.approx(0.5)  # the encoder carries it: scoring and export read it
    pred = model.embeddings(x)
    s, c = encoder.encode(ANSWERS), encoder.encode(PARAGRAPHS)
    np.testing.assert_allclose(pred["answers"].numpy(), mix(s, c, 0.5), rtol=1e-4, atol=1e-5)
    model.compile(optimizer="adam")
    logs = model.train_step((x, y))
    assert float(logs["context_weight"]) != pytest.approx(0.5, abs=1e-7)
    assert context_weight(encoder) == pytest.approx(float(logs["context_weight"]))


def test_a_translation_pair_row_is_never_mixed_with_a_paragraph():
    encoder = tiny_muse_encoder(seed=4)
    x, y = batch(encoder, contexts=True)
    model = InBatchModel(encoder, batch_size=6, negatives_per_row=1, answer_context=True, pair_id_start=3)
    emb = {name: encoder(x[name]) for name in model.input_names}
    pair = tf.cast(y[:, 0], tf.int64) >= 3  # rows 3..5 are pairs: their answers are their sentences alone
    answers = model._pred(emb, has_context=tf.logical_not(pair))["answers"].numpy()
    np.testing.assert_allclose(answers[3:], encoder.encode(ANSWERS[3:]), rtol=1e-4, atol=1e-5)
    assert np.abs(answers[:3] - encoder.encode(ANSWERS[:3])).max() > 1e-3
