"""An embedding layer that reads only the rows it looks up, so a table updated in place stays cheap to read."""

from __future__ import annotations

import keras
import tensorflow as tf


def sparse_lookup(layer: keras.layers.Embedding, ids) -> tf.Tensor:
    """`layer`'s rows at `ids`, read from its variable with `ResourceGather` (the rows only)."""
    if ids.dtype not in (tf.int32, tf.int64):
        ids = tf.cast(ids, tf.int32)
    return keras.ops.cast(tf.gather(_backing(layer), ids), layer.compute_dtype)


def _backing(layer: keras.layers.Embedding):
    """The tf.Variable behind the layer's Keras variable; None while Keras builds it symbolically (deferred)."""
    table = getattr(layer.embeddings, "_value", None)
    return table if isinstance(table, tf.Variable) else None


def _plain(layer: keras.layers.Embedding) -> bool:
    quantized_or_masked = layer.quantization_mode or getattr(layer, "lora_enabled", False) or layer.mask_zero
    return not quantized_or_masked and _backing(layer) is not None


@keras.saving.register_keras_serializable(package="relkt")
class TokenEmbedding(keras.layers.Embedding):
    """`keras.layers.Embedding` whose lookup is a sparse read of the variable (`ResourceGather`), not a read of the
    whole table followed by a gather.

    Why: once an optimizer updates rows of a variable in place (a scatter: relkt.stages.sparse_adam's lazy Adam,
    RowSubsetAdam), TensorFlow puts the variable in copy-on-read mode, and every whole read copies it: 23 ms for
    mUSE's 128,010 x 512 table on 2 cores, paid at each encoder call of a step (three in a teacher step). A sparse
    read copies the rows read. Same values, same gradient (`tf.IndexedSlices` over the rows read), same weights and
    names as `keras.layers.Embedding`; quantized, LoRA or masking tables take Keras's own lookup.
    """

    def call(self, inputs):
        return sparse_lookup(self, inputs) if _plain(self) else super().call(inputs)


def read_rows_sparsely(layer: keras.layers.Embedding) -> keras.layers.Embedding:
    """Make a built library layer (keras-hub's BERT word table, a `ReversibleEmbedding`) look up as TokenEmbedding
    does, in place: its class becomes a subclass whose forward lookup is `sparse_lookup`; `reverse=True` (the tied
    output projection), weights, names and config stay the library's."""
    base = type(layer)
    if getattr(base, "_relkt_sparse_reads", False):
        return layer

    def call(self, inputs, *args, **kwargs):
        if args or kwargs.get("reverse") or not _plain(self):
            return base.call(self, inputs, *args, **kwargs)
        return sparse_lookup(self, inputs)

    layer.__class__ = type(base.__name__, (base,), {"call": call, "_relkt_sparse_reads": True})
    return layer
