"""The encoder a scorer reads a spec with: frozen, reading texts whole where its kind can, and a relkt export named
`hub:DIR` read as the kind that wrote it, so a model gives the same scores whatever spec names it. Scoring, the
language-bias export and retrieval all build their encoder here (one module below them, so none imports another)."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np

from relkt.data.english_answer_units import SCORING_MAX_LENGTH
from relkt.errors import ConfigError, EncoderError
from relkt.metrics.evaluator import TextEncoder


class CheckedEncoder:
    """A caller's own encoder (any object with `encode(texts)`), called with only the arguments its `encode` takes,
    and each answer checked before it is scored: an (n, D) array of finite numbers for n texts, D the same each time.
    What relkt's own encoders promise, asked of one it did not build, so a bad answer is one line, not a traceback."""

    def __init__(self, encoder: object):
        self.encoder, self.spec = encoder, getattr(encoder, "spec", type(encoder).__name__)
        try:
            taken = inspect.signature(encoder.encode).parameters
        except (TypeError, ValueError):  # a builtin without a signature: pass texts alone
            taken = {}
        kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in taken.values())
        self.takes = {name for name in ("batch_size", "progress") if kwargs or name in taken}
        self.width: int | None = None

    @property
    def dim(self) -> int | None:
        return getattr(self.encoder, "dim", self.width)

    def encode(self, texts, batch_size: int = 64, progress: bool | str = False) -> np.ndarray:
        options = {k: v for k, v in (("batch_size", batch_size), ("progress", progress)) if k in self.takes}
        got = self.encoder.encode(list(texts), **options)
        try:
            out = np.asarray(got, dtype=np.float32)
        except (TypeError, ValueError):
            out = None
        n = len(texts)
        if out is None or out.ndim != 2 or out.shape[0] != n or out.shape[1] < 1:
            shape = (
                "None"
                if got is None
                else f"shape {getattr(out, 'shape', '?')}"
                if out is not None
                else type(got).__name__
            )
            raise EncoderError(
                f"encoder {self.spec}: encode() of {n} texts returned {shape}; expected an array of {n} rows of D "
                "numbers (n, D)"
            )
        if self.width is not None and out.shape[1] != self.width:
            raise EncoderError(f"encoder {self.spec}: encode() gave {out.shape[1]} numbers a row, earlier {self.width}")
        if not np.isfinite(out).all():
            raise EncoderError(f"encoder {self.spec}: encode() returned NaN or infinite numbers")
        self.width = out.shape[1]
        return out


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
        from relkt.encoders.sentence_encoder import SentenceEncoder  # deferred: heavy (TensorFlow)

        if isinstance(encoder, SentenceEncoder):
            return encoder, getattr(encoder, "spec", type(encoder).__name__)
        checked = encoder if isinstance(encoder, CheckedEncoder) else CheckedEncoder(encoder)
        return checked, checked.spec
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
