"""The in-graph sentencepiece tokenizer of `muse` encoders, from a model proto."""

from __future__ import annotations

import base64

import keras_hub


def sentencepiece_tokenizer(proto: bytes | str) -> keras_hub.tokenizers.SentencePieceTokenizer:
    """keras-hub's in-graph SentencePiece tokenizer (C++ sentencepiece through TF Text, as TF Hub's mUSE ran it:
    a run of unknown characters is one unknown id). BOS/EOS are added by the encoder, after truncation."""
    if isinstance(proto, bytes):
        proto = base64.b64encode(proto).decode("ascii")  # keras-hub takes base64 (what get_config stores)
    return keras_hub.tokenizers.SentencePieceTokenizer(proto=proto, dtype="int32")
