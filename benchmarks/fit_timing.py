"""Keras `fit` passes timed side by side, for the student-step benchmarks."""

from __future__ import annotations

import time


def best_step_seconds(model, variants: dict, steps: int, repeats: int) -> dict[str, float]:
    """Each variant's best seconds a step over `repeats` passes (name -> a tf.data of `steps` batches for `model`, or
    (its own model, tf.data)): each traced on two batches first, then the variants alternating, so that they share
    whatever else loads the machine."""
    runs = {name: v if isinstance(v, tuple) else (model, v) for name, v in variants.items()}
    for fit_model, ds in runs.values():
        fit_model.fit(ds.take(2), epochs=1, verbose=0)  # trace
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, (fit_model, ds) in runs.items():
            t0 = time.perf_counter()
            fit_model.fit(ds, epochs=1, verbose=0)
            seconds[name].append((time.perf_counter() - t0) / steps)
    return {name: min(s) for name, s in seconds.items()}


def print_steps(best: dict[str, float], notes: dict[str, str] | None = None) -> None:
    """One line a variant: ms a step, the first's time over its own, and its note."""
    width, first = max(map(len, best)), next(iter(best.values()))
    for name, s in best.items():
        note = (notes or {}).get(name, "")
        print(f"  {name:{width}s} {1000 * s:7.1f} ms a step  {first / s:5.2f}x  {note}".rstrip())
