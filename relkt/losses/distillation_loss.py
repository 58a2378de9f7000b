"""The CL-ReLKT student's cross-lingual distillation loss (Sec. 3.2, Eq. 2), summed over the named terms of
relkt.losses.loss_terms (q, d, dq: which student input, which teacher target, which weight).

A row whose T(d) is all zeros has no answer document (a pair of general parallel text, `data.corpus_dir`): every
term that reads the document (d, dq and their ranking terms) is 0 there, so it teaches the question side only.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

import keras

from relkt.losses.distances import check_distance, infonce, row_distance
from relkt.losses.loss_terms import DOCUMENT, TERMS, LossTerm, objective_terms, student_inputs, teacher_targets
from relkt.names import PAPER_WEIGHTS

NEGATIVES = ("batch", "bank")


def distillation_components(
    targets: Mapping[str, object],
    outputs: Mapping[str, object],
    weights: Mapping[str, float],
    terms: Sequence[LossTerm] = TERMS,
    gamma: float = 1000.0,
    distance: str = "squared_l2",
    contrast: float = 0.0,
    temperature: float = 0.05,
    banks: Mapping[str, object] | None = None,
):
    """`(loss, measurements)`: per example, gamma * sum over `terms` of weight * (d(T, S) + contrast * rank(S, T)),
    and every term unweighted, each of shape (batch,), for logging (`q`, `d`, `dq`, and with `contrast` > 0
    `q_rank` ...). Computed once: the loss is made of them.

    `targets` / `outputs`: the teacher's targets and the student's outputs by name ((batch, dim) each);
    `weights`: by term name (a term without one is measured, not trained); rank = InfoNCE of S against T among
    the batch's targets of that column, or the whole column of `banks`."""
    has_document = None
    if DOCUMENT in targets:
        has_document = keras.ops.cast(keras.ops.any(keras.ops.not_equal(targets[DOCUMENT], 0), axis=-1), "float32")
    loss, measurements = None, {}
    for term in terms:
        target, output = targets[term.teacher], outputs[term.student]
        value = row_distance(target, output, distance)
        if term.reads_document:
            value = value * has_document
        measurements[term.name] = value
        if contrast:
            keys = target if banks is None else banks[term.teacher]
            rank = infonce(output, target, keys, temperature)
            if term.reads_document:
                rank = rank * has_document
            measurements[f"{term.name}_rank"] = rank
            value = value + contrast * rank
        weighted = weights.get(term.name, 0.0) * value
        loss = weighted if loss is None else loss + weighted
    return gamma * loss, measurements


def distillation_loss(
    teacher_q,
    student_q,
    teacher_d,
    student_d,
    gamma: float = 1000.0,
    weights: Mapping[str, float] | None = None,
    distance: str = "squared_l2",
    contrast: float = 0.0,
    temperature: float = 0.05,
    question_bank=None,
    document_bank=None,
):
    """Per-example gamma * (beta ||T(q_en) - S(q_x)||^2 + lambda ||T(d) - S(d)||^2 + omega ||T(d) - S(q_x)||^2),
    `weights` by each term's weight key (`beta`, `lam`, `omega`; the paper's values where not given), as
    `distill.weights` names them.

    Squared L2 is summed over the embedding axis; the batch mean taken by the `Loss` reduction
    gives the paper's gamma / |M| * sum over the batch. `distance="cosine"` uses 1 - cos instead.
    `contrast` > 0 (not in the paper) adds to each term `contrast` times its in-batch ranking loss:
    regressing onto the targets alone lets a student that cannot yet read a language shrink its embeddings
    towards the targets' mean, which lowers the distance and loses the differences between questions; the
    ranking loss keeps them apart. With `question_bank` and `document_bank` (every teacher target of the
    training set) the ranking is against all of them.
    """
    banks = None if question_bank is None else {"q_en": question_bank, DOCUMENT: document_bank}
    return distillation_components(
        {"q_en": teacher_q, DOCUMENT: teacher_d},
        {"q": student_q, DOCUMENT: student_d},
        {t.name: {**PAPER_WEIGHTS, **(weights or {})}[t.weight] for t in TERMS},
        TERMS,
        gamma,
        distance,
        contrast,
        temperature,
        banks,
    )[0]


@keras.saving.register_keras_serializable(package="relkt")
class DistillationLoss(keras.losses.Loss):
    """CL-ReLKT Eq. 2: the student learns the frozen teacher's embeddings of a question in English, of its document,
    and of the document from the question in another language.

    L_i = gamma * (beta d(T(q_en), S(q_x)) + lambda d(T(d), S(d)) + omega d(T(d), S(q_x))), the batch mean; d is squared
    L2 (summed over the embedding axis) or 1 - cos. `components(y_true, y_pred)` returns the per-example loss and each
    term, for logging.

    Args:
        gamma: the loss's scale (the paper's 1000).
        distance: `squared_l2` (the paper's) or `cosine`.
        objective: which terms train, '+'-joined names of `terms` (`q`, `q+d`, `q+d+dq`: the paper's Table 6); a
            term switched off costs no forward pass (its columns are left out).
        contrast: > 0 adds contrast * InfoNCE(temperature) to each term: -log softmax_j(cos(S_i, T_j) / temperature)_i.
        temperature: of that ranking term.
        negatives: its j: `batch` (the batch's targets) or `bank` (every training target, handed over by the trainer
            with `set_banks`: data, not configuration, never serialized).
        weights: every term's weight by its key (`beta`, `lam`, `omega`; the paper's values when absent).
        terms: the loss-term table (relkt.losses.loss_terms.TERMS; may add terms).

    Inputs:
        | argument | shape                  | holds (columns in `teacher_targets` / `student_inputs` order) |
        |----------|------------------------|----------------------------------------------------------------|
        | `y_true` | (batch, targets, dim)  | the frozen teacher's targets (cached): [T(q_en), T(d)]          |
        | `y_pred` | (batch, inputs, dim)   | the student's outputs: [S(q_x), S(d)]                           |

    Example:
        >>> import numpy as np
        >>> loss = DistillationLoss(objective="q")
        >>> t = np.ones((2, 2, 4), "float32"); s = np.ones((2, 2, 4), "float32")
        >>> float(loss(t, s))   # the student already at the teacher's embeddings
        0.0

    References:
        Limkonchotiwat et al., "CL-ReLKT", Findings of NAACL 2022, Sec. 3.2, Eq. 2; Reimers and Gurevych, "Making
        Monolingual Sentence Embeddings Multilingual using Knowledge Distillation", EMNLP 2020.
    """

    def __init__(
        self,
        gamma: float = 1000.0,
        distance: str = "squared_l2",
        objective: str = "q+d+dq",
        contrast: float = 0.0,
        temperature: float = 0.05,
        negatives: str = "batch",
        weights: Mapping[str, float] | None = None,
        terms: Sequence[LossTerm | dict] | None = None,
        name: str = "distillation_loss",
        **kwargs,
    ):
        super().__init__(name=name, **kwargs)
        if contrast < 0 or temperature <= 0:
            raise ValueError(
                f"contrast must be >= 0 and temperature > 0, got contrast={contrast}, temperature={temperature}"
            )
        if negatives not in NEGATIVES:
            raise ValueError(f"unknown negatives {negatives!r}; valid: {', '.join(NEGATIVES)}")
        self.contrast, self.temperature, self.negatives = float(contrast), float(temperature), negatives
        self.gamma = float(gamma)
        self.distance, self.objective = check_distance(distance), objective
        self.weights = {**PAPER_WEIGHTS, **{k: float(v) for k, v in (weights or {}).items()}}
        self.terms = tuple(LossTerm(**t) if isinstance(t, dict) else t for t in (TERMS if terms is None else terms))
        self.on = objective_terms(objective, self.terms)
        read = {t.weight: t.name for t in self.terms}
        unread = sorted(set(self.weights) - set(read) - set(PAPER_WEIGHTS))
        if unread:  # a typo (`bata`) or a term that is not in the table would be ignored
            raise ValueError(
                f"distill.weights.{unread[0]}: no loss term reads this weight; the terms' weights are "
                + ", ".join(f"{w} ({n})" for w, n in read.items())
            )
        active = [t for t in self.terms if t.name in self.on]
        self.student_inputs, self.teacher_targets = student_inputs(active), teacher_targets(active)
        self.measured = tuple(
            t for t in self.terms if t.student in self.student_inputs and t.teacher in self.teacher_targets
        )
        self.term_weights = {t.name: self._weight(t) if t.name in self.on else 0.0 for t in self.measured}
        self.banks = None

    def _weight(self, term: LossTerm) -> float:
        if term.weight not in self.weights:
            raise ValueError(
                f"loss term {term.name} is on (distill.objective {self.objective!r}) but distill.weights has no "
                f"{term.weight!r} (its weight); set distill.weights.{term.weight}"
            )
        return self.weights[term.weight]

    def measurement_names(self) -> list[str]:
        """What `components` measures, in order: every term whose columns are there, then its ranking term with
        `contrast`."""
        names = [t.name for t in self.measured]
        return names + ([f"{n}_rank" for n in names] if self.contrast else [])

    def set_banks(self, banks: Mapping[str, object]) -> None:
        """Every teacher target of the training set by target name ((K, dim) each): the ranking terms' candidates."""
        missing = sorted(set(self.teacher_targets) - set(banks))
        if missing:
            raise ValueError(f"set_banks: no bank for {', '.join(missing)}")
        self.banks = {k: keras.ops.convert_to_tensor(v, "float32") for k, v in banks.items()}

    def components(self, y_true, y_pred):
        """`(per-example loss, {term: per-example value})`: see `distillation_components`."""
        if self.contrast and self.negatives == "bank" and self.banks is None:
            raise ValueError("DistillationLoss(negatives='bank') needs set_banks({target: every target}) first")
        return distillation_components(
            {name: y_true[:, i] for i, name in enumerate(self.teacher_targets)},
            {name: y_pred[:, i] for i, name in enumerate(self.student_inputs)},
            self.term_weights,
            self.measured,
            self.gamma,
            self.distance,
            self.contrast,
            self.temperature,
            self.banks if self.negatives == "bank" else None,
        )

    def call(self, y_true, y_pred):
        return self.components(y_true, y_pred)[0]

    def get_config(self):
        return {
            **super().get_config(),
            "gamma": self.gamma,
            "distance": self.distance,
            "objective": self.objective,
            "contrast": self.contrast,
            "temperature": self.temperature,
            "negatives": self.negatives,
            "weights": dict(self.weights),
            "terms": [dataclasses.asdict(t) for t in self.terms],
        }
