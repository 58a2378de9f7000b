"""The contract every encoder kind keeps, as keras-hub's `run_backbone_test`: one function each kind's test calls."""

from __future__ import annotations

from pathlib import Path

import numpy as np

TEXTS = ["the cat sleeps at night", "where does the river flow ?", "katze", "猫 睡觉"]


def run_encoder_contract(encoder, tmp_path: Path, texts: list[str] = TEXTS, training: dict | None = None):
    """Unit-norm (n, dim) output; `preprocess` then `__call__` equals `embed`; the export round trip (`hub.load`
    reads it, with its model card beside) gives the same embeddings; every batch is answered, the empty one as
    (0, dim). Returns (the export's path, the loaded SavedModel, the embeddings of `texts`) for a kind's own checks."""
    import tensorflow as tf
    import tensorflow_hub as hub
    import tensorflow_text  # noqa: F401 (the tokenizers' ops, as for mUSE)

    from relkt.encoders.export import export_encoder, read_metadata

    out = encoder.encode(texts, batch_size=2)
    assert out.shape == (len(texts), encoder.dim) and out.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    split = encoder(encoder.preprocess(tf.constant(texts)), training=False).numpy()
    np.testing.assert_allclose(split, encoder.embed(texts).numpy(), atol=1e-5)
    np.testing.assert_allclose(split, out, atol=1e-5)
    path = export_encoder(encoder, tmp_path / "contract_export", training=training)
    assert read_metadata(path)["dim"] == encoder.dim and (path / "README.md").is_file()
    loaded = hub.load(str(path))
    np.testing.assert_allclose(loaded(tf.constant(texts)).numpy(), out, atol=1e-5)
    empty = loaded(tf.constant([], dtype=tf.string)).numpy()
    assert empty.shape == (0, encoder.dim), empty.shape
    return path, loaded, out


def make_encoder(kind: str, tmp_path: Path):
    """A tiny encoder of each built-in kind: ngram, bert, muse, and hub (a tiny muse export read as a SavedModel)."""
    from relkt.encoders import build_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder
    from tests.helpers.tiny_bert import tiny_bert
    from tests.helpers.tiny_muse import make_tiny_muse, tiny_muse_encoder

    if kind == "ngram":
        return NgramEncoder(dim=8, num_buckets=128)
    if kind == "bert":
        return tiny_bert()
    if kind == "muse":
        return tiny_muse_encoder()
    return build_encoder(f"hub:{make_tiny_muse(tmp_path / 'muse')}")
