"""Stage 2's teacher targets: T(text) for every distinct text the teacher sees, computed once and cached."""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import numpy as np

from relkt.encoders.sentence_encoder import weights_digest
from relkt.errors import DataError, NonFiniteError
from relkt.io import atomic_write_npz, read_npz

log = logging.getLogger("relkt.training")


def teacher_targets(teacher, texts: list[str], cache: Path, batch_size: int) -> np.ndarray:
    """T(text) for unique texts, computed once and cached (npz keyed by a hash of the texts and teacher)."""
    key = hashlib.sha256(("\x00".join(texts) + weights_digest(teacher)).encode()).hexdigest()
    if cache.exists():
        try:
            z = read_npz(cache, "teacher targets cache")
            if str(z["key"]) == key and np.isfinite(z["targets"]).all():
                log.info("teacher targets: reusing %s", cache)
                return z["targets"]
        except (DataError, KeyError) as e:  # truncated or damaged: recompute
            log.warning("teacher targets: %s cannot be read (%s); computing them again", cache, e)
    targets = teacher.encode(texts, batch_size=batch_size, progress="teacher targets")
    if not np.isfinite(targets).all():
        raise NonFiniteError(
            f"the teacher's embeddings hold NaN or inf ({int((~np.isfinite(targets).all(1)).sum())} "
            "texts): its weights are not finite; train the student from a finite teacher"
        )
    atomic_write_npz(cache, key=key, targets=targets)
    return targets
