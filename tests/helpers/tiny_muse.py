"""A tiny mUSE look-alike, built in the test: sentencepiece trained on a few hundred multilingual lines,
TF Text tokenization in the graph, embed, mean-pool, project, L2-normalise; saved with tf.saved_model.save
with the Reusable-SavedModel attributes TF Hub models have (`__call__`, `variables`, `trainable_variables`)."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import tensorflow as tf

WORDS = {
    "en": "cat dog river bread sleep hunt flows baked night day long where what how".split(),
    "de": "katze hund fluss brot schlafen jagen fließt gebacken nacht tag lang wo was wie".split(),
    "th": "แมว สุนัข แม่น้ำ ขนมปัง นอน ล่า ไหล อบ กลางคืน วัน ยาว ที่ไหน อะไร อย่างไร".split(),
    "zh": "猫 狗 河 面包 睡觉 狩猎 流动 烤 夜晚 白天 长 哪里 什么 怎么".split(),
}


def training_lines(n: int = 400, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed)
    langs = list(WORDS)
    return [" ".join(rng.choice(WORDS[langs[i % 4]], size=6)) for i in range(n)]


class TinyMuse(tf.__internal__.tracking.AutoTrackable):
    def __init__(self, sp_model: bytes, dim: int = 16, seed: int = 0):
        import tensorflow_text as tf_text

        self.tokenizer = tf_text.SentencepieceTokenizer(model=sp_model)
        vocab = int(self.tokenizer.vocab_size())
        rng = np.random.default_rng(seed)
        self.embeddings = tf.Variable(rng.normal(0, 0.5, (vocab, dim)).astype(np.float32), name="embeddings")
        self.projection = tf.Variable(np.eye(dim, dtype=np.float32), name="projection")
        self.scale = tf.Variable(1.0, trainable=False, name="scale")  # a non-trainable variable, as in BatchNorm
        self.variables = [self.embeddings, self.projection, self.scale]
        self.trainable_variables = [self.embeddings, self.projection]

    @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
    def __call__(self, strings):
        ids = self.tokenizer.tokenize(strings)
        pooled = tf.reduce_mean(tf.gather(self.embeddings, ids), axis=1)
        return tf.math.l2_normalize(tf.matmul(pooled, self.projection) * self.scale, axis=-1)


def make_tiny_muse(path: Path, dim: int = 16, seed: int = 0) -> Path:
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_lines(seed=seed)),
        model_writer=model,
        vocab_size=80,
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
    )
    tf.saved_model.save(TinyMuse(model.getvalue(), dim=dim, seed=seed), str(path))
    return path


def tiny_sentencepiece(seed: int = 0, vocab_size: int = 80) -> bytes:
    """A unigram sentencepiece model (unk 0, <s> 1, </s> 2, as mUSE's) trained on `training_lines`."""
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(training_lines(seed=seed)),
        model_writer=model,
        vocab_size=vocab_size,
        character_coverage=1.0,
        hard_vocab_limit=False,
        minloglevel=2,
        num_threads=1,
    )
    return model.getvalue()


def tiny_muse_encoder(seed: int = 0, max_length: int = 32, **kwargs):
    """relkt's `muse` architecture at toy size with random weights: a sentencepiece model trained here, and a token
    table with 3 rows more than pieces (mUSE's table has 10 rows no piece reaches)."""
    import keras

    from relkt.encoders.muse_encoder import MuseEncoder, sentencepiece_tokenizer

    keras.utils.set_random_seed(seed)
    tokenizer = sentencepiece_tokenizer(tiny_sentencepiece(seed))
    encoder = MuseEncoder(
        tokenizer,
        vocabulary_size=tokenizer.vocabulary_size() + 3,
        embedding_dim=16,
        ngram_dim=8,
        hidden_dim=12,
        output_dim=16,
        epsilon=1e-6,
        max_length=max_length,
        **kwargs,
    )
    encoder.build()
    return encoder
