"""A BERT WordPiece tokenizer that also reads scripts written without spaces, one character at a time."""

from __future__ import annotations

import keras
import keras_hub
import tensorflow as tf

# Scripts that do not separate words with spaces (CJK ideographs are already split by keras-hub).
NO_SPACE_SCRIPTS = ("Thai", "Lao", "Khmer", "Myanmar", "Hiragana", "Katakana")


def script_pattern(scripts) -> str:
    """An RE2 class matching one character of any of `scripts` (Unicode script names)."""
    return "[" + "".join(f"\\p{{{s}}}" for s in scripts) + "]" if scripts else ""


@keras.saving.register_keras_serializable(package="relkt")
class ScriptSplitTokenizer(keras_hub.models.BertTokenizer):
    """`BertTokenizer` that puts spaces around every character matching `split_pattern` first.

    WordPiece gives a word it cannot cover, or one over its byte limit, a single [UNK]; a Thai
    clause is one such "word". Isolating the characters of spaceless scripts (as keras-hub already
    does for CJK ideographs) lets a vocabulary that holds those characters read them. The split
    runs inside the graph, so exported models tokenize the same way.
    """

    def __init__(self, vocabulary=None, lowercase: bool = False, split_pattern: str = "", **kwargs):
        super().__init__(vocabulary=vocabulary, lowercase=lowercase, **kwargs)
        self.split_pattern = split_pattern

    def tokenize(self, inputs):
        if self.split_pattern:
            inputs = tf.strings.regex_replace(tf.convert_to_tensor(inputs, tf.string), self.split_pattern, r" \0 ")
        return super().tokenize(inputs)

    def get_config(self):
        return {**super().get_config(), "split_pattern": self.split_pattern}
