"""Encoder specs read through the kind table (relkt.encoders.encoder_kind; built in: `ngram`, `bert:PATH`, `minilm`,
`muse`, `muse:DIR`, `hub:HANDLE`, `muse-hub`, `muse-large-hub`), and what differs between encoder kinds when a student
grows its vocabulary."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from relkt.encoders.encoder_kind import encoder_kinds, spec_usages
from relkt.encoders.export import METADATA_FILE, read_metadata
from relkt.encoders.muse_encoder import MuseEncoder
from relkt.encoders.sentencepiece_extension import extend_sentencepiece_vocabulary
from relkt.encoders.vocab_extension import NO_SPACE_SCRIPTS, VocabExtension, extend_vocabulary
from relkt.errors import ConfigError, EncoderError, RelktError
from relkt.names import ANSWER_CONTEXT_WEIGHT


def build_encoder(spec: str, trainable: bool = True, **options):
    """Build a SentenceEncoder from a spec string (`KIND` or `KIND:ARG`, KIND a name of the encoder kind table);
    options go to the encoder's constructor."""
    kind_name, colon, arg = spec.partition(":")
    kind = encoder_kinds().get(kind_name)
    if kind is None or (kind.argument == "required" and not arg) or (kind.argument == "none" and colon):
        raise EncoderError(f"unknown encoder spec {spec!r}; valid: {', '.join(spec_usages())}")
    bad = [name for name, value in options.items() if not _plain(value)]
    if bad:
        raise ConfigError(f"options.{bad[0]} of encoder {spec}: {options[bad[0]]!r} is not a number, string or list")
    try:
        encoder = kind.build(arg, trainable=trainable, **options)
    except (TypeError, ValueError) as e:
        if not options or isinstance(e, RelktError):  # relkt's own error already says what is wrong
            raise
        raise ConfigError(
            f"options {options} of encoder {spec}: it cannot be built with them ({str(e).splitlines()[0]})"
        ) from None
    encoder.trainable = trainable
    carry_answer_context(encoder, arg)
    return encoder


def carry_answer_context(encoder, folder: str) -> None:
    """An export that learned an answer-context weight (its `relkt.json`) hands it to the encoder built from it, so
    scoring mixes candidates with their paragraphs as the model was trained to."""
    if not folder or not Path(folder).expanduser().is_dir():
        return
    context = read_metadata(folder).get("answer_context")
    if context is None:
        return
    weight = context.get("weight") if isinstance(context, dict) else None
    if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) or weight < 0:
        raise EncoderError(
            f"{Path(folder) / METADATA_FILE}: answer_context.weight: expected a number >= 0, got {weight!r}"
        )
    setattr(encoder, ANSWER_CONTEXT_WEIGHT, float(weight))


def _plain(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, str, list, tuple, dict))


def extend_encoder_vocabulary(
    encoder,
    texts: Sequence[str],
    min_count: int = 1,
    init: str = "random",
    split_scripts: Sequence[str] = NO_SPACE_SCRIPTS,
    seed: int = 0,
    pieces: int = 0,
    piece_scripts: Sequence[str] = (),
    piece_chars: str = "",
) -> tuple[object, VocabExtension]:
    """A copy of `encoder` whose vocabulary reads `texts`: new sentencepiece pieces for a `muse` encoder
    (`extend_sentencepiece_vocabulary`), new WordPiece tokens for a `bert:` one (`extend_vocabulary`);
    deterministic given the texts and seed, so a resumed run rebuilds the same vocabulary."""
    if isinstance(encoder, MuseEncoder):
        return extend_sentencepiece_vocabulary(
            encoder,
            texts,
            min_count,
            init,
            seed=seed,
            pieces=pieces,
            piece_scripts=piece_scripts,
            piece_chars=piece_chars,
        )
    if piece_scripts or piece_chars:
        raise ConfigError(
            f"extend_vocab.piece_scripts={list(piece_scripts)} / piece_chars={piece_chars!r} are for `muse` "
            f"students; a BERT student's extra scripts go in split_scripts"
        )
    return extend_vocabulary(encoder, texts, min_count, init, split_scripts, seed=seed, pieces=pieces)


def token_table(encoder):
    """The token-embedding variable of a `bert:` or `muse` encoder (also under a projection): the rows vocabulary
    extension grows."""
    inner = getattr(encoder, "inner", encoder)
    return getattr(inner, "backbone", inner).token_embedding.embeddings
