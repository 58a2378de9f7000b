"""How well an encoder's tokenizer reads a language: unknown-token rate, questions with an unknown
token, pieces per whitespace word and per text, and texts cut at the encoder's max_length
(CL-ReLKT's Hindi failure came from 14.5% unknown tokens; one token per Thai letter cuts long sentences).
Works on WordPiece (`[UNK]`) and sentencepiece (`<unk>`, the muse encoder) tokenizers alike."""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from relkt.encoders.export import is_sentencepiece, max_length_of, tokenizer_of

__all__ = ["audit_tokenizer", "max_length_of", "tokenizer_of", "unknown_id", "unreadable_scripts"]


def unknown_id(tokenizer) -> int:
    """The id of the tokenizer's unknown piece (`<unk>` for SentencePiece, `[UNK]` for WordPiece)."""
    return int(tokenizer.token_to_id("<unk>" if is_sentencepiece(tokenizer) else "[UNK]"))


def _traced(tokenizer):
    """One traced function per tokenizer, not per call: strings -> ragged piece ids."""
    fn = tokenizer.__dict__.get("_relkt_audit_fn")
    if fn is None:
        fn = tokenizer.__dict__["_relkt_audit_fn"] = tf.function(
            lambda s: tokenizer(s), input_signature=[tf.TensorSpec([None], tf.string)]
        )
    return fn


def audit_tokenizer(tokenizer, texts: Sequence[str], batch_size: int = 512, max_length: int | None = None) -> dict:
    """unk_rate (share of pieces that are [UNK]), texts_with_unk, pieces_per_word, pieces_per_text, n_texts,
    and with `max_length` texts_cut: the share of texts with more pieces than fit beside [CLS] and [SEP]."""
    unk = unknown_id(tokenizer)
    fn = _traced(tokenizer)
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
    out = {
        "unk_rate": n_unk / max(n_pieces, 1),
        "texts_with_unk": n_with_unk / n,
        "pieces_per_word": n_pieces / max(words, 1),
        "pieces_per_text": n_pieces / n,
        "n_texts": len(texts),
    }
    if max_length:
        out["texts_cut"] = n_cut / n
    return out


def unreadable_scripts(tokenizer, texts: Sequence[str]) -> dict[str, float]:
    """{script: share of the texts' letters in that script that the tokenizer reads as unknown}, for every script with
    at least one unreadable letter; a script is the first word of a letter's Unicode name (BENGALI, ETHIOPIC ...).
    Each distinct letter is tokenized alone: an unknown piece means the model cannot tell it from any other."""
    counts = Counter(ch for text in texts for ch in text if ch.isalpha())
    if not counts:
        return {}
    letters = sorted(counts)
    unk = unknown_id(tokenizer)
    ids = _traced(tokenizer)(tf.constant(letters)).to_list()
    unreadable = {ch for ch, row in zip(letters, ids) if unk in row}
    script = {ch: unicodedata.name(ch, "UNKNOWN").split()[0] for ch in letters}
    total, bad = Counter(), Counter()
    for ch, n in counts.items():
        total[script[ch]] += n
        if ch in unreadable:
            bad[script[ch]] += n
    return {s: bad[s] / total[s] for s in sorted(bad)}
