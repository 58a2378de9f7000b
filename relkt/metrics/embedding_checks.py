"""What every scored set of embeddings must be before it is ranked: finite, with no zero rows, and not collapsed onto
one vector. A model that fails these gives scores that all tie, and ranking by candidate index then looks like a
result (a low mAP, not an error)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relkt.errors import DegenerateError, NonFiniteError

# A row whose norm is below this is zero: relkt's encoders return unit rows, and L2-normalising leaves only an
# all-zero (or underflowed) row below it.
ZERO_NORM = 1e-6
# Rows whose root-mean-square distance to their mean direction is below this are one vector: the score differences
# they can make (at most this size) are lost among float32 rounding of a 512-term dot product, and no trained or
# randomly initialised encoder comes near it (a random tiny BERT's rows are ~0.1 apart).
COLLAPSED_SPREAD = 1e-4


BLOCK_ROWS = 65536  # rows checked at once: the temporaries stay a block's size, whatever the pool's


def _by_block(emb: np.ndarray, fn) -> np.ndarray:
    """`fn` of each block of rows, concatenated: one value a row, without a temporary the size of `emb`."""
    return np.concatenate([fn(emb[lo : lo + BLOCK_ROWS]) for lo in range(0, len(emb), BLOCK_ROWS)] or [np.zeros(0)])


def check_finite(emb: np.ndarray, what: str) -> None:
    """NonFiniteError when a row holds NaN or inf (its scores would rank by index)."""
    bad = _by_block(emb, lambda x: ~np.isfinite(x).all(axis=1))
    if bad.any():
        raise NonFiniteError(
            f"{int(bad.sum())} of {len(emb)} {what} embeddings hold NaN or inf (first: row "
            f"{int(np.argmax(bad))}); the encoder's weights are probably not finite"
        )


def spread(emb: np.ndarray, block: int = BLOCK_ROWS) -> float:
    """Root-mean-square distance of the unit rows to their mean, in float64 (the one-vector measure)."""
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    n = len(emb)
    mean = sum(unit(emb[lo : lo + block].astype(np.float64)).sum(axis=0) for lo in range(0, n, block)) / n
    total = sum(float(((unit(emb[lo : lo + block].astype(np.float64)) - mean) ** 2).sum()) for lo in range(0, n, block))
    return float(np.sqrt(total / n))


def check_embeddings(emb: np.ndarray, what: str, texts: Sequence[str] | None = None) -> None:
    """Refuse embeddings that cannot rank: NonFiniteError for NaN/inf rows, DegenerateError for zero-norm rows or
    (with two rows or more) every row the same vector. `what` names them in the message ("candidate", "dev
    question"); `texts`, the texts the rows encode when known: rows of one text asked for again and again are one
    vector by right, not a collapse."""
    emb = np.asarray(emb, dtype=np.float32)
    if emb.ndim != 2 or not len(emb):
        return
    check_finite(emb, what)
    zero = _by_block(emb, lambda x: np.linalg.norm(x, axis=1) < ZERO_NORM)
    if zero.any():
        raise DegenerateError(
            f"{int(zero.sum())} of {len(emb)} {what} embeddings are zero vectors (first: row "
            f"{int(np.argmax(zero))}); the model has collapsed, and its scores would all tie"
        )
    if len(emb) > 1 and (texts is None or len(set(texts)) > 1):
        s = spread(emb)
        if s < COLLAPSED_SPREAD:
            raise DegenerateError(
                f"all {len(emb)} {what} embeddings are the same vector (rms distance {s:.1e} to "
                "their mean); the model has collapsed, and its scores would all tie"
            )
