"""The one evaluator protocol, and the evaluator table (name -> class).

An evaluator is called with an encoder and returns a flat dict of float metrics whose keys carry its prefix
(`lareqa/mAP`, `xx_en_article/de/P@1`, `corpus/P@1`), and names one of them `primary_metric` (the
sentence-transformers shape). Each evaluator class registers itself with `@register_evaluator`. `run_evaluators`
scores a list of them with one encoder, each distinct list of texts encoded once (the XX->EN units evaluator reuses
the LAReQA evaluator's question embeddings): what a trainer's dev evaluation and the scoring CLIs call.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from relkt.errors import ConfigError
from relkt.registry import Registry

EVALUATORS = Registry("evaluator")


class TextEncoder(Protocol):
    """Anything that maps texts to L2-normalised float32 rows."""

    def encode(self, texts: Sequence[str], batch_size: int = ..., progress: bool | str = ...) -> np.ndarray: ...


class Evaluator(Protocol):
    """Encoder in, flat prefixed metrics out (the one interface callers use; an evaluator with nested results keeps
    its last call's in `last_results`, and each question's scores in `per_question`)."""

    name: str
    primary_metric: str

    def __call__(self, encoder: TextEncoder) -> dict[str, float]: ...


def register_evaluator(cls: type) -> type:
    """Class decorator: the evaluator under its `name`; a second class of one name is an error.

    A class with a `for_pool(pool, batch_size)` classmethod can be asked for by its name alone: in a stage's dev
    evaluation (`eval.evaluators`), in scoring (`score(..., evaluators=[NAME])`, `relkt evaluate --evaluator NAME`),
    and its metrics (keys `NAME/...`) reach the metrics log, the results JSON and the printed tables. Adding such an
    evaluator is its module and this one registration."""
    EVALUATORS.add(cls.name, cls, cls)
    return cls


def named_evaluators() -> list[str]:
    """The evaluators that can be asked for by name (their class has `for_pool`)."""
    return sorted(name for name, cls in EVALUATORS.loaded().items() if callable(getattr(cls, "for_pool", None)))


def pool_evaluators(names: Sequence[str], pool, batch_size: int, where: str = "evaluators") -> list[Evaluator]:
    """The evaluators `names` asks for, each built on the scored `pool` by its class's `for_pool`; ConfigError
    naming `where` (the setting or flag) for a name no such class holds."""
    out = []
    for name in names:
        cls = EVALUATORS.loaded().get(name)
        if cls is None or not callable(getattr(cls, "for_pool", None)):
            valid = ", ".join(named_evaluators()) or "none registered"
            raise ConfigError(f"{where}: {name!r} is not an evaluator that can be asked for by name; valid: {valid}")
        out.append(cls.for_pool(pool, batch_size))
    return out


class EncodingCache:
    """An encoder that encodes each distinct list of texts once (keyed by the texts), for one round of evaluators;
    `seconds` is the time spent encoding, and a caller that needs the embeddings themselves (the bias analyses)
    asks the cache for them after the round, at no cost."""

    def __init__(self, encoder: TextEncoder):
        self.encoder, self._held, self.seconds = encoder, {}, 0.0

    def encode(self, texts: Sequence[str], batch_size: int = 64, progress: bool | str = False) -> np.ndarray:
        key = tuple(texts)
        if key not in self._held:
            t0 = time.perf_counter()
            self._held[key] = self.encoder.encode(list(texts), batch_size=batch_size, progress=progress)
            self.seconds += time.perf_counter() - t0
        return self._held[key]


def run_evaluators(evaluators: Sequence[Evaluator], encoder: TextEncoder) -> dict[str, float]:
    """Every evaluator's metrics in one dict; two evaluators giving one key is an error (one would hide the other)."""
    cached, out = EncodingCache(encoder), {}
    for evaluator in evaluators:
        metrics = evaluator(cached)
        clash = sorted(set(metrics) & set(out))
        if clash:
            raise ValueError(f"evaluator {evaluator.name!r} repeats metric(s) {clash[:3]} of an earlier one")
        out.update(metrics)
    return out
