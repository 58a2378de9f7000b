"""A model folder is code: a SavedModel that can run an op off the allowlist is refused before it loads, whatever its
functions are named, and loads when the caller trusts it; relkt's own exports pass the scan."""

from __future__ import annotations

import pytest
import tensorflow as tf
from google.protobuf import text_format

from relkt.encoders import build_encoder
from relkt.encoders.export import export_encoder
from relkt.encoders.model_scan import ALLOWED_OPS, refused_ops
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
    assert [op for op, _ in refused_ops(tmp_path / "evil")] == ["WriteFile"]
    with pytest.raises(EncoderError, match=r"runs WriteFile .*allowlist.*a model folder is code.*--trust-model"):
        build_encoder(f"hub:{tmp_path / 'evil'}", trainable=False)
    assert not target.exists()
    with trusting_models():
        encoder = build_encoder(f"hub:{tmp_path / 'evil'}", trainable=False)
        encoder.encode(["a text"])
    assert target.exists()  # what trusting means: its graph ran


def test_relkt_exports_pass_the_scan(tmp_path):
    export_encoder(tiny_muse_encoder(seed=1), tmp_path / "best")
    assert refused_ops(tmp_path / "best") == []
    assert build_encoder(f"muse:{tmp_path / 'best'}", trainable=False).dim == 16
    assert build_encoder(f"hub:{tmp_path / 'best'}", trainable=False).dim == 16


def _rename_function(model_dir, old: str, new: str) -> None:
    """Give the SavedModel's function `old` the name `new` everywhere the model names it."""
    from tensorflow.core.protobuf import saved_model_pb2

    pb = model_dir / "saved_model.pb"
    model = saved_model_pb2.SavedModel()
    model.ParseFromString(pb.read_bytes())
    text = text_format.MessageToString(model).replace(f'"{old}"', f'"{new}"')
    pb.write_bytes(text_format.Parse(text, saved_model_pb2.SavedModel()).SerializeToString())


def test_a_file_writing_call_named_like_the_checkpoint_saver_is_still_refused(tmp_path):
    target = tmp_path / "outside" / "pwned.txt"
    target.parent.mkdir()
    tf.saved_model.save(WritesAFile(str(target)), str(tmp_path / "evil"), signatures={})
    [(_, where)] = refused_ops(tmp_path / "evil")
    _rename_function(tmp_path / "evil", where.removeprefix("function "), "__inference__traced_save_99999")
    assert refused_ops(tmp_path / "evil") == [("WriteFile", "function __inference__traced_save_99999")]
    with pytest.raises(EncoderError, match=r"runs WriteFile"):
        build_encoder(f"hub:{tmp_path / 'evil'}", trainable=False)
    assert not target.exists()


class CachesADataset(tf.Module):
    def __init__(self, cache: str):
        super().__init__()
        self.cache = cache

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def __call__(self, strings):
        lengths = tf.data.Dataset.from_tensor_slices(tf.strings.length(strings)).cache(self.cache)
        total = lengths.reduce(tf.constant(0), lambda a, b: a + b)
        return tf.fill([tf.size(strings), 4], tf.cast(total, tf.float32))


def test_an_op_that_is_on_no_list_is_refused_by_the_allowlist(tmp_path):
    # tf.data's cache writes files through ops no denylist named; the allowlist refuses them unnamed
    tf.saved_model.save(CachesADataset(str(tmp_path / "outside-cache")), str(tmp_path / "caches"))
    ops = {op for op, _ in refused_ops(tmp_path / "caches")}
    assert "CacheDatasetV2" in ops and not ops & ALLOWED_OPS
    with pytest.raises(EncoderError, match=r"outside relkt's allowlist"):
        build_encoder(f"hub:{tmp_path / 'caches'}", trainable=False)
    assert not list(tmp_path.glob("outside-cache*"))
    with trusting_models():
        build_encoder(f"hub:{tmp_path / 'caches'}", trainable=False).encode(["a text"])
    assert list(tmp_path.glob("outside-cache*"))  # what the scan kept from running: a write outside


def test_relkt_bert_exports_pass_the_scan(tmp_path):
    from tests.helpers.tiny_bert import tiny_bert

    encoder = tiny_bert()
    encoder.embed(["the cat"])
    export_encoder(encoder, tmp_path / "best")
    assert refused_ops(tmp_path / "best") == []
