"""Sentence encoders: strings in, L2-normalised float32 embeddings out."""

from relkt.encoders.bert_encoder import minilm_path
from relkt.encoders.encoder_kind import ENCODER_KINDS, EncoderKind, register_encoder_kind
from relkt.encoders.registry import build_encoder
from relkt.encoders.sentence_encoder import QuietEncoder, SentenceEncoder, weights_digest

__all__ = [
    "ENCODER_KINDS",
    "EncoderKind",
    "QuietEncoder",
    "SentenceEncoder",
    "build_encoder",
    "minilm_path",
    "register_encoder_kind",
    "weights_digest",
]
