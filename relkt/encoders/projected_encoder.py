"""A student of another architecture than its teacher: its encoder plus a projection to the teacher's size."""

from __future__ import annotations

import keras

from relkt.encoders.sentence_encoder import SentenceEncoder, l2_normalize


@keras.saving.register_keras_serializable(package="relkt")
class ProjectedEncoder(SentenceEncoder):
    """`inner` (any relkt encoder) followed by a linear map to `dim` and L2 normalisation (CL-ReLKT App. A.4)."""

    def __init__(self, inner: SentenceEncoder, dim: int, **kwargs):
        super().__init__(**kwargs)
        self.inner, self._dim = inner, int(dim)
        self.kind = f"{inner.kind}+projection"
        self.projection = keras.layers.Dense(self._dim, name="projection")

    @property
    def dim(self) -> int:
        return self._dim

    def _preprocess(self, strings):
        return self.inner._preprocess(strings)

    def call(self, features, training=False):
        return l2_normalize(self.projection(self.inner(features, training=training)))

    def get_config(self):
        return {**super().get_config(), "inner": keras.saving.serialize_keras_object(self.inner), "dim": self._dim}

    @classmethod
    def from_config(cls, config):
        config = dict(config)
        config["inner"] = keras.saving.deserialize_keras_object(config["inner"])
        return cls(**config)
