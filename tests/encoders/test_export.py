import re
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

from relkt.encoders import build_encoder
from relkt.encoders.export import export_encoder, read_metadata
from relkt.encoders.ngram_encoder import NgramEncoder
from tests.helpers.encoder_contract import make_encoder, run_encoder_contract
from tests.helpers.tiny_bert import tiny_bert

TEXTS = ["the cat sleeps at night", "where does the river flow ?", "katze", "猫 睡觉"]
README = Path(__file__).resolve().parents[2] / "README.md"


make = make_encoder


@pytest.mark.parametrize("kind", ["ngram", "bert", "muse", "hub"])
def test_every_kind_keeps_the_encoder_contract_and_reloads_trainable(kind, tmp_path):
    """The one contract every encoder kind runs (tests/helpers/encoder_contract.py), then what an export adds."""
    enc = make(kind, tmp_path)
    out, loaded, expected = run_encoder_contract(enc, tmp_path, TEXTS, training={"stage": "test"})
    assert len(loaded.trainable_variables) == len(enc.trainable_weights) > 0
    assert len(loaded.variables) >= len(enc.weights)  # plus dropout seed states, if any

    meta = read_metadata(out)
    assert meta["kind"] == kind and meta["dim"] == expected.shape[1] and meta["training"] == {"stage": "test"}
    assert "relkt_version" in meta

    again = build_encoder(f"hub:{out}")
    assert again.trainable and len(again.trainable_weights) == len(enc.trainable_weights)
    np.testing.assert_allclose(again.encode(TEXTS), expected, atol=1e-6)


def test_reexport_replaces_atomically(tmp_path):
    enc = NgramEncoder(dim=8, num_buckets=128)
    out = export_encoder(enc, tmp_path / "best")
    first = enc.encode(TEXTS)
    enc.weights[0].assign(enc.weights[0].numpy() + 1.0)
    export_encoder(enc, out)
    import tensorflow_hub as hub

    np.testing.assert_allclose(hub.load(str(out))(tf.constant(TEXTS)).numpy(), enc.encode(TEXTS), atol=1e-6)
    assert not np.allclose(enc.encode(TEXTS), first)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["best"]  # no temporary folders left


def test_readme_hub_snippet_runs_on_an_export(tmp_path):
    """The README's three-line `hub.load` snippet, executed verbatim on an exported model."""
    text = README.read_text(encoding="utf-8")
    snippet = re.search(r"<!-- hub-snippet -->\s*```python\n(.*?)```", text, re.S).group(1)
    assert len(snippet.strip().splitlines()) == 3
    path = export_encoder(NgramEncoder(dim=8, num_buckets=128), tmp_path / "teacher")
    scope = {}
    exec(snippet.replace("runs/quickstart_muse/teacher/best", str(path)), scope)
    assert scope["embeddings"].shape == (2, 8)


def test_a_reexported_hub_copy_keeps_the_tokenizer_record(tmp_path):
    """A student loaded from a bert-type export (hub:) and exported again still carries vocab.txt."""
    first = export_encoder(tiny_bert(), tmp_path / "teacher")
    again = export_encoder(build_encoder(f"hub:{first}"), tmp_path / "student")
    meta = read_metadata(again)
    assert (
        meta["tokenizer"]["type"] == "wordpiece"
        and (again / "vocab.txt").read_text() == (first / "vocab.txt").read_text()
    )
