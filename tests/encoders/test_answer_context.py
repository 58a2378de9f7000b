"""Answer context, learned: an encoder that learned to mix each candidate with its paragraph carries the weight into
its export (relkt.json and a `response_encoder` endpoint), every spec that loads the export hands it back, and
scoring mixes candidates exactly as the export serves them (or not at all when asked)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import tensorflow as tf

from relkt import api
from relkt.config import PoolSection
from relkt.data.selection import load_split
from relkt.encoders import build_encoder
from relkt.encoders.export import export_encoder, read_metadata
from relkt.errors import EncoderError
from relkt.metrics.answer_context import context_weight, encode_candidates, mix
from relkt.names import ANSWER_CONTEXT_WEIGHT
from tests.helpers.tiny_muse import tiny_muse_encoder

SENTENCES = ["the river flows north", "it rains in spring", "the river is long"]
PARAGRAPHS = ["rivers and seas", "weather of the year", "rivers and seas"]


def mixing_export(tmp_path, weight: float = 0.75):
    encoder = tiny_muse_encoder(seed=3)
    setattr(encoder, ANSWER_CONTEXT_WEIGHT, tf.Variable(weight))  # as the in-batch model leaves it
    return encoder, export_encoder(encoder, tmp_path / "best")


def test_the_mix_is_the_normalised_sum_and_each_paragraph_is_encoded_once():
    encoder = tiny_muse_encoder(seed=3)
    calls = []
    original = encoder.encode
    encoder.encode = lambda texts, **kw: calls.append(list(texts)) or original(texts, **kw)
    got = encode_candidates(encoder, SENTENCES, PARAGRAPHS, 0.75)
    assert calls[1] == sorted(set(PARAGRAPHS))  # two paragraphs for three sentences
    s, c = original(SENTENCES), original(PARAGRAPHS)
    want = (s + 0.75 * c) / np.linalg.norm(s + 0.75 * c, axis=1, keepdims=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, rtol=1e-5)


def test_the_export_serves_mixed_candidates_and_every_spec_carries_the_weight(tmp_path):
    import tensorflow_hub as hub

    encoder, out = mixing_export(tmp_path)
    assert read_metadata(out)["answer_context"] == {"weight": 0.75, "endpoint": "response_encoder"}
    model = hub.load(str(out))
    served = model.response_encoder(tf.constant(SENTENCES), tf.constant(PARAGRAPHS)).numpy()
    np.testing.assert_allclose(served, encode_candidates(encoder, SENTENCES, PARAGRAPHS, 0.75), atol=1e-5)
    for spec in (f"hub:{out}", f"muse:{out}"):
        assert context_weight(build_encoder(spec)) == pytest.approx(0.75)
    plain = export_encoder(tiny_muse_encoder(seed=3), tmp_path / "plain")
    assert "answer_context" not in read_metadata(plain) and context_weight(build_encoder(f"hub:{plain}")) is None


def test_a_weight_that_cannot_mean_anything_is_refused_naming_the_file(tmp_path):
    _, out = mixing_export(tmp_path)
    meta = read_metadata(out)
    meta["answer_context"]["weight"] = "much"
    (out / "relkt.json").write_text(json.dumps(meta))
    with pytest.raises(EncoderError, match=r"relkt.json: answer_context.weight: expected a number >= 0, got 'much'"):
        build_encoder(f"hub:{out}")


def test_scoring_mixes_candidates_as_the_export_serves_them_or_not_when_asked(synthetic_data, tmp_path):
    _, out = mixing_export(tmp_path, weight=2.0)
    data = PoolSection(data_dir=str(synthetic_data))
    spec = f"hub:{out}"
    mixed = api.score(spec, data, "all", xx_en_units=[], progress=False)
    alone = api.score(spec, data, "all", xx_en_units=[], progress=False, answer_context=False)
    assert mixed.results["setup"]["answer_context"] == pytest.approx(2.0)
    assert alone.results["setup"]["answer_context"] is None
    assert mixed.metric("lareqa/mAP") != alone.metric("lareqa/mAP")
    # the scorer's candidate vectors are the export's response_encoder's
    import tensorflow_hub as hub

    from relkt.metrics.lareqa_evaluator import LareqaEvaluator

    pool = load_split(data, "all")
    _, c = LareqaEvaluator(pool).encode(build_encoder(spec))
    model = hub.load(str(out))
    served = model.response_encoder(
        tf.constant([x.sentence for x in pool.candidates]), tf.constant([x.context for x in pool.candidates])
    )
    np.testing.assert_allclose(c, served.numpy(), atol=1e-5)
    assert mix(c[:1], c[:1], 0.0).shape == (1, c.shape[1])


def test_the_card_of_a_mixing_export_shows_how_to_encode_answers(tmp_path):
    _, out = mixing_export(tmp_path)
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "model.response_encoder(" in card and "weight 0.75" in card
    plain = export_encoder(tiny_muse_encoder(seed=3), tmp_path / "plain")
    assert "response_encoder" not in (plain / "README.md").read_text(encoding="utf-8")
