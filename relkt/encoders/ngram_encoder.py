"""A small trainable encoder over hashed character n-grams: reads any script, needs no vocabulary."""

from __future__ import annotations

import keras
import tensorflow as tf

from relkt.encoders.sentence_encoder import SentenceEncoder, l2_normalize, masked_mean
from relkt.encoders.token_embedding import TokenEmbedding


@keras.saving.register_keras_serializable(package="relkt")
class NgramEncoder(SentenceEncoder):
    """Character n-grams (of the lowercased text, with boundary marks) hashed into `num_buckets`
    embedding rows, mean-pooled, projected and L2-normalised.

    Hashing happens in-graph (`preprocess`), so the model takes raw strings in `tf.data` and in
    exported SavedModels. Bucket 0 is padding. Meant for tests, quickstarts and as a vocabulary-free
    student; it is not a pretrained model.
    """

    kind = "ngram"

    def __init__(
        self,
        dim: int = 128,
        num_buckets: int = 2**16,
        ngram_sizes: tuple[int, ...] = (1, 2, 3),
        max_ngrams: int = 512,
        seed: int = 0,
        **kwargs,
    ):
        super().__init__(**kwargs)
        if dim <= 0 or num_buckets < 2 or not ngram_sizes or min(ngram_sizes) < 1:
            raise ValueError(
                f"NgramEncoder needs dim > 0, num_buckets >= 2 and n-gram sizes >= 1; got "
                f"dim={dim}, num_buckets={num_buckets}, ngram_sizes={ngram_sizes}"
            )
        self._dim, self.num_buckets = int(dim), int(num_buckets)
        self.ngram_sizes, self.max_ngrams, self.seed = tuple(int(n) for n in ngram_sizes), int(max_ngrams), seed
        init = keras.initializers.RandomNormal(stddev=0.1, seed=seed)
        self.embedding = TokenEmbedding(num_buckets, dim, embeddings_initializer=init, name="ngram_embedding")
        self.projection = keras.layers.Dense(
            dim, kernel_initializer=keras.initializers.GlorotUniform(seed), name="projection"
        )

    @property
    def dim(self) -> int:
        return self._dim

    def _preprocess(self, strings: tf.Tensor) -> tf.Tensor:
        """(batch,) strings -> (batch, <= max_ngrams) int32 bucket ids, 0-padded."""
        strings = tf.strings.lower(tf.convert_to_tensor(strings, tf.string), encoding="utf-8")
        chars = tf.strings.unicode_split(tf.strings.join(["\x02", strings, "\x03"]), "UTF-8", errors="replace")
        grams = tf.concat([tf.strings.ngrams(chars, n, separator="") for n in self.ngram_sizes], axis=1)
        ids = tf.strings.to_hash_bucket_fast(grams, self.num_buckets - 1) + 1
        ids = ids[:, : self.max_ngrams]
        return tf.cast(ids.to_tensor(default_value=0), tf.int32)

    def build(self, input_shape=None):
        self.embedding.build((None, None))
        self.projection.build((None, self._dim))
        self.built = True

    def call(self, ids, training=False):
        pooled = masked_mean(self.embedding(ids), keras.ops.not_equal(ids, 0))
        return l2_normalize(self.projection(pooled))

    def get_config(self):
        return {
            **super().get_config(),
            "dim": self._dim,
            "num_buckets": self.num_buckets,
            "ngram_sizes": list(self.ngram_sizes),
            "max_ngrams": self.max_ngrams,
            "seed": self.seed,
        }
