"""The encoder interface: raw strings in, L2-normalised float32 embeddings out."""

from __future__ import annotations

import contextlib
import hashlib
import sys
from collections.abc import Iterator, Sequence

import keras
import numpy as np
import tensorflow as tf
from tqdm.auto import tqdm

from relkt.errors import EncoderError


def masked_mean(sequence: keras.KerasTensor, mask: keras.KerasTensor) -> keras.KerasTensor:
    """Mean over the positions where `mask` is 1 (the sentence-transformers pooling)."""
    mask = keras.ops.cast(mask, sequence.dtype)[..., None]
    total = keras.ops.sum(sequence * mask, axis=1)
    return total / keras.ops.maximum(keras.ops.sum(mask, axis=1), 1.0)


def l2_normalize(x: keras.KerasTensor) -> keras.KerasTensor:
    """Unit rows in float32 (also under mixed precision); a zero row stays zero."""
    x = keras.ops.cast(x, "float32")
    return x / keras.ops.maximum(keras.ops.norm(x, axis=-1, keepdims=True), 1e-12)


class SentenceEncoder(keras.Model):
    """Base class of relkt encoders.

    Subclasses split the work in two so training can tokenize inside `tf.data`:
    `preprocess(strings)` is a TF-graph function (strings -> feature tensors) and `call(features)`
    is the trainable network returning L2-normalised embeddings. `embed(strings)` chains both;
    `encode(texts)` is the batched numpy entry point used for scoring and mining.
    """

    kind = "base"
    # Cap on a batch's padded length x texts in `encode` (None: `batch_size` texts). On a CPU a batch whose
    # activations stay in cache runs faster than a big one (length_keys must then count pieces).
    token_budget: int | None = None
    # Whether `max_length` only caps memory (mUSE: no position embeddings), so scoring may read longer texts.
    reads_any_length = False

    def preprocess(self, strings: tf.Tensor):
        """(batch,) strings -> the feature tensors `call` takes; graph code, also when called eagerly
        (keras-hub tokenizers return Python lists in eager mode)."""
        strings = tf.convert_to_tensor(strings, tf.string)
        if not tf.executing_eagerly():
            return self._preprocess(strings)
        if self.__dict__.get("_relkt_preprocess") is None:
            spec = tf.TensorSpec([None], tf.string)
            self.__dict__["_relkt_preprocess"] = tf.function(self._preprocess, input_signature=[spec])
        return self.__dict__["_relkt_preprocess"](strings)

    def _preprocess(self, strings: tf.Tensor):
        raise NotImplementedError

    def embed(self, strings, training: bool = False):
        return self(self.preprocess(tf.convert_to_tensor(strings, tf.string)), training=training)

    @property
    def dim(self) -> int:
        raise NotImplementedError

    def _infer(self, features):
        return self(features, training=False)

    def _forward(self, element_spec):
        """The inference step, traced once per feature spec (dynamic batch and length dims)."""
        cache = self.__dict__.setdefault("_relkt_forward", {})
        key = str(element_spec)
        if key not in cache:
            cache[key] = tf.function(self._infer, input_signature=[element_spec])
        return cache[key]

    def length_keys(self, texts: Sequence[str]) -> np.ndarray:
        """What `encode` sorts by so a batch holds texts of similar length: characters here; an encoder whose
        pieces per character vary by script (sentencepiece) counts pieces instead."""
        return np.fromiter((len(t) for t in texts), dtype=np.int64, count=len(texts))

    def dim_mismatch(self, width: int) -> str:
        """The error when the model's embeddings are `width` wide, not `dim` (a subclass names where dim came from)."""
        return f"{type(self).__name__}: its embeddings have {width} dimensions, but it says dim {self.dim}"

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool | str = False) -> np.ndarray:
        """Embed `texts` in batches (longest first, so padding is trimmed per batch); rows in input order."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dim), np.float32)
        if any(not isinstance(t, str) for t in texts):
            raise TypeError("encode() takes a list of strings")
        lengths = self.length_keys(texts)
        order = np.argsort(-lengths, kind="stable")
        sorted_texts = [texts[i] for i in order]
        if self.token_budget:  # batches of at most `token_budget` padded pieces (and `batch_size` texts)
            bounds, lo = [0], 0
            for hi in range(1, len(order) + 1):
                if hi - lo > batch_size or (hi - lo) * lengths[order[lo]] > self.token_budget and hi - lo > 1:
                    bounds.append(hi - 1)
                    lo = hi - 1
            bounds.append(len(order))
            batches = tf.RaggedTensor.from_row_splits(tf.constant(sorted_texts), np.array(bounds, np.int64))
            ds = tf.data.Dataset.from_tensor_slices(batches)
        else:
            ds = tf.data.Dataset.from_tensor_slices(tf.constant(sorted_texts)).batch(batch_size)
        ds = ds.map(self.preprocess, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)
        forward = self._forward(ds.element_spec)
        out = np.empty((len(texts), self.dim), np.float32)
        desc = progress if isinstance(progress, str) else "encoding"
        with tqdm(
            total=len(texts), desc=desc, unit="text", disable=not progress or not sys.stderr.isatty(), leave=False
        ) as bar:
            pos = 0
            for features in ds:
                emb = forward(features).numpy()
                if emb.shape[-1] != out.shape[-1]:  # a model whose recorded dim is not its output's
                    raise EncoderError(self.dim_mismatch(emb.shape[-1]))
                out[order[pos : pos + len(emb)]] = emb
                pos += len(emb)
                bar.update(len(emb))
        return out


@contextlib.contextmanager
def reading_whole(encoder: SentenceEncoder, max_length: int) -> Iterator[None]:
    """Inside the block `encode` reads texts up to `max_length` pieces (a whole article of the XX->EN protocol), if
    the encoder `reads_any_length`; a training pipeline traced before keeps its own length. Others are left as
    they are."""
    own = getattr(encoder, "max_length", None)
    if not encoder.reads_any_length or own is None or own >= max_length:
        yield
        return
    encoder.__dict__.pop("_relkt_preprocess", None)  # an eager preprocess traced at the old length
    encoder.max_length = max_length
    try:
        yield
    finally:
        encoder.max_length = own
        encoder.__dict__.pop("_relkt_preprocess", None)


def weights_digest(encoder: keras.Model) -> str:
    """A hash of every weight's bytes: equal digests mean bit-identical models."""
    h = hashlib.sha256()
    for w in encoder.weights:
        h.update(np.ascontiguousarray(w.numpy()).tobytes())
    return h.hexdigest()


class QuietEncoder:
    """An encoder seen without its progress bar, at a fixed batch size (evaluation inside training, `--no-progress`)."""

    def __init__(self, encoder, batch_size: int | None = None):
        self.encoder, self.batch_size = encoder, batch_size

    def encode(self, texts, batch_size: int = 64, progress: bool | str = False) -> np.ndarray:
        return self.encoder.encode(texts, batch_size=self.batch_size or batch_size, progress=False)
