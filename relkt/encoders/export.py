"""The relkt export format, and its one owner: a hub-compatible SavedModel (`hub.load(dir)(strings) -> [N, D]`)
with `relkt.json` (kind, dimension, architecture, training record) and the tokenizer's files (`vocab.txt` or
`sp.model`) beside it. Only this module writes or reads `relkt.json` and rebuilds tokenizers from an export."""

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
from relkt.encoders.model_card import CARD_FILE, model_card
from relkt.encoders.script_split_tokenizer import ScriptSplitTokenizer
from relkt.encoders.sentence_encoder import SentenceEncoder
from relkt.encoders.sentencepiece_tokenizer import sentencepiece_tokenizer
from relkt.errors import DataError, EncoderError, WriteError
from relkt.io import fsync_tree, read_bytes, read_json, read_text, replace_dir, tf_reason, write_errors
from relkt.names import ANSWER_CONTEXT_WEIGHT

METADATA_FILE = "relkt.json"
# what an export folder holds: anything else in a folder means it is a user's, not relkt's to replace
EXPORT_FILES = frozenset(
    {METADATA_FILE, "saved_model.pb", "fingerprint.pb", "variables", "assets", "README.md", "language_subspace.npz"}
)
FORMAT = "relkt-encoder/1"
# An export whose candidates mix sentence and paragraph (answer context) serves them here, as USE-QA names its own:
# `hub.load(dir).response_encoder(sentences, paragraphs)`; questions go through `__call__`.
RESPONSE_ENDPOINT = "response_encoder"


def export_encoder(encoder: SentenceEncoder, path: str | Path, training: dict[str, Any] | None = None) -> Path:
    """Write `encoder` (tokenization included) as a SavedModel at `path`, atomically.

    The SavedModel has a `__call__(tf.string[None]) -> float32[None, D]` endpoint (and `response_encoder(inputs,
    context)` when the encoder learned an answer-context weight, recorded in `relkt.json`) and the
    `variables` / `trainable_variables` collections, like TF Hub's mUSE; `relkt.json` beside
    `saved_model.pb` records the encoder kind, dimension, how it was trained and the relkt version.
    Loading it needs `import tensorflow_text` first when the encoder tokenizes with TF Text ops
    (BERT/WordPiece, sentencepiece), exactly as for mUSE.

    The new export is written next to `path` and swapped in with renames, so an interrupted
    export never leaves a half-written model where a good one was.
    """
    path = Path(path)
    if not encoder.built:
        encoder.embed(["build"])
    tmp = path.parent / f".{path.name}.writing-{os.getpid()}"
    try:
        with write_errors(path, "write the export"):
            path.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(tmp, ignore_errors=True)
            _write_export(encoder, tmp, training, path)
            return replace_dir(tmp, path)
    except (
        tf.errors.OpError
    ) as e:  # TensorFlow's file writes: EFBIG arrives as OutOfRangeError, ENOSPC as ResourceExhausted
        raise WriteError(f"{path}: cannot write the export ({tf_reason(e)})") from None
    finally:  # also on Ctrl-C: no half-written export is left beside the good one
        shutil.rmtree(tmp, ignore_errors=True)


def _write_export(encoder: SentenceEncoder, tmp: Path, training: dict[str, Any] | None, final: Path) -> None:
    """The export's files, written into `tmp` (renamed to `final` after) and fsynced: the model card among them."""

    dim = int(encoder.dim)

    def serve(strings):
        # Every batch is answered: an empty one as (0, dim) (muse's n-gram convolutions cannot read a batch of none).
        return tf.cond(
            tf.size(strings) > 0,
            lambda: tf.cast(encoder(encoder._preprocess(strings), training=False), tf.float32),
            lambda: tf.zeros([0, dim], tf.float32),
        )

    archive = keras.export.ExportArchive()
    archive.track(encoder)
    archive.add_endpoint("__call__", serve, input_signature=[tf.TensorSpec([None], tf.string, name="inputs")])
    weight = getattr(encoder, ANSWER_CONTEXT_WEIGHT, None)
    if weight is not None:  # answer context learned: candidates are served mixed with their paragraphs
        weight = float(weight.numpy() if hasattr(weight, "numpy") else weight)

        def respond(inputs, context):
            return tf.math.l2_normalize(serve(inputs) + tf.constant(weight, tf.float32) * serve(context), axis=-1)

        archive.add_endpoint(
            RESPONSE_ENDPOINT,
            respond,
            input_signature=[
                tf.TensorSpec([None], tf.string, name="inputs"),
                tf.TensorSpec([None], tf.string, name="context"),
            ],
        )
    archive.write_out(str(tmp), verbose=False)
    metadata = {
        "format": FORMAT,
        "kind": encoder.kind,
        "dim": int(encoder.dim),
        "relkt_version": relkt.__version__,
        "exported": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "training": training or {},
    }
    if weight is not None:
        metadata["answer_context"] = {"weight": weight, "endpoint": RESPONSE_ENDPOINT}
    if hasattr(encoder, "export_config"):  # what `muse:DIR` rebuilds the architecture from
        metadata["config"] = encoder.export_config()
    max_length = max_length_of(encoder)
    if max_length:
        metadata["max_length"] = max_length
    tokenizer = tokenizer_of(encoder)  # a live one, or the one of the export it was loaded from
    if tokenizer is not None and hasattr(tokenizer, "get_vocabulary"):
        metadata["tokenizer"] = write_tokenizer(tokenizer, tmp)  # lets audits and `bert:`/`muse:` read the export
    (tmp / METADATA_FILE).write_text(json.dumps(metadata, indent=2, allow_nan=False) + "\n")
    (tmp / CARD_FILE).write_text(model_card(metadata, final), encoding="utf-8")
    fsync_tree(tmp)


def link_export(source: str | Path, path: str | Path, training: dict[str, Any]) -> Path:
    """`path` as a second export of the model in `source`, its files hard links (no disk space), with
    `relkt.json`'s training record replaced; atomically, like `export_encoder`.

    For a run's `last/` when training ended at its best step: the weights are `best/`'s. Exports are never written
    in place (always swapped in), so a later `best/` leaves these links intact. OSError where the filesystem
    cannot hard-link (the caller exports instead)."""
    source, path = Path(source), Path(path)
    tmp = path.parent / f".{path.name}.writing-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        for file in sorted(source.rglob("*")):
            target = tmp / file.relative_to(source)
            if file.is_dir():
                target.mkdir(parents=True, exist_ok=True)
            elif file.name not in (METADATA_FILE, CARD_FILE) or file.parent != source:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.link(file, target)
        metadata = {
            **read_metadata(source),
            "training": training,
            "exported": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        tmp.mkdir(parents=True, exist_ok=True)
        (tmp / METADATA_FILE).write_text(json.dumps(metadata, indent=2, allow_nan=False) + "\n")
        (tmp / CARD_FILE).write_text(model_card(metadata, path), encoding="utf-8")
        fsync_tree(tmp)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return replace_dir(tmp, path)


WHOLE_NUMBERS = ("dim", "max_length")  # relkt.json's sizes, each checked when it is read


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The `relkt.json` of an export ({} for SavedModels relkt did not write)."""
    file = Path(path).expanduser() / METADATA_FILE
    if not file.exists():
        return {}
    try:
        meta = read_json(file, "relkt.json")
    except DataError as e:
        reason = str(e).removeprefix(f"{file}: ")
        raise EncoderError(
            f"{file}: not a readable relkt export ({reason}); the export was cut short or edited: export it again"
        ) from None
    if not isinstance(meta, dict):
        raise EncoderError(f"{file}: expected a JSON object, got {type(meta).__name__}; export the model again")
    for key in WHOLE_NUMBERS:  # what sizes a model: a whole number >= 1, or absent
        value = meta.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise EncoderError(
                f"{file}: {key}: expected a whole number >= 1, got {value!r}; the export was edited: export it again"
            )
    return meta


def read_export(path: str | Path, spec: str, kind: str, tokenizer_type: str) -> tuple[dict[str, Any], Any]:
    """An export's metadata and its rebuilt tokenizer, checked to be a `kind` encoder with a `tokenizer_type`
    tokenizer (what `spec`, e.g. `bert:DIR` or `muse:DIR`, can rebuild); EncoderError naming the spec otherwise."""
    if not Path(path).expanduser().is_dir():
        raise EncoderError(f"{spec}: no such folder {path}")
    meta = read_metadata(path)
    if not meta:
        raise EncoderError(
            f"{spec}: no {METADATA_FILE} in {path}; {spec.partition(':')[0]}:DIR takes a relkt export "
            "(use hub:DIR for other SavedModels)"
        )
    info = meta.get("tokenizer") or {}
    if meta.get("kind") != kind or info.get("type") != tokenizer_type:
        raise EncoderError(
            f"{spec}: {METADATA_FILE} says kind={meta.get('kind')!r}, tokenizer={info.get('type')!r}; "
            f"only exports of {kind} encoders with a {tokenizer_type} tokenizer can be rebuilt this way "
            "(use hub:)"
        )
    return meta, load_tokenizer(path, meta)


# ----- tokenizers ------------------------------------------------------------------------------------------------


def is_sentencepiece(tokenizer) -> bool:
    """Whether `tokenizer` is a SentencePiece one (the muse encoder's), not WordPiece."""
    return hasattr(tokenizer, "proto")  # keras-hub's SentencePieceTokenizer (the muse encoder's)


def tokenizer_record(tokenizer) -> dict:
    """What `relkt.json` records to rebuild `tokenizer` (its files are written by `write_tokenizer`)."""
    if is_sentencepiece(tokenizer):
        return {"type": "sentencepiece", "model": "sp.model"}
    return {
        "type": "wordpiece",
        "vocabulary": "vocab.txt",
        "lowercase": bool(getattr(tokenizer, "lowercase", True)),
        "strip_accents": bool(getattr(tokenizer, "strip_accents", True)),
        "split_pattern": getattr(tokenizer, "split_pattern", ""),
        "split_on_cjk": bool(getattr(tokenizer, "split_on_cjk", True)),
    }


def write_tokenizer(tokenizer, directory: Path) -> dict:
    """Write the tokenizer's file (`sp.model` or `vocab.txt`) into `directory`; returns its record."""
    record = tokenizer_record(tokenizer)
    if record["type"] == "sentencepiece":
        (Path(directory) / record["model"]).write_bytes(tokenizer.proto)
    else:
        (Path(directory) / record["vocabulary"]).write_text(
            "\n".join(tokenizer.get_vocabulary()) + "\n", encoding="utf-8"
        )
    return record


def load_tokenizer(path: str | Path, meta: dict[str, Any] | None = None):
    """The tokenizer an export saved beside its SavedModel, rebuilt; None when it saved none."""
    path = Path(path).expanduser()
    info = (read_metadata(path) if meta is None else meta).get("tokenizer") or {}
    if info.get("type") == "sentencepiece":
        return sentencepiece_tokenizer(read_bytes(path / info["model"], "sentencepiece model"))
    if info.get("type") == "wordpiece":
        vocab = read_text(path / info.get("vocabulary", "vocab.txt"), "vocabulary").splitlines()
        return ScriptSplitTokenizer(
            vocabulary=vocab,
            lowercase=info.get("lowercase", True),
            strip_accents=info.get("strip_accents", True),
            split_pattern=info.get("split_pattern", ""),
            split_on_cjk=info.get("split_on_cjk", True),
        )
    return None


def tokenizer_of(encoder):
    """The tokenizer behind an encoder: a `bert:`/`minilm`/`muse` encoder's own (WordPiece, sentencepiece), or
    the one a relkt export saved beside its SavedModel (`hub:DIR`). None for encoders without one (n-gram
    hashing, TF Hub models)."""
    inner = getattr(encoder, "inner", encoder)  # under a projection
    if hasattr(inner, "tokenizer"):
        return inner.tokenizer
    handle = getattr(encoder, "handle", None)
    meta = getattr(encoder, "metadata", {}) or {}
    return load_tokenizer(handle, meta) if handle and meta.get("tokenizer") else None


def max_length_of(encoder) -> int | None:
    """The encoder's sequence limit in pieces (the special tokens included), if it records one."""
    inner = getattr(encoder, "inner", encoder)
    length = getattr(inner, "max_length", None) or (getattr(encoder, "metadata", {}) or {}).get("max_length")
    return int(length) if length else None
