"""Row-wise distances between embedding batches, as pure `keras.ops` functions."""

from __future__ import annotations

import keras

DISTANCES = ("cosine", "squared_l2", "mean_squared")


def check_distance(distance: str) -> str:
    """`distance` if it is one of DISTANCES, else a ValueError naming the valid ones."""
    if distance not in DISTANCES:
        raise ValueError(f"unknown distance {distance!r}; valid: {', '.join(DISTANCES)}")
    return distance


def row_distance(x, y, distance: str = "cosine"):
    """d(x_i, y_i) per row: `1 - cos(x_i, y_i)`, `||x_i - y_i||^2` (summed over the embedding axis), or that
    averaged over the axis (`mean_squared`: Keras's MSE, what the CL-ReLKT reference code's student loss uses)."""
    check_distance(distance)
    x = keras.ops.cast(x, "float32")
    y = keras.ops.cast(y, "float32")
    if distance == "squared_l2":
        return keras.ops.sum(keras.ops.square(x - y), axis=-1)
    if distance == "mean_squared":
        return keras.ops.mean(keras.ops.square(x - y), axis=-1)
    norms = keras.ops.norm(x, axis=-1) * keras.ops.norm(y, axis=-1)
    return 1.0 - keras.ops.sum(x * y, axis=-1) / keras.ops.maximum(norms, 1e-12)


def infonce(anchors, positives, keys, temperature: float = 0.05):
    """Per-anchor InfoNCE: -log of the softmax weight, over cos(a_i, .) / temperature, of a_i's own
    positive p_i against the `keys` (batch, K). Keys equal to p_i (cos > 1 - 1e-6: the positive itself, or
    the same answer or English question met again in another language) are not negatives and are left out."""

    def unit(x):
        x = keras.ops.cast(x, "float32")
        return x / keras.ops.maximum(keras.ops.norm(x, axis=-1, keepdims=True), 1e-12)

    a, p, k = unit(anchors), unit(positives), unit(keys)
    logits = keras.ops.matmul(a, keras.ops.transpose(k)) / temperature
    positive = keras.ops.sum(a * p, axis=-1) / temperature
    same = keras.ops.matmul(p, keras.ops.transpose(k)) > 1.0 - 1e-6
    negatives = keras.ops.where(same, -1e9, logits)
    every = keras.ops.concatenate([keras.ops.expand_dims(positive, 1), negatives], axis=1)
    return keras.ops.logsumexp(every, axis=1) - positive


def in_batch_infonce(anchors, keys, temperature: float = 0.05):
    """`infonce` with the batch's own keys as the candidates: row i's positive is keys[i]."""
    return infonce(anchors, keys, keys, temperature)
