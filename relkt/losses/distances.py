"""Row-wise distances between embedding batches, as pure `keras.ops` functions."""

from __future__ import annotations

import keras

DISTANCES = ("cosine", "squared_l2")


def check_distance(distance: str) -> str:
    if distance not in DISTANCES:
        raise ValueError(f"unknown distance {distance!r}; valid: {', '.join(DISTANCES)}")
    return distance


def row_distance(x, y, distance: str = "cosine"):
    """d(x_i, y_i) per row: `1 - cos(x_i, y_i)` or `||x_i - y_i||^2` (summed over the embedding axis)."""
    check_distance(distance)
    x = keras.ops.cast(x, "float32")
    y = keras.ops.cast(y, "float32")
    if distance == "squared_l2":
        return keras.ops.sum(keras.ops.square(x - y), axis=-1)
    norms = keras.ops.norm(x, axis=-1) * keras.ops.norm(y, axis=-1)
    return 1.0 - keras.ops.sum(x * y, axis=-1) / keras.ops.maximum(norms, 1e-12)


def in_batch_infonce(anchors, keys, temperature: float = 0.05):
    """Per-anchor InfoNCE over the batch: -log softmax_j(cos(a_i, k_j) / temperature) at j = i.

    The other rows' keys are the negatives, except rows whose key equals the anchor's own (the same
    answer or English question, met again in another language): those are not negatives and are left out.
    """
    a = keras.ops.cast(anchors, "float32")
    k = keras.ops.cast(keys, "float32")
    a = a / keras.ops.maximum(keras.ops.norm(a, axis=-1, keepdims=True), 1e-12)
    k = k / keras.ops.maximum(keras.ops.norm(k, axis=-1, keepdims=True), 1e-12)
    logits = keras.ops.matmul(a, keras.ops.transpose(k)) / temperature
    positive = keras.ops.sum(a * k, axis=-1) / temperature
    diff = keras.ops.expand_dims(k, 1) - keras.ops.expand_dims(k, 0)
    same = keras.ops.sum(keras.ops.square(diff), axis=-1) < 1e-10  # includes j = i
    negatives = keras.ops.where(same, -1e9, logits)
    every = keras.ops.concatenate([keras.ops.expand_dims(positive, 1), negatives], axis=1)
    return keras.ops.logsumexp(every, axis=1) - positive
