"""Answer context, learned (LAReQA's option, in a form a sentence encoder can learn): a candidate is its sentence and
its paragraph encoded apart and mixed by a learned weight, `normalize(e(sentence) + w * e(paragraph))`.

Concatenating the paragraph to the sentence (`data.with_context`) makes every sentence of a paragraph read nearly the
same, so the gold sentence no longer stands out from its neighbours; mixing keeps the sentence's own vector and adds
the paragraph's by as much as training found useful. Questions are encoded alone.

An encoder that learned a weight carries it as `answer_context_weight` (relkt.names; a float, or the training run's
variable); scoring, online mining and the export read it through `context_weight`. A relkt export records it in
`relkt.json` and serves `response_encoder(inputs, context)` beside `__call__`, so `hub.load` users get the vectors
relkt scores.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from relkt.names import ANSWER_CONTEXT_WEIGHT as ATTRIBUTE

SUFFIX = "_context"  # a feature's paragraph twin in the in-batch model's inputs: "positive" -> "positive_context"


def context_weight(encoder: object) -> float | None:
    """The answer-context weight `encoder` learned (None: it encodes candidates as sentences alone)."""
    seen = 0
    while not hasattr(encoder, ATTRIBUTE) and seen < 8:  # through wrappers (a cache, a projection) to the model
        encoder = getattr(encoder, "encoder", None) or getattr(encoder, "inner", None)
        seen += 1
    weight = getattr(encoder, ATTRIBUTE, None)
    if weight is None:
        return None
    return float(weight.numpy() if hasattr(weight, "numpy") else weight)


def mix(sentences: np.ndarray, contexts: np.ndarray, weight: float) -> np.ndarray:
    """`normalize(sentences + weight * contexts)`, row by row (float32)."""
    x = np.asarray(sentences, np.float32) + np.float32(weight) * np.asarray(contexts, np.float32)
    norm = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norm, 1e-12)


def encode_candidates(
    encoder,
    sentences: Sequence[str],
    contexts: Sequence[str],
    weight: float,
    batch_size: int = 64,
    progress: str | None = None,
) -> np.ndarray:
    """Candidates as `mix(e(sentence), e(paragraph), weight)`; each distinct paragraph encoded once."""
    if len(sentences) != len(contexts):
        raise ValueError(f"{len(sentences)} sentences but {len(contexts)} contexts")
    s = encoder.encode(list(sentences), batch_size=batch_size, progress=progress)
    unique, index = np.unique(np.asarray(list(contexts), dtype=object), return_inverse=True)
    c = encoder.encode(unique.tolist(), batch_size=batch_size, progress=progress and f"{progress} (paragraphs)")
    return mix(s, np.asarray(c)[index], weight)
