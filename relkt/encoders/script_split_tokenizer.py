"""A BERT WordPiece tokenizer that also reads scripts written without spaces, one piece at a time."""

from __future__ import annotations

import re
from collections.abc import Iterable

import keras
import keras_hub
import tensorflow as tf
import tensorflow_text as tf_text

# Scripts that do not separate words with spaces (CJK ideographs are already split by keras-hub).
NO_SPACE_SCRIPTS = ("Thai", "Lao", "Khmer", "Myanmar", "Hiragana", "Katakana")


def script_pattern(scripts, pieces: Iterable[str] = ()) -> str:
    """An RE2 pattern matching one piece of text in any of `scripts` (Unicode script names).

    `pieces` (multi-character strings of those scripts) are tried longest first, then a single
    character: RE2 picks the first alternative that matches, so a run is cut greedily left to
    right into the longest known pieces (maximal matching, the classic dictionary segmentation
    for Thai).
    """
    if not scripts:
        return ""
    chars = "[" + "".join(f"\\p{{{s}}}" for s in scripts) + "]"
    longest_first = sorted(set(pieces), key=lambda p: (-len(p), p))
    return "|".join([re.escape(p) for p in longest_first if len(p) > 1] + [chars])


@keras.saving.register_keras_serializable(package="relkt")
class ScriptSplitTokenizer(keras_hub.models.BertTokenizer):
    """`BertTokenizer` that first puts spaces around every match of `split_pattern` (`script_pattern`).

    WordPiece gives a word it cannot cover, or one over its byte limit, a single [UNK]; a Thai
    clause is one such "word". Isolating the characters (or learned pieces) of spaceless scripts,
    as keras-hub already does for CJK ideographs, lets a vocabulary that holds them read them. The
    split runs on the text as BertTokenizer normalizes it (so pieces learned on `normalize`d text
    match) and inside the graph, so exported models tokenize the same way.
    """

    def __init__(self, vocabulary=None, lowercase: bool = False, split_pattern: str = "", **kwargs):
        super().__init__(vocabulary=vocabulary, lowercase=lowercase, **kwargs)
        self.split_pattern = split_pattern

    def normalize(self, inputs):
        """The text as BertTokenizer has it when it splits words: accents stripped (NFD, nonspacing marks
        dropped) if `strip_accents`; it lowercases each word after splitting. Idempotent."""
        inputs = tf.convert_to_tensor(inputs, tf.string)
        if self.strip_accents:
            inputs = tf.strings.regex_replace(tf_text.normalize_utf8(inputs, "NFD"), r"\p{Mn}", "")
        return inputs

    def tokenize(self, inputs):
        if self.split_pattern:
            inputs = tf.strings.regex_replace(self.normalize(inputs), self.split_pattern, r" \0 ")
        return super().tokenize(inputs)

    def get_config(self):
        return {**super().get_config(), "split_pattern": self.split_pattern, "split_on_cjk": self.split_on_cjk}
