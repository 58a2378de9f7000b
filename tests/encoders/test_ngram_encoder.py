import numpy as np
import pytest

from relkt.encoders import build_encoder
from relkt.encoders.ngram_encoder import NgramEncoder

TEXTS = ["How long do cats sleep?", "ทีมรับของแพนเธอร์ส", "黑豹队的防守", "पैंथर्स की डिफ़ेन्स", "", "How long do cats sleep?"]


def test_any_script_unit_rows_in_input_order():
    enc = NgramEncoder(dim=16, num_buckets=512)
    x = enc.encode(TEXTS, batch_size=4)
    assert x.shape == (6, 16) and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(x[0], x[5], atol=1e-6)  # same text, different batch position
    assert abs(float(x[0] @ x[1])) < 0.99
    # Batch size and order do not change a text's vector.
    np.testing.assert_allclose(enc.encode(TEXTS[::-1], batch_size=1)[::-1], x, atol=1e-5)


def test_preprocess_hashes_ngrams_in_graph():
    enc = NgramEncoder(dim=8, num_buckets=100, ngram_sizes=(1, 2), max_ngrams=5)
    ids = enc.preprocess(["ab", "abcdefgh"]).numpy()
    # "ab" with boundary marks is 4 chars: 4 unigrams + 3 bigrams = 7 -> truncated to 5; both rows full.
    assert ids.shape == (2, 5) and (ids > 0).all() and (ids < 100).all()
    assert (ids[0, :3] == ids[1, :3]).all()  # shared prefix "\x02ab" gives the same first unigrams


def test_config_round_trip():
    enc = NgramEncoder(dim=8, num_buckets=64, ngram_sizes=(2, 3), max_ngrams=32, seed=3)
    clone = NgramEncoder.from_config(enc.get_config())
    assert clone.get_config() == enc.get_config()
    enc.encode(["x"]), clone.encode(["x"])
    clone.set_weights(enc.get_weights())
    np.testing.assert_allclose(clone.encode(TEXTS), enc.encode(TEXTS), atol=1e-6)


def test_invalid_options_fail_at_once():
    with pytest.raises(ValueError, match="dim > 0"):
        NgramEncoder(dim=0)


def test_build_encoder_unknown_spec_lists_valid():
    from relkt.errors import EncoderError

    with pytest.raises(EncoderError, match="unknown encoder spec 'word2vec'; valid: bert:PATH, hub:HANDLE, minilm"):
        build_encoder("word2vec")
    enc = build_encoder("ngram", trainable=False, dim=8, num_buckets=64)
    assert isinstance(enc, NgramEncoder) and not enc.trainable
