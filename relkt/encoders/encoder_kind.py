"""The encoder kind table: the part of a spec before `:` -> `EncoderKind`. A kind is one file in
`relkt/encoders/kinds/` that subclasses `EncoderKind` and registers itself with `@register_encoder_kind`; nothing else
changes to add one (the table loads that folder on first use). A kind defined elsewhere (a user's module, a test)
registers the same way, once imported. `relkt.encoders.registry.build_encoder` is the table's reader."""

from __future__ import annotations

from relkt.errors import EncoderError
from relkt.registry import Registry

ENCODER_KINDS = Registry("encoder kind", "relkt.encoders.kinds")


class EncoderKind:
    """One kind of encoder spec. `argument`: `none` (`ngram`), `required` (`bert:PATH`) or `optional` (`muse`,
    `muse:DIR`); `usage` shows the spec's shapes in errors and help (none: a kind left out of them, such as
    `muse-large`, which only says where mUSE-large is)."""

    name: str = ""
    usage: tuple[str, ...] = ()
    argument: str = "none"
    # What the kind can do, read where code once listed kind names:
    takes_max_length: bool = False  # builds with a `max_length` option (tokens a text; scoring reads whole texts)
    reads_whole: bool = False  # scored whole by default (no position embeddings cap it: mUSE reads an article whole)
    mixable: bool = False  # its weights rebuild as Keras variables, so relkt interpolate can mix two of them

    def rebuild_spec(self, export: str) -> str:
        """The spec that reads a relkt export of this kind's encoder as what it was trained as (`muse:DIR`,
        `bert:DIR`: its max_length then still chooseable), else as a SavedModel (`hub:DIR`)."""
        return f"hub:{export}"

    def build(self, arg: str, trainable: bool = True, **options):
        """A SentenceEncoder for `NAME:arg` (arg "" when the spec has none); options go to its constructor."""
        raise NotImplementedError


def register_encoder_kind(cls: type[EncoderKind]) -> type[EncoderKind]:
    """Class decorator: add the kind to the table under its `name`; a second, different class of one name is an
    error, so two kinds cannot shadow each other."""
    if not cls.name or ":" in cls.name or cls.argument not in ("none", "required", "optional"):
        raise ValueError(
            f"{cls.__name__}: an encoder kind needs a name without ':' and argument none|required|optional"
        )
    ENCODER_KINDS.add(cls.name, cls(), cls)
    return cls


def encoder_kinds() -> dict[str, EncoderKind]:
    """The table, with every built-in kind (each module of relkt/encoders/kinds/) loaded."""
    return ENCODER_KINDS.loaded()


def spec_usages() -> list[str]:
    """Every spec shape the table accepts (`ngram`, `bert:PATH`, `muse`, `muse:DIR`, ...), for errors and help."""
    return [usage for _, kind in sorted(encoder_kinds().items()) for usage in kind.usage]


def kind_of(spec: str) -> EncoderKind:
    """The registered kind of a spec (`muse:DIR` -> the muse kind); EncoderError listing the valid shapes."""
    kind = encoder_kinds().get(spec.partition(":")[0])
    if kind is None:
        raise EncoderError(f"unknown encoder spec {spec!r}; valid: {', '.join(spec_usages())}")
    return kind
