"""The stage-2 loss terms, named once: which student input each one compares with which teacher target, under
which config weight. The loss (`DistillationLoss`), the student's `PairModel`, the cached teacher targets and the
student trainer all read this table; adding a term is one entry here (or in the `terms` a caller passes) and one
weight in the config.

| term | student input | teacher target | weight (`distill.`) | per example |
|------|---------------|----------------|---------------------|-------------|
| q    | q: S(q_x)     | q_en: T(q_en)  | beta                | d(T(q_en), S(q_x)) |
| d    | d: S(d)       | d: T(d)        | lam                 | d(T(d), S(d)) |
| dq   | q: S(q_x)     | d: T(d)        | omega               | d(T(d), S(q_x)) |

The inputs and targets are named after the text they embed; `STUDENT_INPUTS` and `TEACHER_TARGETS` say which
field of an example (relkt.data.parallel.ParallelExamples) holds it. A row without a document (a pair of general
parallel text: its T(d) is all zeros) has every term that reads the document set to 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

# input name -> the example field holding the text the student embeds
STUDENT_INPUTS = {
    "q": "q_target",  # S(q_x): the question in the student's language
    "d": "d_student",  # S(d): the answer document the student reads
    "q_en": "q_source",  # S(q_en): the question in the teacher's language
}
# target name -> the example field holding the text the frozen teacher embedded ("" = absent: a zero target)
TEACHER_TARGETS = {
    "q_en": "q_source",  # T(q_en): the question in the teacher's language
    "d": "d_teacher",  # T(d): the answer document the teacher read
}
DOCUMENT = "d"  # the input and target that a corpus pair lacks


@dataclasses.dataclass(frozen=True)
class LossTerm:
    """One term of Eq. 2: gamma * weight * distance(teacher target, student input), per example."""

    name: str  # its name in `distill.objective` and in the logs
    student: str  # a STUDENT_INPUTS key
    teacher: str  # a TEACHER_TARGETS key
    weight: str  # its weight's config key: a field of `distill` (beta, lam, omega) or a key of `distill.weights`

    def __post_init__(self):
        if self.student not in STUDENT_INPUTS:
            raise ValueError(
                f"loss term {self.name}: student input {self.student!r}; valid: {', '.join(STUDENT_INPUTS)}"
            )
        if self.teacher not in TEACHER_TARGETS:
            raise ValueError(
                f"loss term {self.name}: teacher target {self.teacher!r}; valid: {', '.join(TEACHER_TARGETS)}"
            )

    @property
    def reads_document(self) -> bool:
        return DOCUMENT in (self.student, self.teacher)


TERMS = (
    LossTerm("q", student="q", teacher="q_en", weight="beta"),
    LossTerm("d", student="d", teacher="d", weight="lam"),
    LossTerm("dq", student="q", teacher="d", weight="omega"),
)


def student_inputs(terms: Sequence[LossTerm]) -> list[str]:
    """The student inputs `terms` read, in table order: the columns of the student's output."""
    return list(dict.fromkeys(t.student for t in terms))


def teacher_targets(terms: Sequence[LossTerm]) -> list[str]:
    """The teacher targets `terms` read, in table order, plus T(d) when a term reads the document only through its
    student input (the target tells which rows have a document): the columns of the cached targets."""
    names = list(dict.fromkeys(t.teacher for t in terms))
    if any(t.reads_document for t in terms) and DOCUMENT not in names:
        names.append(DOCUMENT)
    return names


def objective_terms(objective: str, terms: Sequence[LossTerm] = TERMS) -> list[str]:
    """The names `objective` ("q+d+dq") turns on, checked against `terms`."""
    names = [n.strip() for n in objective.split("+")]
    known = [t.name for t in terms]
    unknown = [n for n in names if n not in known]
    if unknown or len(set(names)) != len(names) or not names:
        raise ValueError(
            f"distill.objective {objective!r}: '+'-joined names of distinct loss terms; unknown: "
            f"{', '.join(unknown) or 'none'}; valid: {', '.join(known)}"
        )
    return names
