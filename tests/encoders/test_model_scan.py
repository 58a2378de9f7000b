"""A model folder is code: a SavedModel whose graph writes a file is refused before it loads, and loads when the
caller trusts it; relkt's own exports pass the scan."""

from __future__ import annotations

import pytest
import tensorflow as tf

from relkt.encoders import build_encoder
from relkt.encoders.export import export_encoder
from relkt.encoders.model_scan import denied_ops
from relkt.errors import EncoderError
from relkt.io import trusting_models
from tests.helpers.tiny_muse import tiny_muse_encoder


class WritesAFile(tf.Module):
    def __init__(self, target: str):
        super().__init__()
        self.target = target
        self.w = tf.Variable(tf.ones([4]))

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def __call__(self, strings):
        tf.io.write_file(self.target, "written by a model")
        return tf.tile(self.w[None, :], [tf.size(strings), 1])


def test_a_savedmodel_that_writes_a_file_is_refused_and_loads_when_trusted(tmp_path):
    target = tmp_path / "outside" / "pwned.txt"
    target.parent.mkdir()
    tf.saved_model.save(WritesAFile(str(target)), str(tmp_path / "evil"))
    assert [op for op, _ in denied_ops(tmp_path / "evil")] == ["WriteFile"]
    with pytest.raises(EncoderError, match=r"runs WriteFile .*a model folder is code.*--trust-model"):
        build_encoder(f"hub:{tmp_path / 'evil'}", trainable=False)
    assert not target.exists()
    with trusting_models():
        encoder = build_encoder(f"hub:{tmp_path / 'evil'}", trainable=False)
        encoder.encode(["a text"])
    assert target.exists()  # what trusting means: its graph ran


def test_relkt_exports_pass_the_scan(tmp_path):
    export_encoder(tiny_muse_encoder(seed=1), tmp_path / "best")
    assert denied_ops(tmp_path / "best") == []
    assert build_encoder(f"muse:{tmp_path / 'best'}", trainable=False).dim == 16
    assert build_encoder(f"hub:{tmp_path / 'best'}", trainable=False).dim == 16
