"""PairModel encodes an input only on the rows that hold one (`{name}_present`), and training reads the same loss
and gradients as when every row was encoded."""

from __future__ import annotations

import numpy as np
import pytest
import tensorflow as tf

from relkt.losses import DistillationLoss
from relkt.stages.pair_model import PairModel
from relkt.training.stage import PRESENT, text_dataset
from tests.helpers.tiny_muse import tiny_muse_encoder

QUESTIONS = ["the cat sat on the mat", "a dog ran", "birds sing in the morning", "rain falls", "the sun is warm"]
DOCUMENTS = ["the mat is red and the cat is black", "", "morning songs of small birds", "", ""]


@pytest.fixture(scope="module")
def student():
    return tiny_muse_encoder(seed=3)


def batch(student, present=None, documents=DOCUMENTS):
    inputs = {"q": student.preprocess(tf.constant(QUESTIONS)), "d": student.preprocess(tf.constant(documents))}
    if present is not None:
        inputs["d" + PRESENT] = tf.constant(present)
    return inputs


def targets(student, documents=DOCUMENTS):
    """Teacher targets as the student trainer caches them: T(d) is a zero row where there is no document."""
    rng = np.random.default_rng(0)
    t = rng.normal(size=(len(QUESTIONS), 2, student.dim)).astype(np.float32)
    t /= np.linalg.norm(t, axis=-1, keepdims=True)
    t[[not d for d in documents], 1] = 0.0
    return tf.constant(t)


def loss_and_gradients(model, loss, inputs, y):
    with tf.GradientTape() as tape:
        value = tf.reduce_mean(loss(y, model(inputs, training=True)))
    variables = model.student.trainable_variables
    grads = [tf.convert_to_tensor(g) for g in tape.gradient(value, variables)]
    return float(value), grads


def test_flagged_rows_are_encoded_as_in_the_whole_batch_and_the_rest_are_zero(student):
    model = PairModel(student, ["q", "d"])
    whole = model(batch(student)).numpy()
    flags = [bool(d) for d in DOCUMENTS]
    some = model(batch(student, flags)).numpy()
    np.testing.assert_allclose(some[:, 0], whole[:, 0], atol=1e-5)  # the question column is not flagged
    np.testing.assert_allclose(some[flags, 1], whole[flags, 1], atol=1e-5)
    assert not some[[not f for f in flags], 1].any()  # no document: a zero row, never the embedding of ""
    assert np.abs(whole[[not f for f in flags], 1]).sum() > 0  # (which is not zero: the flags change the output)


def test_loss_and_gradients_equal_those_of_encoding_every_document(student):
    model = PairModel(student, ["q", "d"])
    loss = DistillationLoss(weights={"beta": 1.0, "lam": 1.0, "omega": 1.0})
    y = targets(student)
    full_loss, full_grads = loss_and_gradients(model, loss, batch(student), y)
    some_loss, some_grads = loss_and_gradients(model, loss, batch(student, [bool(d) for d in DOCUMENTS]), y)
    assert some_loss == pytest.approx(full_loss, rel=1e-5)
    assert len(some_grads) == len(full_grads) > 0
    for a, b in zip(some_grads, full_grads):
        # float32 sums in another order: elements 1.2e-4 (relative), 2.4e-6 (absolute) apart on one machine
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5)


def test_a_batch_without_any_document_trains_the_question_side_only(student):
    model = PairModel(student, ["q", "d"])
    none = [""] * len(QUESTIONS)
    out = model(batch(student, [False] * len(QUESTIONS), none)).numpy()
    assert out.shape == (len(QUESTIONS), 2, student.dim)
    assert not out[:, 1].any()
    value, grads = loss_and_gradients(
        model,
        DistillationLoss(weights={"beta": 1.0, "lam": 1.0}),
        batch(student, [False] * 5, none),
        targets(student, none),
    )
    assert np.isfinite(value) and value > 0
    assert all(np.isfinite(g).all() for g in grads) and any(np.abs(g).sum() > 0 for g in grads)


def test_text_dataset_batches_the_flags_beside_the_features(student):
    ds = text_dataset(
        {"q": QUESTIONS, "d": DOCUMENTS},
        np.zeros(len(QUESTIONS), np.float32),
        student,
        batch_size=3,
        present={"d": [bool(d) for d in DOCUMENTS]},
    )
    flags = [x["d" + PRESENT].numpy().tolist() for x, _ in ds]
    assert flags == [[True, False, True], [False, False]]
    x, _ = next(iter(ds))
    assert set(x) == {"q", "d", "d" + PRESENT} and set(x["d"]) == {"token_ids", "padding_mask"}


def test_text_dataset_refuses_flags_for_an_input_it_does_not_have(student):
    with pytest.raises(ValueError, match=r"present names inputs \['doc'\]"):
        text_dataset({"q": QUESTIONS}, np.zeros(5, np.float32), student, 2, present={"doc": [True] * 5})


@pytest.mark.parametrize("chunks", [2, 3, 8])  # 8 runs over 5 rows: some runs are empty
@pytest.mark.parametrize("flagged", [False, True])
def test_length_chunks_give_the_whole_pass_embeddings_loss_and_gradients(student, chunks, flagged):
    """Each input's rows encoded in runs of like length, each cut to its own longest: the same as one pass over the
    batch (flags or not), row for row; the loss and every gradient too."""
    flags = [bool(d) for d in DOCUMENTS] if flagged else None
    one, cut = PairModel(student, ["q", "d"]), PairModel(student, ["q", "d"], length_chunks=chunks)
    inputs = batch(student, flags)
    np.testing.assert_allclose(cut(inputs).numpy(), one(inputs).numpy(), atol=1e-5)
    loss = DistillationLoss(weights={"beta": 1.0, "lam": 1.0, "omega": 1.0})
    y = targets(student)
    one_loss, one_grads = loss_and_gradients(one, loss, inputs, y)
    cut_loss, cut_grads = loss_and_gradients(cut, loss, inputs, y)
    assert cut_loss == pytest.approx(one_loss, rel=1e-5)
    for a, b in zip(cut_grads, one_grads):  # sums over other widths round differently: a scale-relative tolerance
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5 * np.abs(b).max())


def test_length_chunks_cut_each_run_to_its_own_longest(student):
    """Questions of 6, 3, 5, 2, 4 words (+ <s> and </s> a row, and pieces per word >= 1) in 2 runs: the short run
    (rows 3, 1: the two shortest) is encoded at most as wide as its longer row, never the batch's width."""
    widths = []
    original = student.call

    def recording(features, training=False):
        widths.append(int(features["token_ids"].shape[1]))
        return original(features, training=training)

    student.call = recording
    try:
        PairModel(student, ["q"], length_chunks=2)({"q": student.preprocess(tf.constant(QUESTIONS))})
    finally:
        del student.call
    lengths = student.preprocess(tf.constant(QUESTIONS))["padding_mask"].numpy().sum(1)
    short = sorted(lengths)[:2]
    assert widths == [short[-1], max(lengths)] and short[-1] < max(lengths)


def test_length_chunks_need_features_with_a_padding_mask(student):
    model = PairModel(student, ["q"], length_chunks=2)
    with pytest.raises(ValueError, match="padding_mask"):
        model({"q": {"token_ids": tf.constant([[1, 2], [3, 4]])}})
    with pytest.raises(ValueError, match="length_chunks must be >= 1"):
        PairModel(student, ["q"], length_chunks=0)
