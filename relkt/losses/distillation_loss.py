"""The CL-ReLKT student's cross-lingual distillation loss (Sec. 3.2, Eq. 2)."""

from __future__ import annotations

import keras

from relkt.losses.distances import check_distance, row_distance

OBJECTIVES = {"q": (1, 0, 0), "q+d": (1, 1, 0), "q+d+dq": (1, 1, 1)}  # which of (beta, lambda, omega) are on


def distillation_terms(teacher_q, student_q, teacher_d, student_d, distance: str = "squared_l2"):
    """The three per-example terms before weighting:
    q = d(T(q_en), S(q_x)),  d = d(T(d), S(d)),  dq = d(T(d), S(q_x)), each of shape (batch,)."""
    return (
        row_distance(teacher_q, student_q, distance),
        row_distance(teacher_d, student_d, distance),
        row_distance(teacher_d, student_q, distance),
    )


def distillation_loss(
    teacher_q, student_q, teacher_d, student_d,
    gamma: float = 1000.0, beta: float = 0.001, lam: float = 1.0, omega: float = 0.01,
    distance: str = "squared_l2",
):
    """Per-example gamma * (beta ||T(q_en) - S(q_x)||^2 + lambda ||T(d) - S(d)||^2 + omega ||T(d) - S(q_x)||^2).

    Squared L2 is summed over the embedding axis; the batch mean taken by the `Loss` reduction
    gives the paper's gamma / |M| * sum over the batch. `distance="cosine"` uses 1 - cos instead.
    """
    q, d, dq = distillation_terms(teacher_q, student_q, teacher_d, student_d, distance)
    return gamma * (beta * q + lam * d + omega * dq)


@keras.saving.register_keras_serializable(package="relkt")
class DistillationLoss(keras.losses.Loss):
    """CL-ReLKT Eq. 2 on stacked embeddings.

    `y_true`: (batch, 2, dim) teacher targets [T(q_en), T(d)] (precomputed: the teacher is frozen);
    `y_pred`: (batch, 2, dim) student outputs [S(q_x), S(d)].
    L_i = gamma * (beta d(T(q_en), S(q_x)) + lambda d(T(d), S(d)) + omega d(T(d), S(q_x))), with
    d = squared L2 (sum over the embedding axis) or 1 - cos; the batch mean is the reduction.
    `objective` ("q", "q+d", "q+d+dq": the paper's Table 6 variants) switches terms off.
    """

    def __init__(self, gamma: float = 1000.0, beta: float = 0.001, lam: float = 1.0, omega: float = 0.01,
                 distance: str = "squared_l2", objective: str = "q+d+dq", name: str = "distillation_loss", **kwargs):
        super().__init__(name=name, **kwargs)
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {objective!r}; valid: {', '.join(OBJECTIVES)}")
        self.gamma, self.beta, self.lam, self.omega = float(gamma), float(beta), float(lam), float(omega)
        self.distance, self.objective = check_distance(distance), objective

    def weights_in_use(self) -> tuple[float, float, float]:
        on = OBJECTIVES[self.objective]
        return self.beta * on[0], self.lam * on[1], self.omega * on[2]

    def call(self, y_true, y_pred):
        beta, lam, omega = self.weights_in_use()
        return distillation_loss(y_true[:, 0], y_pred[:, 0], y_true[:, 1], y_pred[:, 1],
                                 self.gamma, beta, lam, omega, self.distance)

    def get_config(self):
        return {**super().get_config(), "gamma": self.gamma, "beta": self.beta, "lam": self.lam,
                "omega": self.omega, "distance": self.distance, "objective": self.objective}


def term_metrics(distance: str = "squared_l2") -> list:
    """Keras metric functions logging each unweighted term separately (`q`, `d`, `dq`)."""

    def q(y_true, y_pred):
        return row_distance(y_true[:, 0], y_pred[:, 0], distance)

    def d(y_true, y_pred):
        return row_distance(y_true[:, 1], y_pred[:, 1], distance)

    def dq(y_true, y_pred):
        return row_distance(y_true[:, 1], y_pred[:, 0], distance)

    return [q, d, dq]
