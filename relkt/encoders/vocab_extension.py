"""Grow a `bert:` student's WordPiece vocabulary with the characters of scripts its base cannot read.

CL-ReLKT's weakest language was the one its tokenizer could not read (Hindi on mUSE, 14.5% unknown
tokens): distillation cannot teach what arrives as [UNK]. Here every character of the training texts
that the vocabulary cannot produce is added (as a word-initial piece and/or a `##` continuation,
whichever WordPiece needs), the token-embedding matrix grows by that many rows, and spaceless
scripts (Thai, ...) are split into characters, or into multi-character pieces learned by BPE on the
training texts, so a clause is not one [UNK]. Old token ids and every
other weight are unchanged, so the extended student starts as an exact copy of its teacher on text
the teacher could read.
"""

from __future__ import annotations

import io
import logging
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field

import numpy as np
import sentencepiece as spm
import tensorflow as tf
from keras_hub.src.tokenizers.word_piece_tokenizer import (
    get_special_tokens_pattern,
    pretokenize,
)  # not exported publicly

from relkt.encoders.bert_encoder import BertEncoder
from relkt.encoders.script_split_tokenizer import NO_SPACE_SCRIPTS, ScriptSplitTokenizer, script_pattern
from relkt.errors import ConfigError

log = logging.getLogger(__name__)

INIT_CHOICES = ("random", "mean", "unk")


@dataclass
class VocabExtension:
    """What `extend_vocabulary` added: the new tokens (in id order) and where their ids start."""

    tokens: list[str] = field(default_factory=list)
    first_id: int = 0
    split_pattern: str = ""
    learned_pieces: int = (
        0  # multi-character script pieces BPE learned that the training texts use (the split holds them)
    )

    def summary(self) -> dict:
        initial = sum(not t.startswith("##") for t in self.tokens)
        return {
            "added_tokens": len(self.tokens),
            "initial_pieces": initial,
            "continuation_pieces": len(self.tokens) - initial,
            "learned_script_pieces": self.learned_pieces,
            "first_id": self.first_id,
            "split_pattern": self.split_pattern,
        }


def _words(tokenizer, texts: Sequence[str], batch_size: int = 1024) -> list[str]:
    """The words WordPiece sees (after lowercasing, accent stripping and splitting), as the tokenizer makes them."""
    pattern = get_special_tokens_pattern(tokenizer._special_tokens_for_splitting())
    split = getattr(tokenizer, "split_pattern", "")
    words: list[str] = []
    for lo in range(0, len(texts), batch_size):
        batch = tf.constant(list(texts[lo : lo + batch_size]))
        if split:  # as ScriptSplitTokenizer.tokenize does
            batch = tf.strings.regex_replace(tokenizer.normalize(batch), split, r" \0 ")
        ragged = pretokenize(
            batch, tokenizer.lowercase, tokenizer.strip_accents, tokenizer.split, tokenizer.split_on_cjk, pattern
        )
        words.extend(w.decode("utf-8") for w in ragged.flat_values.numpy())
    return words


def missing_pieces(tokenizer, texts: Sequence[str], min_count: int = 1, whole: Collection[str] = ()) -> list[str]:
    """Pieces WordPiece would need to read every word of `texts` without [UNK].

    A word's first character must exist as a piece, every later one as `##c` (any of them may start a
    continuation); a word in `whole` (a learned script piece, which the tokenizer's split made a word)
    is added as it is. Pieces the vocabulary has are skipped; order is most frequent first, then by
    text, so the result (and the new ids) are the same on every run.
    """
    vocab = set(tokenizer.get_vocabulary())
    whole = set(whole)
    counts: Counter = Counter()
    for word in _words(tokenizer, texts):
        if word in vocab:
            continue
        if word in whole:
            counts[word] += 1
            continue
        counts[word[0]] += 1
        counts.update("##" + c for c in word[1:])
    needed = [(n, t) for t, n in counts.items() if n >= min_count and t not in vocab]
    return [t for n, t in sorted(needed, key=lambda x: (-x[0], x[1]))]


def learn_script_pieces(tokenizer, texts: Sequence[str], scripts: Sequence[str], num_pieces: int) -> list[str]:
    """Up to `num_pieces` multi-character pieces per script of `scripts`, learned by BPE (sentencepiece) on the
    runs of that script in `texts` as `tokenizer` normalizes them (accents stripped, as the split will see them).

    Single characters of a Thai clause are letters; BPE merges the frequent ones into syllable- and
    word-sized pieces, so a row means more and a sentence takes ~3x fewer tokens. Each script gets its
    own budget, so adding a script leaves another's pieces unchanged. Deterministic (one thread), so a
    resumed run rebuilds the same vocabulary.
    """
    if num_pieces <= 0:
        return []
    normalized: list[str] = []
    for lo in range(0, len(texts), 1024):
        normalized.extend(t.decode("utf-8") for t in tokenizer.normalize(list(texts[lo : lo + 1024])).numpy())
    pieces: list[str] = []
    for script in scripts:
        chars = script_pattern([script])
        kept = tf.strings.regex_replace(tf.constant(normalized or [""]), "[^" + chars[1:-1] + "]+", " ").numpy()
        runs = [r for t in kept for r in t.decode("utf-8").split()]
        pieces.extend(_bpe_pieces(runs, num_pieces))
    return list(dict.fromkeys(pieces))  # a piece of two scripts' runs once


def _bpe_pieces(runs: list[str], num_pieces: int) -> list[str]:
    """The first `num_pieces` multi-character BPE pieces of `runs` (strings without spaces), in merge order."""
    if not runs:
        return []
    model = io.BytesIO()
    try:
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(runs),
            model_writer=model,
            model_type="bpe",
            vocab_size=len(set("".join(runs))) + num_pieces + 1,
            hard_vocab_limit=False,
            character_coverage=1.0,
            normalization_rule_name="identity",
            add_dummy_prefix=False,
            bos_id=-1,
            eos_id=-1,
            unk_id=0,
            num_threads=1,
            minloglevel=2,
        )
    except RuntimeError as e:  # e.g. too little text to learn anything from
        log.warning("no script pieces learned (%s); characters only", e)
        return []
    sp = spm.SentencePieceProcessor(model_proto=model.getvalue())
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if not (sp.is_control(i) or sp.is_unknown(i))]
    return [p for p in pieces if len(p) > 1 and "\u2581" not in p][:num_pieces]


def extend_vocabulary(
    encoder,
    texts: Sequence[str],
    min_count: int = 1,
    init: str = "random",
    split_scripts: Sequence[str] = NO_SPACE_SCRIPTS,
    seed: int = 0,
    pieces: int = 0,
):
    """A copy of the BertEncoder `encoder` whose vocabulary also covers `texts`; returns (encoder, VocabExtension).

    `pieces` > 0 learns that many multi-character pieces per script of `split_scripts` (`learn_script_pieces`);
    the tokenizer cuts those scripts into the longest known piece, else a character. With "Han" among
    `split_scripts`, ideographs are cut by that split (words as pieces) instead of keras-hub's one-by-one
    CJK split, which the extended tokenizer then turns off.

    New embedding rows start (`init`) at `random`: the mean row plus Gaussian noise with the old rows'
    per-dimension spread (seeded), so different characters are told apart from the first step and
    texts sharing characters already embed close; `mean`: all at the mean row; `unk`: all at [UNK]'s
    row (both leave every new character identical until training separates them). They are trained
    like every other weight.
    """
    if not isinstance(encoder, BertEncoder):
        raise ConfigError(
            f"vocabulary extension needs a bert: student (bert:PATH, minilm, or a relkt export of a BERT encoder) or a "
            f"muse one (muse, muse:DIR), got a {type(encoder).__name__}: a hub: SavedModel keeps its vocabulary inside "
            "its graph, where it cannot grow"
        )
    if init not in INIT_CHOICES:
        raise ConfigError(f"unknown vocabulary init {init!r}; valid: {', '.join(INIT_CHOICES)} (compose: muse only)")
    old = encoder.tokenizer
    pattern = script_pattern(split_scripts)
    settings = dict(
        lowercase=old.lowercase,
        strip_accents=old.strip_accents,
        split=old.split,
        split_on_cjk=old.split_on_cjk and "Han" not in split_scripts,
    )
    old_vocab = list(old.get_vocabulary())
    # Find what is missing with the splitting the extended tokenizer will do.
    probe = ScriptSplitTokenizer(vocabulary=old_vocab, split_pattern=pattern, **settings)
    learned = learn_script_pieces(probe, texts, split_scripts, pieces)
    if learned:
        pattern = script_pattern(split_scripts, learned)
        probe = ScriptSplitTokenizer(vocabulary=old_vocab, split_pattern=pattern, **settings)
        # Keep the pieces the greedy cut actually makes in the training texts (dropping one that never wins
        # changes no training text's cut): a piece in the split must be a token with a trained row.
        cut = Counter(_words(probe, texts))
        forms = [[w] for w in _words(probe, learned)]  # one word per piece, as a rule
        if len(forms) != len(learned):
            forms = [_words(probe, [p]) for p in learned]
        learned = [p for p, f in zip(learned, forms) if len(f) == 1 and cut[f[0]] >= min_count]
        pattern = script_pattern(split_scripts, learned)
        probe = ScriptSplitTokenizer(vocabulary=old_vocab, split_pattern=pattern, **settings)
    new_tokens = missing_pieces(probe, texts, min_count, whole=set(_words(probe, learned)) if learned else ())
    if learned:  # a character seen only inside pieces must still read alone, in a combination training never had
        have = set(old_vocab) | set(new_tokens)
        chars = sorted({c for c in _words(probe, sorted({c for p in learned for c in p}))} - have)
        new_tokens += chars
    tokenizer = ScriptSplitTokenizer(vocabulary=old_vocab + new_tokens, split_pattern=pattern, **settings)

    backbone = encoder.backbone
    config = backbone.get_config()
    config["vocabulary_size"] = len(old_vocab) + len(new_tokens)
    grown = type(backbone).from_config(config)
    table = backbone.token_embedding.embeddings.numpy()
    if init == "unk":
        new_rows = np.repeat(table[old.token_to_id("[UNK]")][None], len(new_tokens), axis=0)
    else:
        new_rows = np.repeat(table.mean(axis=0)[None], len(new_tokens), axis=0)
        if init == "random":
            new_rows = new_rows + np.random.default_rng(seed).normal(size=new_rows.shape) * table.std(axis=0)
    rows = np.concatenate([table, new_rows]).astype(table.dtype)
    for target, source in zip(grown.weights, backbone.weights):
        if target.path != source.path:
            raise RuntimeError(f"backbone weights out of order: {target.path} vs {source.path}")
        target.assign(rows if source is backbone.token_embedding.embeddings else source.numpy())
    extended = BertEncoder(grown, tokenizer, max_length=encoder.max_length, name=encoder.name)
    extended.trainable = encoder.trainable
    return extended, VocabExtension(new_tokens, len(old_vocab), pattern, len(learned))
