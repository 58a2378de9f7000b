"""How well an encoder's tokenizer reads a language: unknown-token rate, questions with an unknown
token, pieces per whitespace word and per text, and texts cut at the encoder's max_length
(CL-ReLKT's Hindi failure came from 14.5% unknown tokens; one token per Thai letter cuts long sentences).
Works on WordPiece (`[UNK]`) and sentencepiece (`<unk>`, the muse encoder) tokenizers alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

import numpy as np


def tokenizer_of(encoder):
    """The tokenizer behind an encoder: a `bert:`/`minilm`/`muse` encoder's own (WordPiece, sentencepiece), or
    the one a relkt export saved beside its SavedModel. None for encoders without one (n-gram hashing, TF Hub)."""
    inner = getattr(encoder, "inner", encoder)
    if hasattr(inner, "tokenizer"):
        return inner.tokenizer
    handle = getattr(encoder, "handle", None)
    meta = getattr(encoder, "metadata", {}) or {}
    info = meta.get("tokenizer")
    if handle and info and info.get("type") == "sentencepiece":
        from relkt.encoders.muse_encoder import sentencepiece_tokenizer

        return sentencepiece_tokenizer((Path(handle) / info["model"]).read_bytes())
    if handle and info and info.get("type") == "wordpiece":
        from relkt.encoders.script_split_tokenizer import ScriptSplitTokenizer

        vocab = (Path(handle) / info["vocabulary"]).read_text(encoding="utf-8").splitlines()
        return ScriptSplitTokenizer(vocabulary=vocab, lowercase=info.get("lowercase", True),
                                    strip_accents=info.get("strip_accents", True), split_pattern=info.get("split_pattern", ""),
                                    split_on_cjk=info.get("split_on_cjk", True))
    return None


def max_length_of(encoder) -> int | None:
    """The encoder's sequence limit in pieces ([CLS] and [SEP] included), if it records one."""
    inner = getattr(encoder, "inner", encoder)
    length = getattr(inner, "max_length", None) or (getattr(encoder, "metadata", {}) or {}).get("max_length")
    return int(length) if length else None


def is_sentencepiece(tokenizer) -> bool:
    return hasattr(tokenizer, "proto")  # keras-hub's SentencePieceTokenizer (the muse encoder's)


def unknown_id(tokenizer) -> int:
    return int(tokenizer.token_to_id("<unk>" if is_sentencepiece(tokenizer) else "[UNK]"))


def tokenizer_info(tokenizer) -> dict:
    """What an export records to rebuild `tokenizer` (see relkt.encoders.export)."""
    if is_sentencepiece(tokenizer):
        return {"type": "sentencepiece", "model": "sp.model"}
    return {"type": "wordpiece", "vocabulary": "vocab.txt", "lowercase": bool(getattr(tokenizer, "lowercase", True)),
            "strip_accents": bool(getattr(tokenizer, "strip_accents", True)),
            "split_pattern": getattr(tokenizer, "split_pattern", ""), "split_on_cjk": bool(getattr(tokenizer, "split_on_cjk", True))}


def audit_tokenizer(tokenizer, texts: Sequence[str], batch_size: int = 512, max_length: int | None = None) -> dict:
    """unk_rate (share of pieces that are [UNK]), texts_with_unk, pieces_per_word, pieces_per_text, n_texts,
    and with `max_length` texts_cut: the share of texts with more pieces than fit beside [CLS] and [SEP]."""
    import tensorflow as tf  # here, not at import: relkt.analysis also serves TF-free tools (trainers/compare.py)

    unk = unknown_id(tokenizer)
    fn = tokenizer.__dict__.get("_relkt_audit_fn")  # one traced function per tokenizer, not per call
    if fn is None:
        fn = tokenizer.__dict__["_relkt_audit_fn"] = tf.function(lambda s: tokenizer(s), input_signature=[tf.TensorSpec([None], tf.string)])
    n_unk = n_pieces = n_with_unk = n_cut = 0
    for lo in range(0, len(texts), batch_size):
        ids = fn(tf.constant(list(texts[lo : lo + batch_size])))
        flat = ids.flat_values.numpy()
        rows = ids.value_rowids().numpy()
        is_unk = flat == unk
        n_unk += int(is_unk.sum())
        n_pieces += len(flat)
        n_with_unk += len(np.unique(rows[is_unk]))
        if max_length:
            n_cut += int((ids.row_lengths().numpy() > max_length - 2).sum())
    words = sum(len(t.split()) for t in texts)
    n = max(len(texts), 1)
    out = {"unk_rate": n_unk / max(n_pieces, 1), "texts_with_unk": n_with_unk / n, "pieces_per_word": n_pieces / max(words, 1),
           "pieces_per_text": n_pieces / n, "n_texts": len(texts)}
    if max_length:
        out["texts_cut"] = n_cut / n
    return out


def write_vocabulary(tokenizer, directory: Path) -> dict:
    if is_sentencepiece(tokenizer):
        (Path(directory) / "sp.model").write_bytes(tokenizer.proto)
        return tokenizer_info(tokenizer)
    (Path(directory) / "vocab.txt").write_text("\n".join(tokenizer.get_vocabulary()) + "\n", encoding="utf-8")
    return tokenizer_info(tokenizer)


def read_export_tokenizer_info(path: str | Path) -> dict | None:
    meta = Path(path) / "relkt.json"
    return json.loads(meta.read_text()).get("tokenizer") if meta.exists() else None
