"""An encoder with language directions projected out of its embeddings (relkt.analysis.language_subspace's shared
projection), inside the model, so that an export carries it and `hub.load` users get the vectors relkt scores."""

from __future__ import annotations

import keras
import numpy as np
import tensorflow as tf

from relkt.encoders.sentence_encoder import SentenceEncoder, l2_normalize
from relkt.names import ANSWER_CONTEXT_WEIGHT


@keras.saving.register_keras_serializable(package="relkt")
class SubspaceRemovedEncoder(SentenceEncoder):
    """`inner` (a relkt encoder), then x - (x B^T) B for the fixed orthonormal rows B (`basis`, [rank, dim]), then L2
    normalisation. The basis is a constant of the model, never trained."""

    def __init__(self, inner: SentenceEncoder, basis: np.ndarray | list, **kwargs):
        super().__init__(**kwargs)
        self.inner = inner
        self.basis = np.asarray(basis, dtype=np.float32)
        if self.basis.ndim != 2 or self.basis.shape[1] != int(inner.dim):
            raise ValueError(f"basis: expected [rank, {inner.dim}], got {list(self.basis.shape)}")
        self.kind = f"{inner.kind}+subspace_removed"
        if getattr(inner, ANSWER_CONTEXT_WEIGHT, None) is not None:  # the export keeps the learned answer context
            setattr(self, ANSWER_CONTEXT_WEIGHT, getattr(inner, ANSWER_CONTEXT_WEIGHT))

    @property
    def dim(self) -> int:
        return int(self.inner.dim)

    def _preprocess(self, strings):
        return self.inner._preprocess(strings)

    def call(self, features, training=False):
        x = self.inner(features, training=training)
        basis = tf.constant(self.basis)
        return l2_normalize(x - tf.matmul(tf.matmul(x, basis, transpose_b=True), basis))

    def get_config(self):
        return {
            **super().get_config(),
            "inner": keras.saving.serialize_keras_object(self.inner),
            "basis": self.basis.tolist(),
        }

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["inner"] = keras.saving.deserialize_keras_object(config["inner"])
        return cls(**config)
