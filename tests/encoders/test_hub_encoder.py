import numpy as np
import pytest
import tensorflow as tf

from relkt.encoders import build_encoder
from relkt.encoders.hub_encoder import HubEncoder
from relkt.errors import EncoderError
from relkt.losses import TripletLoss
from tests.helpers.tiny_muse import make_tiny_muse

ANCHORS = ["cat sleep night", "dog hunt day", "แมว นอน กลางคืน", "猫 睡觉 夜晚"]
POSITIVES = ["katze schlafen nacht", "hund jagen tag", "cat sleep night", "katze schlafen nacht"]
NEGATIVES = ["fluss fließt lang", "brot gebacken wo", "河 流动 长", "面包 烤 哪里"]


@pytest.fixture(scope="module")
def tiny_muse(tmp_path_factory):
    return make_tiny_muse(tmp_path_factory.mktemp("muse") / "tiny_muse")


def weights_of(enc):
    return [w.numpy().copy() for w in enc.weights]


def test_weights_wrap_the_savedmodel_variables(tiny_muse):
    enc = build_encoder(f"hub:{tiny_muse}")
    assert isinstance(enc, HubEncoder) and enc.dim == 16
    assert [w.trainable for w in enc.weights] == [True, True, False]  # the SavedModel's own split
    # No copy: writing through the Keras variable changes what the SavedModel computes.
    before = enc.encode(ANCHORS[:1])
    enc.weights[1].assign(enc.weights[1].numpy() * 0 + np.eye(16, k=1, dtype=np.float32))
    assert not np.allclose(enc.encode(ANCHORS[:1]), before)


def test_two_loads_are_independent(tiny_muse):
    a, b = build_encoder(f"hub:{tiny_muse}"), build_encoder(f"hub:{tiny_muse}", trainable=False)
    b_before = weights_of(b)
    a.weights[0].assign(a.weights[0].numpy() + 1)
    for w, w0 in zip(weights_of(b), b_before):
        np.testing.assert_array_equal(w, w0)
    assert not b.trainable_weights


def train_triplets(enc, steps=5):
    """A few compiled (graph, not eager) optimizer steps on triplets through the Keras 3 API."""
    loss_fn = TripletLoss(margin=0.5)
    optimizer = __import__("keras").optimizers.Adam(0.05)
    a, p, n = (tf.constant(x) for x in (ANCHORS, POSITIVES, NEGATIVES))

    @tf.function
    def step():
        with tf.GradientTape() as tape:
            y = tf.stack([enc(enc._preprocess(x), training=True) for x in (a, p, n)], axis=1)
            loss = loss_fn(tf.zeros([4]), y)
        grads = tape.gradient(loss, enc.trainable_weights)
        optimizer.apply_gradients(zip(grads, enc.trainable_weights))
        return loss

    return [float(step()) for _ in range(steps)]


def test_compiled_training_lowers_triplet_loss_and_frozen_copy_stays(tiny_muse):
    student = build_encoder(f"hub:{tiny_muse}")
    teacher = build_encoder(f"hub:{tiny_muse}", trainable=False)
    t_before, s_before = weights_of(teacher), weights_of(student)
    losses = train_triplets(student, steps=8)
    assert losses[-1] < losses[0]
    changed = [not np.array_equal(w, w0) for w, w0 in zip(weights_of(student), s_before)]
    assert changed == [True, True, False]  # trainable ones moved, the non-trainable one did not
    for w, w0 in zip(weights_of(teacher), t_before):
        np.testing.assert_array_equal(w, w0)  # bit-identical


def test_offline_tfhub_handle_fails_clearly(monkeypatch):
    import tensorflow_hub as hub

    def offline(handle):
        raise OSError("URL fetch failure on https://tfhub.dev/...: Temporary failure in name resolution")

    monkeypatch.setattr(hub, "load", offline)
    with pytest.raises(
        EncoderError,
        match=(
            r"could not fetch https://tfhub.dev/google/universal-sentence-encoder-multilingual/3 "
            r".*TFHUB_CACHE_DIR.*hub:/path"
        ),
    ):
        build_encoder("muse-hub")


def test_missing_directory_is_named(tmp_path):
    with pytest.raises(EncoderError, match="nothing-here: no such SavedModel directory"):
        build_encoder(f"hub:{tmp_path / 'nothing-here'}")
