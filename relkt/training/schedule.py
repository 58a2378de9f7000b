"""The learning-rate and stopping schedule: linear warmup, an optional decay to 0 at the run's end, the rate
multiplied by `lr_factor` on a plateau of dev evaluations, early stop after a longer one, and an optional step budget
(ScheduleSection)."""

from __future__ import annotations

import logging
import math

from relkt.errors import ConfigError
from relkt.training.plateau_policy import PlateauDecision, PlateauPolicy

log = logging.getLogger("relkt.training")


class Schedule:
    """The learning rate a step trains at (warm-up, plateaus) and the plateau policy's decisions."""

    def __init__(self, section):
        self.section = section
        self.policy = PlateauPolicy(section.lr_patience, section.early_stop_patience)

    def rate(self, base_rate: float, global_step: int, total_steps: int | None = None) -> float:
        """The rate for the next step (0-based `global_step`): the base rate (lowered on plateaus), ramped up linearly
        over the first `warmup_steps` steps of the run, then decayed to 0 at step `total_steps` (`decay`)."""
        warmup = getattr(self.section, "warmup_steps", 0)
        if warmup and global_step < warmup:
            return base_rate * (global_step + 1) / warmup
        decay = getattr(self.section, "decay", "none")
        if decay == "none":
            return base_rate
        if not total_steps:
            raise ConfigError(
                f"schedule.decay: {decay} needs the run's length in steps, which this stage does not know"
            )
        progress = min(1.0, max(0.0, (global_step - warmup) / max(1, total_steps - warmup)))
        return base_rate * ((1.0 - progress) if decay == "linear" else 0.5 * (1.0 + math.cos(math.pi * progress)))

    def moves_rate(self, global_step: int) -> bool:
        """Whether the optimizer's rate must be set before this step: during warmup (and once after it), and every
        step of a decay."""
        warmup = getattr(self.section, "warmup_steps", 0)
        return getattr(self.section, "decay", "none") != "none" or (bool(warmup) and global_step <= warmup)

    def evaluated(
        self, value: float, global_step: int, base_rate: float, schedule: bool = True
    ) -> tuple[PlateauDecision, float]:
        """Count an evaluation (`schedule=False`: a baseline that only sets the value to beat); returns the decision
        and the base rate from now on (lowered on a plateau, never raised, not below `min_learning_rate`)."""
        decision = self.policy.update(value, global_step, schedule)
        if decision.reduce_lr:
            s = self.section
            new_rate = max(base_rate * s.lr_factor, min(s.min_learning_rate, base_rate))
            log.info(
                "no improvement in %d evaluations: learning rate %.3g -> %.3g",
                self.policy.since_best,
                base_rate,
                new_rate,
            )
            base_rate = new_rate
        if decision.stop:
            log.info("early stop: no improvement in %d evaluations", self.policy.since_best)
        return decision, base_rate

    def budget_reached(self, global_step: int) -> bool:
        budget = getattr(self.section, "max_steps", 0)
        return bool(budget) and global_step >= budget

    def state(self) -> dict:
        return self.policy.state()

    def load_state(self, state: dict) -> None:
        for k, v in state.items():
            setattr(self.policy, k, v)
        if "schedule_best" not in state:  # a checkpoint from before baselines: every evaluation counted
            self.policy.schedule_best = self.policy.best
