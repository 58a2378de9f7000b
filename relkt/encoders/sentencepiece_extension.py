"""Grow a `muse` student's sentencepiece vocabulary with what its training texts need and the base cannot read.

mUSE-small reads 35% of XQuAD-R's Hindi pieces and 17% of its Vietnamese ones as `<unk>` (CL-ReLKT App. A.6):
distillation cannot teach a language through one unknown id. The sentencepiece model proto takes new pieces:
- every character of the training texts that no piece of the base contains (`unreadable`) and every character
  that only occurs inside longer pieces (`partial`) becomes a piece of its own, scored as sentencepiece scores an
  unknown character (lowest score - 10), so it takes exactly the place an `<unk>` took;
- with `pieces` > 0, a unigram model learned on the training texts adds its pieces that hold an unreadable
  character (learned scores), so a Hindi word is a few rows instead of a row per letter;
- with `piece_scripts` (e.g. Greek, which mUSE reads but spells letter by letter, ~5 pieces a word), also the
  learned pieces that hold a character of those scripts: text in them gets word-sized rows of its own;
- with `piece_chars` (e.g. Vietnamese's own letters ơ ư đ ạ ..., in a script the supported languages share), the
  learned pieces that hold one of those characters, so only text holding them reads new pieces.
A piece holding an unreadable character cannot match text the base could read, and the single characters score
as unknowns, so text without unknown characters keeps its ids; `piece_scripts` gives up that guarantee for text
holding those scripts or characters only. New ids follow the base's (128,000 on), their rows
follow the table's (128,010 on: mUSE's last 10 rows are reached by no piece and stay where they are).
"""

from __future__ import annotations

import io
import logging
from collections import Counter
from collections.abc import Sequence

import numpy as np
import sentencepiece as spm
import tensorflow as tf
from sentencepiece import sentencepiece_model_pb2

from relkt.encoders.muse_encoder import MuseEncoder
from relkt.encoders.script_split_tokenizer import script_pattern
from relkt.encoders.sentencepiece_tokenizer import sentencepiece_tokenizer
from relkt.encoders.vocab_extension import INIT_CHOICES, VocabExtension
from relkt.errors import ConfigError

log = logging.getLogger(__name__)

UNKNOWN_PENALTY = 10.0  # sentencepiece's unigram model scores an unknown character min_score - 10
# `compose`: a new piece starts as the mean of the base rows its text is spelled with (an unreadable character:
# `<unk>`'s row, so single characters start as `unk` does).
MUSE_INIT_CHOICES = INIT_CHOICES + ("compose",)


def _model(proto: bytes):
    model = sentencepiece_model_pb2.ModelProto()
    model.ParseFromString(proto)
    return model


def character_counts(proto: bytes, texts: Sequence[str]) -> Counter:
    """How often each character occurs in `texts` as the model normalizes them (what its pieces must cover)."""
    processor = spm.SentencePieceProcessor(model_proto=proto)
    return Counter(c for text in texts for c in processor.normalize(text))


def missing_characters(proto: bytes, texts: Sequence[str]) -> tuple[list[str], list[str]]:
    """(unreadable, partial): characters of `texts` (as the model normalizes them) that no piece contains, and
    those that occur only inside longer pieces; each sorted by frequency, then by character (deterministic)."""
    model = _model(proto)
    singles = {p.piece for p in model.pieces if len(p.piece) == 1}
    inside = {c for p in model.pieces for c in p.piece}
    counts = character_counts(proto, texts)
    order = lambda chars: sorted(chars, key=lambda c: (-counts[c], c))  # noqa: E731
    return (
        order(c for c in counts if c not in inside),
        order(c for c in counts if c in inside and c not in singles and c != "\u2581"),
    )


def normalized_chars(proto: bytes, chars: str) -> set[str]:
    """The characters of `chars` as the model normalizes them (NFKC), so they match the learned pieces' spelling;
    without the word-start mark the normalizer adds."""
    return set(spm.SentencePieceProcessor(model_proto=proto).normalize(chars)) - {"\u2581"} if chars else set()


def learn_pieces(proto: bytes, texts: Sequence[str], num_pieces: int) -> list[tuple[str, float]]:
    """(piece, score) of the up to `num_pieces` multi-character pieces of a unigram model learned on `texts` with the
    base's normalizer (one thread: the same pieces on every run, so a resumed run rebuilds the same vocabulary)."""
    base = _model(proto)
    texts = sorted(set(texts))
    chars = len(set("".join(spm.SentencePieceProcessor(model_proto=proto).normalize(texts))))
    out = io.BytesIO()
    try:  # room for every character and the meta pieces, plus `num_pieces` longer pieces
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(texts),
            model_writer=out,
            model_type="unigram",
            vocab_size=chars + num_pieces + 4,
            hard_vocab_limit=False,
            character_coverage=1.0,
            normalization_rule_name=base.normalizer_spec.name,
            add_dummy_prefix=base.normalizer_spec.add_dummy_prefix,
            num_threads=1,
            minloglevel=2,
            max_sentence_length=1 << 16,
        )
    except RuntimeError as e:  # e.g. too little text for that many pieces: say so rather than learn none silently
        raise ConfigError(
            f"extend_vocab.pieces={num_pieces}: sentencepiece could not learn pieces from "
            f"{len(texts)} training texts ({e}); use fewer pieces or 0 (single characters)"
        ) from None
    learned = _model(out.getvalue())
    return [(p.piece, p.score) for p in learned.pieces if p.type == p.NORMAL and len(p.piece) > 1]


def in_scripts(pieces: Sequence[str], scripts: Sequence[str]) -> np.ndarray:
    """Whether each piece holds a character of one of `scripts` (Unicode script names, as RE2 spells them)."""
    if not scripts or not pieces:
        return np.zeros(len(pieces), bool)
    try:
        return tf.strings.regex_full_match(list(pieces), f".*(?:{script_pattern(scripts)}).*").numpy()
    except tf.errors.InvalidArgumentError:
        raise ConfigError(
            f"extend_vocab.piece_scripts={list(scripts)}: not all Unicode script names RE2 "
            f"knows (e.g. Greek, Devanagari, Cyrillic)"
        ) from None


def composed_rows(proto: bytes, pieces: Sequence[str], table: np.ndarray) -> np.ndarray:
    """Per piece, the mean of the base rows that spell its text (the base's own segmentation of the piece alone,
    `▁` as a word start); a base id is its row, `<unk>` included."""
    model = _model(proto)
    model.normalizer_spec.add_dummy_prefix = False
    model.normalizer_spec.remove_extra_whitespaces = False
    processor = spm.SentencePieceProcessor(model_proto=model.SerializeToString())
    ids = processor.encode([p.replace("▁", " ") for p in pieces])
    unk = processor.unk_id()  # a piece the normalizer would erase entirely (none seen) starts as `<unk>`
    return np.stack([table[i or [unk]].mean(axis=0) for i in ids]) if pieces else table[:0]


def extend_sentencepiece_vocabulary(
    encoder,
    texts: Sequence[str],
    min_count: int = 1,
    init: str = "random",
    seed: int = 0,
    pieces: int = 0,
    piece_scripts: Sequence[str] = (),
    piece_chars: str = "",
):
    """A copy of the MuseEncoder `encoder` whose vocabulary reads `texts` without `<unk>`; returns
    (encoder, VocabExtension). `min_count` drops characters seen fewer times; `pieces` > 0 learns a unigram
    model of that size and keeps its pieces that hold an unreadable character, one of `piece_scripts` or of
    `piece_chars`. New rows start as in `relkt.encoders.vocab_extension.extend_vocabulary` (`random`: mean row +
    noise of the rows' spread) or, with `compose`, as the mean of the base rows that spell them."""
    if init not in MUSE_INIT_CHOICES:
        raise ConfigError(f"unknown vocabulary init {init!r}; valid: {', '.join(MUSE_INIT_CHOICES)}")
    if piece_scripts and pieces <= 0:
        raise ConfigError(
            f"extend_vocab.piece_scripts={list(piece_scripts)} keeps learned pieces: set extend_vocab.pieces > 0"
        )
    if piece_chars and pieces <= 0:
        raise ConfigError(f"extend_vocab.piece_chars={piece_chars!r} keeps learned pieces: set extend_vocab.pieces > 0")
    if any(c.isspace() for c in piece_chars):
        raise ConfigError(f"extend_vocab.piece_chars={piece_chars!r}: list letters only, no spaces")
    if encoder.added_pieces_start:
        raise ConfigError(
            f"this muse encoder's vocabulary was extended already (rows {encoder.added_rows_start} on, e.g. a teacher "
            f"that grew its own): set extend_vocab.enabled false; those rows train with the rest"
        )
    proto = bytes(encoder.tokenizer.proto)
    model = _model(proto)
    unreadable, partial = missing_characters(proto, texts)
    if min_count > 1:
        counts = character_counts(proto, texts)
        unreadable = [c for c in unreadable if counts[c] >= min_count]
        partial = [c for c in partial if counts[c] >= min_count]
    known = {p.piece for p in model.pieces}
    lowest = min(p.score for p in model.pieces if p.type == p.NORMAL)
    new: list[tuple[str, float]] = [(c, lowest - UNKNOWN_PENALTY) for c in unreadable + partial]
    learned = 0
    if pieces > 0 and (unreadable or piece_scripts or piece_chars):
        marks = set(unreadable) | normalized_chars(proto, piece_chars)
        candidates = [(p, score) for p, score in learn_pieces(proto, texts, pieces) if p not in known]
        scripted = in_scripts([p for p, _ in candidates], piece_scripts)
        for (piece, score), script in zip(candidates, scripted):
            if script or any(c in marks for c in piece):
                new.append((piece, score))
                learned += 1
    first_piece = len(model.pieces)
    for piece, score in new:
        entry = model.pieces.add()
        entry.piece, entry.score, entry.type = piece, score, entry.NORMAL

    table = encoder.token_embedding.embeddings.numpy()
    if init == "unk":
        rows = np.repeat(table[encoder.unk_id][None], len(new), axis=0)
    elif init == "compose":
        rows = composed_rows(proto, [p for p, _ in new], table)
    else:
        rows = np.repeat(table.mean(axis=0)[None], len(new), axis=0)
        if init == "random":
            rows = rows + np.random.default_rng(seed).normal(size=rows.shape) * table.std(axis=0)
    config = {
        **encoder.get_config(),
        "vocabulary_size": len(table) + len(new),
        "added_pieces_start": first_piece,
        "added_rows_start": len(table),
    }
    config["tokenizer"] = sentencepiece_tokenizer(model.SerializeToString())
    extended = MuseEncoder(**config)
    extended.build()
    for target, source in zip(extended.weights, encoder.weights):
        if target.path.partition("/")[2] != source.path.partition("/")[2]:
            raise RuntimeError(f"muse weights out of order: {target.path} vs {source.path}")
        value = source.numpy()
        target.assign(
            np.concatenate([value, rows.astype(value.dtype)]) if source is encoder.token_embedding.embeddings else value
        )
    extended.trainable = encoder.trainable
    log.info(
        "muse vocabulary: +%d pieces (%d unreadable characters, %d only inside pieces, %d learned)",
        len(new),
        len(unreadable),
        len(partial),
        learned,
    )
    return extended, VocabExtension([p for p, _ in new], len(table), "", learned)
