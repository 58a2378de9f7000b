"""Sentence encoders: strings in, L2-normalised float32 embeddings out."""

from relkt.encoders.registry import ENCODER_KINDS, build_encoder, minilm_path
from relkt.encoders.sentence_encoder import QuietEncoder, SentenceEncoder, weights_digest

__all__ = ["ENCODER_KINDS", "QuietEncoder", "SentenceEncoder", "build_encoder", "minilm_path", "weights_digest"]
