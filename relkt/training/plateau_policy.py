"""When to keep the model, halve the learning rate, or stop: counted in evaluations."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

# Two dev scores this close are one: a mean of per-language P@1 holding the same questions right can differ in its
# last bit with how they split across languages (0.6847826086956521 vs ...522), which is no improvement.
SAME_SCORE = 1e-9


@dataclass
class PlateauDecision:
    """What one evaluation decides: did the metric improve, lower the rate, stop the run."""

    improved: bool
    reduce_lr: bool
    stop: bool


@dataclass
class PlateauPolicy:
    """Higher is better. After `lr_patience` evaluations without a new best the learning rate is
    reduced (and again every `lr_patience` more); after `stop_patience` training stops.

    `best` is the best value seen (what the kept model must beat). A baseline evaluation
    (`schedule=False`, e.g. the untrained model at step 0) counts towards `best` only: patience
    counts training evaluations against the best of them (`schedule_best`), so a student that dips
    below its starting point before it learns is not slowed down or stopped for it.
    """

    lr_patience: int = 2
    stop_patience: int = 6
    min_delta: float = 0.0
    best: float = float("-inf")
    best_step: int = -1
    since_best: int = 0
    schedule_best: float = float("-inf")

    def beats(self, value: float, best: float) -> bool:
        """`value` above `best` by more than min_delta, and by more than float noise (SAME_SCORE, relative)."""
        return math.isinf(best) or value - best > max(self.min_delta, SAME_SCORE * max(1.0, abs(best)))

    def update(self, value: float, step: int, schedule: bool = True) -> PlateauDecision:
        improved = self.beats(value, self.best)
        if improved:
            self.best, self.best_step = float(value), int(step)
        if not schedule:
            return PlateauDecision(improved, False, False)
        if self.beats(value, self.schedule_best):
            self.schedule_best, self.since_best = float(value), 0
            return PlateauDecision(improved, False, False)
        self.since_best += 1
        reduce = self.lr_patience > 0 and self.since_best % self.lr_patience == 0
        return PlateauDecision(improved, reduce, self.stop_patience > 0 and self.since_best >= self.stop_patience)

    def state(self) -> dict:
        return asdict(self)
