"""The encoder a scorer reads a spec with: frozen, reading texts whole where its kind can, and a relkt export named
`hub:DIR` read as the kind that wrote it, so a model gives the same scores whatever spec names it. Scoring, the
language-bias export and retrieval all build their encoder here (one module below them, so none imports another)."""

from __future__ import annotations

from pathlib import Path

from relkt.data.english_answer_units import SCORING_MAX_LENGTH
from relkt.errors import ConfigError
from relkt.metrics.evaluator import TextEncoder


def scoring_encoder(encoder: str | TextEncoder, max_length: int | None = None) -> tuple[TextEncoder, str]:
    """`encoder` built for scoring when it is a spec (frozen; whole texts for a kind that reads them whole, unless
    `max_length`), and the name its results give it: the spec, else a built encoder's `spec` or class name."""
    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow)
    from relkt.encoders.encoder_kind import kind_of  # deferred: loads the kinds, TensorFlow with them

    if not isinstance(encoder, str):
        if max_length:
            raise ConfigError(
                "max_length: give an encoder spec to build one at a length; a built encoder keeps its own"
            )
        return encoder, getattr(encoder, "spec", type(encoder).__name__)
    encoder = as_relkt_export(encoder)
    kind = kind_of(encoder)
    length = max_length or (SCORING_MAX_LENGTH if kind.reads_whole else None)
    if max_length and not kind.takes_max_length:
        raise ConfigError(
            f"max_length: {encoder} takes none (its tokenizer's length was fixed when it was built or exported); "
            "a kind that takes one: " + ", ".join(k for k, v in _kinds().items() if v.takes_max_length)
        )
    return build_encoder(encoder, trainable=False, **({"max_length": length} if length else {})), encoder


def as_relkt_export(spec: str) -> str:
    """`hub:DIR` naming a relkt export of a kind that rebuilds from its export (muse, bert) is scored as that kind, so
    a model gives the same scores whatever spec names it (a hub export keeps the length it was exported with and cuts
    articles; `muse:DIR` reads them whole)."""
    from relkt.encoders.export import read_metadata  # deferred: the export module loads TensorFlow

    kind, _, arg = spec.partition(":")
    if kind != "hub" or "://" in arg or not (Path(arg).expanduser() / "relkt.json").is_file():
        return spec
    own = read_metadata(arg).get("kind")
    return f"{own}:{arg}" if own in ("muse", "bert") else spec


def _kinds():
    from relkt.encoders.encoder_kind import encoder_kinds  # deferred: TensorFlow

    return encoder_kinds()
