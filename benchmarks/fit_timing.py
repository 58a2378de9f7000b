"""Keras `fit` passes timed side by side, for the student-step benchmarks."""

from __future__ import annotations

import time


def best_step_seconds(model, variants: dict, steps: int, repeats: int) -> dict[str, float]:
    """Each variant's (name -> tf.data of `steps` batches) best seconds a step over `repeats` passes: each traced on
    two batches first, then the variants alternating, so that they share whatever else loads the machine."""
    for ds in variants.values():
        model.fit(ds.take(2), epochs=1, verbose=0)  # trace
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, ds in variants.items():
            t0 = time.perf_counter()
            model.fit(ds, epochs=1, verbose=0)
            seconds[name].append((time.perf_counter() - t0) / steps)
    return {name: min(s) for name, s in seconds.items()}


def print_steps(best: dict[str, float], notes: dict[str, str] | None = None) -> None:
    """One line a variant (ms a step, and its note), then the first's time over the second's."""
    width = max(map(len, best))
    for name, s in best.items():
        print(f"  {name:{width}s} {1000 * s:7.1f} ms a step   {(notes or {}).get(name, '')}".rstrip())
    a, b = list(best.values())[:2]
    print(f"  speed-up {a / b:.2f}x")
