"""An embedding layer that reads only the rows it looks up, so a table updated in place stays cheap to read."""

from __future__ import annotations

import keras
import tensorflow as tf


@keras.saving.register_keras_serializable(package="relkt")
class TokenEmbedding(keras.layers.Embedding):
    """`keras.layers.Embedding` whose lookup is a sparse read of the variable (`ResourceGather`), not a read of the
    whole table followed by a gather.

    Why: once an optimizer updates rows of a variable in place (a scatter: relkt.training.sparse_adam's lazy Adam,
    RowSubsetAdam), TensorFlow puts the variable in copy-on-read mode, and every whole read copies it: 23 ms for
    mUSE's 128,010 x 512 table on 2 cores, paid at each encoder call of a step (three in a teacher step). A sparse
    read copies the rows read. Same values, same gradient (`tf.IndexedSlices` over the rows read), same weights and
    names as `keras.layers.Embedding`; quantized or LoRA tables take Keras's own lookup.
    """

    def call(self, inputs):
        if self.quantization_mode or getattr(self, "lora_enabled", False):
            return super().call(inputs)
        if inputs.dtype not in (tf.int32, tf.int64):
            inputs = tf.cast(inputs, tf.int32)
        table = getattr(self.embeddings, "_value", self.embeddings)  # the backing tf.Variable: a sparse read
        return keras.ops.cast(tf.gather(table, inputs), self.compute_dtype)
