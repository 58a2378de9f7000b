import numpy as np
import pytest

from relkt.encoders import build_encoder, minilm_path
from relkt.encoders.bert_encoder import BertEncoder
from relkt.errors import EncoderError
from tests.helpers.tiny_bert import VOCAB, tiny_bert


def test_preprocess_adds_cls_sep_strips_accents_and_trims_padding():
    enc = tiny_bert(max_length=6)
    f = enc.preprocess(["Cats sleep", "Where does the river flow into the sea?", "Café"])
    ids = f["token_ids"].numpy()
    cls, sep = VOCAB.index("[CLS]"), VOCAB.index("[SEP]")
    # "cats sleep" -> [CLS] cats sleep [SEP] + 2 pads; the long one is truncated to 4 pieces + [CLS]/[SEP].
    assert ids.shape == (3, 6)
    assert ids[0].tolist() == [cls, VOCAB.index("cats"), VOCAB.index("sleep"), sep, 0, 0]
    assert ids[1, 0] == cls and ids[1, -1] == sep
    assert ids[2, 1] == VOCAB.index("cafe")  # "Café" -> "cafe" (accent stripped), not [UNK]
    assert f["padding_mask"].numpy()[0].tolist() == [True] * 4 + [False] * 2


def test_mean_pools_over_the_mask_and_normalises():
    enc = tiny_bert()
    texts = ["the cat sleeps", "how long do cats sleep at night ?"]
    x = enc.encode(texts, batch_size=2)
    f = enc.preprocess(texts[:1])  # alone: no padding at all
    seq = enc.backbone(f)["sequence_output"].numpy()[0]
    expected = seq.mean(axis=0)
    np.testing.assert_allclose(x[0], expected / np.linalg.norm(expected), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1, atol=1e-5)


def test_config_round_trip():
    enc = tiny_bert()
    clone = BertEncoder.from_config(enc.get_config())
    assert clone.get_config()["max_length"] == enc.max_length
    clone.encode(["cat"])
    enc.encode(["cat"])
    clone.set_weights(enc.get_weights())
    np.testing.assert_allclose(clone.encode(["the dog", "mice"]), enc.encode(["the dog", "mice"]), atol=1e-6)


def test_missing_directory_is_named(tmp_path):
    with pytest.raises(EncoderError, match="nope: no such model directory"):
        build_encoder(f"bert:{tmp_path / 'nope'}")


@pytest.mark.slow
def test_minilm_reproduces_the_published_vector():
    try:
        minilm_path()
    except EncoderError as e:
        pytest.skip(str(e))
    x = build_encoder("minilm").encode(["This is an example sentence"])
    # sentence-transformers' all-MiniLM-L6-v2 (PyTorch, exact GELU) gives 0.0677, 0.0635, 0.0487, 0.0793, 0.0374;
    # keras-hub's tanh-GELU differs by ~2e-4.
    np.testing.assert_allclose(x[0, :5], [0.06766, 0.06350, 0.04871, 0.07931, 0.03745], atol=1e-3)
