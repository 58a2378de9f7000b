"""Export any relkt encoder as a hub-compatible SavedModel: `hub.load(dir)(strings) -> [N, D]`."""

from __future__ import annotations

import datetime as _dt
import json
import os
import shutil
from pathlib import Path
from typing import Any

import keras
import tensorflow as tf

import relkt
from relkt.encoders.sentence_encoder import SentenceEncoder
from relkt.io import fsync_tree

METADATA_FILE = "relkt.json"
FORMAT = "relkt-encoder/1"


def export_encoder(encoder: SentenceEncoder, path: str | Path, training: dict[str, Any] | None = None) -> Path:
    """Write `encoder` (tokenization included) as a SavedModel at `path`, atomically.

    The SavedModel has a `__call__(tf.string[None]) -> float32[None, D]` endpoint and the
    `variables` / `trainable_variables` collections, like TF Hub's mUSE; `relkt.json` beside
    `saved_model.pb` records the encoder kind, dimension, how it was trained and the relkt version.
    Loading it needs `import tensorflow_text` first when the encoder tokenizes with TF Text ops
    (BERT/WordPiece, sentencepiece), exactly as for mUSE.

    The new export is written next to `path` and swapped in with renames, so an interrupted
    export never leaves a half-written model where a good one was.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.parent / f".{path.name}.writing-{os.getpid()}"
    old = path.parent / f".{path.name}.old-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)

    if not encoder.built:
        encoder.embed(["build"])

    def serve(strings):
        return encoder(encoder._preprocess(strings), training=False)

    archive = keras.export.ExportArchive()
    archive.track(encoder)
    archive.add_endpoint("__call__", serve, input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    archive.write_out(str(tmp), verbose=False)
    metadata = {
        "format": FORMAT,
        "kind": encoder.kind,
        "dim": int(encoder.dim),
        "relkt_version": relkt.__version__,
        "exported": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "training": training or {},
    }
    if hasattr(encoder, "export_config"):  # what `muse:DIR` rebuilds the architecture from
        metadata["config"] = encoder.export_config()
    max_length = getattr(getattr(encoder, "inner", encoder), "max_length", None)
    if max_length:
        metadata["max_length"] = int(max_length)
    from relkt.analysis.tokenizer_audit import tokenizer_of, write_vocabulary

    tokenizer = tokenizer_of(encoder)  # a live one, or the vocabulary of the export it was loaded from
    if tokenizer is not None and hasattr(tokenizer, "get_vocabulary"):
        metadata["tokenizer"] = write_vocabulary(tokenizer, tmp)  # lets audits read an exported model
    (tmp / METADATA_FILE).write_text(json.dumps(metadata, indent=2) + "\n")
    fsync_tree(tmp)
    if path.exists():
        os.replace(path, old)
    os.replace(tmp, path)
    shutil.rmtree(old, ignore_errors=True)
    return path


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The `relkt.json` of an export ({} for SavedModels relkt did not write)."""
    file = Path(path) / METADATA_FILE
    return json.loads(file.read_text()) if file.exists() else {}
