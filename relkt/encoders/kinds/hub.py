"""`hub:HANDLE` (a TF Hub handle or a SavedModel folder, relkt's exports included), `muse-hub` and `muse-large-hub`
(mUSE from TF Hub: network once)."""

from __future__ import annotations

from relkt.encoders.encoder_kind import EncoderKind, register_encoder_kind
from relkt.encoders.hub_encoder import HubEncoder


@register_encoder_kind
class HubKind(EncoderKind):
    """`hub:HANDLE`: a SavedModel by path or TF Hub handle (a relkt export, or any sentence encoder)."""

    name, usage, argument = "hub", ("hub:HANDLE",), "required"

    def build(self, arg: str, trainable: bool = True, **options):
        return HubEncoder.from_spec(f"hub:{arg}", trainable=trainable, **options)


@register_encoder_kind
class MuseHubKind(EncoderKind):
    """`muse-hub`: mUSE from TF Hub (needs the network once)."""

    name, usage = "muse-hub", ("muse-hub",)

    def build(self, arg: str, trainable: bool = True, **options):
        return HubEncoder.from_spec(self.name, trainable=trainable, **options)


@register_encoder_kind
class MuseLargeHubKind(MuseHubKind):
    """`muse-large-hub`: mUSE-large from TF Hub (needs the network once)."""

    name, usage = "muse-large-hub", ("muse-large-hub",)
