"""`ngram`: hashed character n-grams, trained from scratch (tests, smoke runs)."""

from __future__ import annotations

from relkt.encoders.encoder_kind import EncoderKind, register_encoder_kind
from relkt.encoders.ngram_encoder import NgramEncoder


@register_encoder_kind
class NgramKind(EncoderKind):
    """`ngram`: the hashed character n-gram encoder the tests and smoke runs train in seconds."""

    name, usage = "ngram", ("ngram",)

    def build(self, arg: str, trainable: bool = True, **options):
        return NgramEncoder(**options)
