"""When to keep the model, halve the learning rate, or stop: counted in evaluations."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass
class PlateauDecision:
    improved: bool
    reduce_lr: bool
    stop: bool


@dataclass
class PlateauPolicy:
    """Higher is better. After `lr_patience` evaluations without a new best the learning rate is
    reduced (and again every `lr_patience` more); after `stop_patience` training stops."""

    lr_patience: int = 2
    stop_patience: int = 6
    min_delta: float = 0.0
    best: float = float("-inf")
    best_step: int = -1
    since_best: int = 0

    def update(self, value: float, step: int) -> PlateauDecision:
        if value > self.best + self.min_delta:
            self.best, self.best_step, self.since_best = float(value), int(step), 0
            return PlateauDecision(True, False, False)
        self.since_best += 1
        reduce = self.lr_patience > 0 and self.since_best % self.lr_patience == 0
        return PlateauDecision(False, reduce, self.stop_patience > 0 and self.since_best >= self.stop_patience)

    def state(self) -> dict:
        return asdict(self)
