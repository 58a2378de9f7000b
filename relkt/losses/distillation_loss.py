"""The CL-ReLKT student's cross-lingual distillation loss (Sec. 3.2, Eq. 2), and the stage-2 contract.

The contract, named here once: the student model outputs, and the cached teacher targets hold, two columns
of a (batch, 2, dim) tensor:

| column | `y_pred` (the student, trained) | `y_true` (the teacher, frozen, cached) |
|---|---|---|
| 0 (`QUESTION`) | S(q_x): the question in the student's language | T(q_en): the same question in the teacher's language |
| 1 (`DOCUMENT`) | S(d): the answer document the student reads | T(d): the answer document the teacher read |

`stack_columns` builds either tensor from its two columns (the student's `PairModel`, the trainer's targets).
A row whose T(d) is all zeros has no answer document (a pair of general parallel text, `data.corpus_dir`): its
document terms (d, dq and their ranking terms) are 0, so it teaches the question side only.
"""

from __future__ import annotations

import keras

from relkt.losses.distances import check_distance, infonce, row_distance

NEGATIVES = ("batch", "bank")

OBJECTIVES = {"q": (1, 0, 0), "q+d": (1, 1, 0), "q+d+dq": (1, 1, 1)}  # which of (beta, lambda, omega) are on

QUESTION, DOCUMENT = 0, 1  # the columns of y_true = [T(q_en), T(d)] and y_pred = [S(q_x), S(d)]


def stack_columns(question, document, ops=keras.ops):
    """(batch, 2, dim) from the question column (S(q_x) or T(q_en)) and the document column (S(d) or T(d)).
    `ops=numpy` stacks numpy arrays (the cached teacher targets)."""
    return ops.stack([question, document], axis=1)


def distillation_terms(teacher_q, student_q, teacher_d, student_d, distance: str = "squared_l2"):
    """The three per-example terms before weighting:
    q = d(T(q_en), S(q_x)),  d = d(T(d), S(d)),  dq = d(T(d), S(q_x)), each of shape (batch,)."""
    return (
        row_distance(teacher_q, student_q, distance),
        row_distance(teacher_d, student_d, distance),
        row_distance(teacher_d, student_q, distance),
    )


def contrastive_terms(
    teacher_q, student_q, teacher_d, student_d, temperature: float = 0.05, question_bank=None, document_bank=None
):
    """The three terms as ranking losses (`infonce`), each of shape (batch,): S(q_x) must pick T(q_en)
    among the question targets, S(d) its T(d) and S(q_x) its T(d) among the document targets. The
    candidates are the batch's own targets, or every target of the training set (`*_bank`, (K, dim))."""
    q_keys = teacher_q if question_bank is None else question_bank
    d_keys = teacher_d if document_bank is None else document_bank
    return (
        infonce(student_q, teacher_q, q_keys, temperature),
        infonce(student_d, teacher_d, d_keys, temperature),
        infonce(student_q, teacher_d, d_keys, temperature),
    )


def distillation_components(
    teacher_q,
    student_q,
    teacher_d,
    student_d,
    gamma: float = 1000.0,
    beta: float = 0.001,
    lam: float = 1.0,
    omega: float = 0.01,
    distance: str = "squared_l2",
    contrast: float = 0.0,
    temperature: float = 0.05,
    question_bank=None,
    document_bank=None,
):
    """`(loss, measurements)`: the per-example loss of `distillation_loss` and its unweighted terms, each of shape
    (batch,), for logging: `q`, `d`, `dq` (the distances), and with `contrast` > 0 `q_rank`, `d_rank`, `dq_rank`
    (the ranking terms). Computed once: the loss is made of them. A row with T(d) = 0 (no document) has its
    document terms set to 0."""
    has_document = keras.ops.cast(keras.ops.any(keras.ops.not_equal(teacher_d, 0), axis=-1), "float32")
    q, d, dq = distillation_terms(teacher_q, student_q, teacher_d, student_d, distance)
    d, dq = d * has_document, dq * has_document
    measurements = {"q": q, "d": d, "dq": dq}
    if contrast:
        cq, cd, cdq = contrastive_terms(
            teacher_q, student_q, teacher_d, student_d, temperature, question_bank, document_bank
        )
        cd, cdq = cd * has_document, cdq * has_document
        measurements.update(q_rank=cq, d_rank=cd, dq_rank=cdq)
        q, d, dq = q + contrast * cq, d + contrast * cd, dq + contrast * cdq
    return gamma * (beta * q + lam * d + omega * dq), measurements


def distillation_loss(
    teacher_q,
    student_q,
    teacher_d,
    student_d,
    gamma: float = 1000.0,
    beta: float = 0.001,
    lam: float = 1.0,
    omega: float = 0.01,
    distance: str = "squared_l2",
    contrast: float = 0.0,
    temperature: float = 0.05,
    question_bank=None,
    document_bank=None,
):
    """Per-example gamma * (beta ||T(q_en) - S(q_x)||^2 + lambda ||T(d) - S(d)||^2 + omega ||T(d) - S(q_x)||^2).

    Squared L2 is summed over the embedding axis; the batch mean taken by the `Loss` reduction
    gives the paper's gamma / |M| * sum over the batch. `distance="cosine"` uses 1 - cos instead.
    `contrast` > 0 (not in the paper) adds to each term `contrast` times its in-batch ranking loss
    (`contrastive_terms`): regressing onto the targets alone lets a student that cannot yet read a
    language shrink its embeddings towards the targets' mean, which lowers the distance and loses
    the differences between questions; the ranking loss keeps them apart. With `question_bank` and
    `document_bank` (every teacher target of the training set) the ranking is against all of them.
    """
    return distillation_components(
        teacher_q,
        student_q,
        teacher_d,
        student_d,
        gamma,
        beta,
        lam,
        omega,
        distance,
        contrast,
        temperature,
        question_bank,
        document_bank,
    )[0]


@keras.saving.register_keras_serializable(package="relkt")
class DistillationLoss(keras.losses.Loss):
    """CL-ReLKT Eq. 2 on stacked embeddings.

    | input | shape | holds |
    |---|---|---|
    | `y_true` | (batch, 2, dim) | teacher targets [T(q_en), T(d)] (precomputed: the teacher is frozen) |
    | `y_pred` | (batch, 2, dim) | student outputs [S(q_x), S(d)] |

    `components(y_true, y_pred)` returns the per-example loss and its terms for logging (`call` returns the loss).
    L_i = gamma * (beta d(T(q_en), S(q_x)) + lambda d(T(d), S(d)) + omega d(T(d), S(q_x))), with
    d = squared L2 (sum over the embedding axis) or 1 - cos; the batch mean is the reduction.
    `objective` ("q", "q+d", "q+d+dq": the paper's Table 6 variants) switches terms off.
    `contrast` (default 0: the paper's loss) adds contrast * InfoNCE(temperature) over the batch to
    each term: d(T, S) + contrast * (-log softmax_j(cos(S_i, T_j) / temperature)_i), j over the batch's
    targets (`negatives="batch"`) or over every target of the training set (`"bank"`: the trainer hands them
    over with `set_banks`; they are data, not configuration, and are not serialized).
    """

    def __init__(
        self,
        gamma: float = 1000.0,
        beta: float = 0.001,
        lam: float = 1.0,
        omega: float = 0.01,
        distance: str = "squared_l2",
        objective: str = "q+d+dq",
        contrast: float = 0.0,
        temperature: float = 0.05,
        negatives: str = "batch",
        name: str = "distillation_loss",
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        if objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {objective!r}; valid: {', '.join(OBJECTIVES)}")
        if contrast < 0 or temperature <= 0:
            raise ValueError(
                f"contrast must be >= 0 and temperature > 0, got contrast={contrast}, temperature={temperature}"
            )
        if negatives not in NEGATIVES:
            raise ValueError(f"unknown negatives {negatives!r}; valid: {', '.join(NEGATIVES)}")
        self.contrast, self.temperature, self.negatives = float(contrast), float(temperature), negatives
        self.gamma, self.beta, self.lam, self.omega = float(gamma), float(beta), float(lam), float(omega)
        self.distance, self.objective = check_distance(distance), objective
        self.question_bank = self.document_bank = None

    def set_banks(self, question_targets, document_targets) -> None:
        """Every teacher target of the training set, (K, dim) each: the ranking terms' candidates."""
        self.question_bank = keras.ops.convert_to_tensor(question_targets, "float32")
        self.document_bank = keras.ops.convert_to_tensor(document_targets, "float32")

    def weights_in_use(self) -> tuple[float, float, float]:
        on = OBJECTIVES[self.objective]
        return self.beta * on[0], self.lam * on[1], self.omega * on[2]

    def components(self, y_true, y_pred):
        """`(per-example loss, {term: per-example value})`: see `distillation_components`."""
        beta, lam, omega = self.weights_in_use()
        banks = (None, None)
        if self.contrast and self.negatives == "bank":
            if self.question_bank is None:
                raise ValueError(
                    "DistillationLoss(negatives='bank') needs set_banks(question_targets, document_targets) first"
                )
            banks = (self.question_bank, self.document_bank)
        return distillation_components(
            y_true[:, QUESTION],
            y_pred[:, QUESTION],
            y_true[:, DOCUMENT],
            y_pred[:, DOCUMENT],
            self.gamma,
            beta,
            lam,
            omega,
            self.distance,
            self.contrast,
            self.temperature,
            *banks,
        )

    def call(self, y_true, y_pred):
        return self.components(y_true, y_pred)[0]

    def get_config(self):
        return {
            **super().get_config(),
            "gamma": self.gamma,
            "beta": self.beta,
            "lam": self.lam,
            "omega": self.omega,
            "distance": self.distance,
            "objective": self.objective,
            "contrast": self.contrast,
            "temperature": self.temperature,
            "negatives": self.negatives,
        }
