"""Wraps an encoder so Keras `fit` trains it on (anchor, positive, negative) batches."""

from __future__ import annotations

import keras

from relkt.encoders.sentence_encoder import SentenceEncoder


class TripletModel(keras.Model):
    """Input: {"anchor", "positive", "negative"} features (each the encoder's `preprocess` output).
    Output: (batch, 3, dim) embeddings for `relkt.losses.TripletLoss`. One encoder, shared weights."""

    def __init__(self, encoder: SentenceEncoder, **kwargs):
        super().__init__(**kwargs)
        self.encoder = encoder

    def call(self, inputs, training=False):
        return keras.ops.stack(
            [self.encoder(inputs[k], training=training) for k in ("anchor", "positive", "negative")], axis=1
        )
