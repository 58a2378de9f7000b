"""The encoder kind table: a kind defined in this test file alone (nothing under relkt/ changed) is built from a spec,
listed in the unknown-spec error, and trains a tiny teacher."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relkt.cli import train_teacher
from relkt.encoders import ENCODER_KINDS, EncoderKind, build_encoder, register_encoder_kind
from relkt.encoders.encoder_kind import spec_usages
from relkt.encoders.ngram_encoder import NgramEncoder
from relkt.errors import ConfigError, EncoderError
from tests.helpers.runs import tiny_config


class SmallNgramKind(EncoderKind):
    """`small-ngram:DIM`: an n-gram encoder of DIM dimensions over 512 buckets."""

    name, usage, argument = "small-ngram", ("small-ngram:DIM",), "required"

    def build(self, arg: str, trainable: bool = True, **options):
        return NgramEncoder(dim=int(arg), num_buckets=512, **options)


@pytest.fixture
def small_ngram():
    register_encoder_kind(SmallNgramKind)
    yield
    ENCODER_KINDS.pop("small-ngram")


def test_the_built_in_kinds_are_in_the_table():
    assert spec_usages() == [
        "bert:PATH",
        "hub:HANDLE",
        "minilm",
        "muse",
        "muse:DIR",
        "muse-hub",
        "muse-large-hub",
        "ngram",
    ]


def test_a_kind_registered_outside_relkt_builds_from_its_spec(small_ngram):
    encoder = build_encoder("small-ngram:12", trainable=False)
    assert isinstance(encoder, NgramEncoder) and not encoder.trainable
    emb = encoder.encode(["a question", "an answer"])
    assert emb.shape == (2, 12) and np.allclose(np.linalg.norm(emb, axis=1), 1, atol=1e-5)
    with pytest.raises(EncoderError, match=r"unknown encoder spec 'small-ngram'; valid: .*small-ngram:DIM"):
        build_encoder("small-ngram")  # its argument is required
    with pytest.raises(EncoderError, match="unknown encoder spec 'ngram:3'"):
        build_encoder("ngram:3")  # a kind without an argument takes none
    with pytest.raises(ConfigError, match="is taken by"):
        register_encoder_kind(type("OtherKind", (SmallNgramKind,), {}))


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_tiny_teacher_trains_on_a_registered_kind(small_ngram, synthetic_data, tmp_path):
    cfg = tiny_config(tmp_path, synthetic_data, **{"encoder.spec": "small-ngram:16", "encoder.options": {}})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["anchors"] == 42 and summary["best"]["value"] > 0
