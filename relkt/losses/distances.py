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
