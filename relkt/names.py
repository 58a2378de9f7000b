"""Names every layer reads and none may own: the paper's Eq. 2 weights and how a setting says "every one found".

Kept apart from the package face so that `relkt.config` and `relkt.losses` (and `relkt.data`) read one fact without
importing each other."""

from __future__ import annotations

from collections.abc import Iterable

# CL-ReLKT's Eq. 2 weights at the paper's values, by their `distill.weights` keys: the config's defaults and the loss
# both read them.
PAPER_WEIGHTS = {"beta": 0.001, "lam": 1.0, "omega": 0.01}
TERM_OF_WEIGHT = {"beta": "q", "lam": "d", "omega": "dq"}  # the Eq. 2 term each weight scales (relkt.losses.loss_terms)

# What a setting that names languages or sources writes for "every one found" (relkt.config.sections.Names): an empty
# list never means it. Read such a setting with `chosen`.
ALL = "all"


def chosen(value, found: Iterable[str]) -> list[str]:
    """The names a `Names` setting lists, or every one of `found` when it says `all`."""
    return list(found) if value == ALL else list(value)


def named(value) -> list[str] | None:
    """The names a `Names` setting lists, or None when it says `all`."""
    return None if value == ALL else list(value)


# The attribute by which an encoder carries the answer-context weight it learned (relkt.metrics.answer_context): set
# by the teacher's in-batch model in training and by the loader of an export that records one; read by scoring,
# online mining and the export.
ANSWER_CONTEXT_WEIGHT = "answer_context_weight"
