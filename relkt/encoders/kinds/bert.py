"""`bert:PATH` (an HF-format or keras-hub BERT directory) and `minilm` (all-MiniLM-L6-v2 from its offline wheel)."""

from __future__ import annotations

from relkt.encoders.bert_encoder import BertEncoder, minilm_path
from relkt.encoders.encoder_kind import EncoderKind, register_encoder_kind


@register_encoder_kind
class BertKind(EncoderKind):
    name, usage, argument = "bert", ("bert:PATH",), "required"

    def build(self, arg: str, trainable: bool = True, **options):
        return BertEncoder.from_preset(arg, **options)


@register_encoder_kind
class MinilmKind(EncoderKind):
    name, usage = "minilm", ("minilm",)

    def build(self, arg: str, trainable: bool = True, **options):
        return BertEncoder.from_preset(minilm_path(), **options)
