"""The CL-ReLKT teacher's triplet loss (Sec. 3.1)."""

from __future__ import annotations

import keras

from relkt.losses.distances import check_distance, row_distance


def triplet_loss(anchor, positive, negative, margin: float = 0.24, distance: str = "cosine"):
    """Per-example `max(d(a, p) - d(a, n) + margin, 0)`.

    With `distance="cosine"`, d(x, y) = 1 - cos(x, y), which is the paper's
    L = sum_i max((1 - cos(a_i, p_i)) - (1 - cos(a_i, n_i)) + alpha, 0); `squared_l2` uses ||x - y||^2.
    Returns shape (batch,): the caller (a `keras.losses.Loss` reduction) takes the batch mean, so
    replicas under a distribution strategy are scaled by the global batch size.
    """
    return keras.ops.relu(row_distance(anchor, positive, distance) - row_distance(anchor, negative, distance) + margin)


@keras.saving.register_keras_serializable(package="relkt")
class TripletLoss(keras.losses.Loss):
    """Triplet loss on `y_pred` of shape (batch, 3, dim) stacking (anchor, positive, negative).

    L_i = max(d(a_i, p_i) - d(a_i, n_i) + margin, 0), d = 1 - cos or squared L2; `y_true` is ignored.
    Reduction defaults to the batch mean ("sum_over_batch_size").
    """

    def __init__(self, margin: float = 0.24, distance: str = "cosine", name: str = "triplet_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.margin, self.distance = float(margin), check_distance(distance)

    def call(self, y_true, y_pred):
        return triplet_loss(y_pred[:, 0], y_pred[:, 1], y_pred[:, 2], self.margin, self.distance)

    def get_config(self):
        return {**super().get_config(), "margin": self.margin, "distance": self.distance}
