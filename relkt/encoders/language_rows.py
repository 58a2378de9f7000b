"""Which token-table rows belong to new languages: the rows a student may move without touching the others.

A base model that never saw Greek still cuts Greek text into pieces it has rows for, but those rows were never
trained (or are shared with nothing the model learned). Training only them (relkt.stages.row_subset_adam) maps
the new language into the base model's space while every language it already reads keeps its embeddings: the
recipe of Artetxe et al. (2020, "On the Cross-lingual Transferability of Monolingual Representations"), applied to
CL-ReLKT's question distillation. A row the other languages also read often stays frozen, so they cannot drift.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

import numpy as np
import tensorflow as tf

from relkt.errors import ConfigError


def row_counts(encoder, texts: Sequence[str], batch_size: int = 1024) -> Counter:
    """How many times the texts read each token-table row (padding excluded; special tokens counted)."""
    counts: Counter = Counter()
    for start in range(0, len(texts), batch_size):
        features = encoder.preprocess(tf.constant(list(texts[start : start + batch_size])))
        ids = features["token_ids"].numpy()[features["padding_mask"].numpy().astype(bool)]
        counts.update(ids.tolist())
    return counts


def language_rows(
    encoder, texts: Sequence[str], other_texts: Sequence[str], max_other_count: int = 20, min_own_ratio: float = 0.0
) -> np.ndarray:
    """Sorted ids of the rows `texts` read that `other_texts` read fewer than `max_other_count` times and, with
    `min_own_ratio` > 0, that `texts` read at least `min_own_ratio` times for each time `other_texts` do.

    `max_other_count` = 1: rows only the new languages read; larger: also rows the other languages read rarely
    (a Greek letter in an English article), which the new languages need and the others hardly notice. Rows that
    vocabulary extension added follow the same rule: a new piece the other languages read often stays where it
    started (at `<unk>`'s row with `init: unk`, where the teacher read it).

    Why the ratio: a name ("Newcastle") is rare everywhere, so it passes `max_other_count`, but parallel text spells
    it on both sides about as often; moving its row moves every English article that names it. A language's own
    pieces are read many times more by its texts than by the others'.
    """
    if max_other_count < 1:
        raise ConfigError(f"max_other_count must be >= 1 (1 = rows no other text reads), got {max_other_count}")
    if not np.isfinite(min_own_ratio) or min_own_ratio < 0:
        raise ConfigError(f"min_own_ratio must be a finite number >= 0 (0 = off), got {min_own_ratio}")
    if not texts:
        raise ConfigError("language rows: no text in the new languages to choose rows from")
    own, other = row_counts(encoder, texts), row_counts(encoder, other_texts)
    return np.array(
        sorted(
            row
            for row, n in own.items()
            if other.get(row, 0) < max_other_count and n >= min_own_ratio * other.get(row, 0)
        ),
        dtype=np.int64,
    )
