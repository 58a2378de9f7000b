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
    """The teacher's triplet loss: L_i = max(d(a_i, p_i) - d(a_i, n_i) + margin, 0), the batch mean.

    A question (the anchor) is pulled towards its answer and pushed from a mined negative until the negative is at
    least `margin` further away.

    Args:
        margin: the paper's alpha (0.24 on XQuAD, 0.13 MLQA, 0.27 XORQA).
        distance: `cosine` (d = 1 - cos, the paper's) or `squared_l2`.

    Inputs:
        | argument | shape             | holds                                                          |
        |----------|-------------------|----------------------------------------------------------------|
        | `y_true` | any array         | ignored                                                        |
        | `y_pred` | (batch, 3, dim)   | the encoder's (anchor, positive, negative) embeddings, stacked |

    Example:
        >>> import numpy as np
        >>> loss = TripletLoss(margin=0.2)
        >>> a = np.array([[[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]]], "float32")   # positive = anchor, negative orthogonal
        >>> float(loss(np.zeros(1), a))
        0.0

    References:
        Limkonchotiwat et al., "CL-ReLKT: Cross-lingual Language Knowledge Transfer for Multilingual Retrieval
        Question Answering", Findings of NAACL 2022, Sec. 3.1; Schroff et al., "FaceNet", CVPR 2015.
    """

    def __init__(self, margin: float = 0.24, distance: str = "cosine", name: str = "triplet_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        self.margin, self.distance = float(margin), check_distance(distance)

    def call(self, y_true, y_pred):
        return triplet_loss(y_pred[:, 0], y_pred[:, 1], y_pred[:, 2], self.margin, self.distance)

    def get_config(self):
        return {**super().get_config(), "margin": self.margin, "distance": self.distance}
