"""The machinery both trainers share, composed: dev evaluation every N steps and the best-model export; the
schedule (relkt.training.schedule), checkpoints (relkt.training.checkpoint) and logs (relkt.training.run_log)."""

from __future__ import annotations

import logging
import math
import os
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import keras
import numpy as np
import tensorflow as tf

from relkt.encoders.export import export_encoder, link_export
from relkt.errors import CheckpointError, DegenerateError, NonFiniteError, WriteError, raise_if_interrupted
from relkt.io import atomic_write_json
from relkt.metrics.evaluator import Evaluator, run_evaluators
from relkt.reports import plots
from relkt.training.checkpoint import Checkpointer, RunState
from relkt.training.run_log import RunLog
from relkt.training.schedule import Schedule

TRAIN_LOG_EVERY = 10  # steps between the training log's entries (loss, terms, rate)

log = logging.getLogger("relkt.training")

__all__ = ["HarnessCallback", "RunHarness", "RunState"]


class RunHarness:
    """Owns the output directory of a run.

    Layout: `config.yaml`, `metrics.jsonl` (one JSON object per evaluation), `tensorboard/`,
    `best/` (hub-compatible export of the best model so far), `last/` (the model training ended with),
    `checkpoint/` (weights, optimizer, state; `checkpoint.prev/` the one before, removed when the run finishes), and
    when finished `summary.json` and `curves.png` (dev metric, loss terms and learning rate by step). A run that ends
    at its best step gets a `last/` of hard links to `best/`'s files.
    """

    def __init__(
        self,
        output_dir: str | Path,
        encoder,
        optimizer: keras.optimizers.Optimizer,
        evaluators: Sequence[Evaluator],
        primary_metric: str,
        eval_every: int,
        schedule,
        training_info: dict[str, Any],
        checkpoint_every: int = 0,
        chief: bool = True,
        eval_at_start: bool = False,
        compare_with_start: bool = False,
        score_with=None,
        eval_within_epoch: bool = False,
        eval_per_epoch: int = 0,
    ):
        """`evaluators` (relkt.metrics.evaluator's protocol) score `score_with` (default: `encoder`; a trainer passes
        a quiet wrapper of it) at each dev evaluation; `primary_metric` names one of their keys. `eval_every` counts
        global steps, or with `eval_within_epoch` each epoch's steps from its first (evaluated too); `eval_per_epoch`
        N > 0 evaluates N times an epoch that way, every `epoch_steps // N` steps (the trainer sets `epoch_steps`)."""
        self.out = Path(output_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        # Every worker of a multi-worker run evaluates, exports and checkpoints (saving may need all
        # of them); only the chief writes into the run folder, the others into a scratch folder.
        self.chief = chief
        self.write_dir = self.out if chief else self.out / f".worker-scratch-{os.getpid()}"
        self.write_dir.mkdir(parents=True, exist_ok=True)
        self.encoder, self.optimizer, self.evaluators = encoder, optimizer, list(evaluators)
        self.score_with = encoder if score_with is None else score_with
        self.primary_metric, self.eval_every = primary_metric, eval_every
        self.checkpoint_every = checkpoint_every or eval_every
        self.eval_at_start, self.compare_with_start = eval_at_start, compare_with_start
        self.eval_within_epoch, self.eval_per_epoch = eval_within_epoch, eval_per_epoch
        self.epoch_steps: int | None = None  # full batches in the epoch being trained (set by the trainer)
        self.total_steps: int | None = None  # steps of the whole run, where a stage knows them (schedule.decay)
        self.training_info = training_info
        self.schedule = Schedule(schedule)
        self.checkpointer = Checkpointer(self.out, self.write_dir)
        self.log = RunLog(self.write_dir)
        self.state = RunState(learning_rate=schedule.learning_rate)
        self.extra_arrays: Callable[[], dict[str, np.ndarray]] = lambda: {}
        self.last_logs: dict[str, float] = {}
        self.saved_step: int | None = None
        self.wall_mark = time.monotonic()  # since when this process's time is not yet in state.wall_seconds

    @property
    def policy(self):
        return self.schedule.policy

    # ----- checkpoint -----------------------------------------------------------------------
    def save_checkpoint(self) -> None:
        """Weights + optimizer variables + state, written to a fresh folder then swapped in."""
        now = time.monotonic()
        self.state.wall_seconds, self.wall_mark = self.state.wall_seconds + now - self.wall_mark, now
        self.state.policy = self.schedule.state()
        self.checkpointer.save(self.encoder, self.optimizer, self.state, self.extra_arrays)
        self.saved_step = self.state.global_step

    def checkpointed_step(self) -> int | None:
        """The step of the newest checkpoint this process wrote or resumed from (None: none yet)."""
        return self.saved_step

    def restore(self) -> dict[str, np.ndarray] | None:
        """Load the last checkpoint into encoder, optimizer and state; returns the trainer's arrays."""
        loaded = self.checkpointer.load()
        if loaded is None:
            return None
        ckpt, state, arrays = loaded
        if not self.encoder.built:
            self.encoder.embed(["build"])
        weights = self.encoder.weights
        n_w = sum(k.startswith("w") for k in arrays)
        if n_w != len(weights):
            raise RuntimeError(f"{ckpt}: checkpoint has {n_w} weights, the model {len(weights)}: not the same model")
        for i, v in enumerate(weights):
            v.assign(arrays[f"w{i}"])
        if not self.optimizer.built:
            self.optimizer.build(self.encoder.trainable_variables)
        variables = self.optimizer.variables
        n_o = sum(k.startswith("o") for k in arrays)
        if n_o < len(variables) and state.get("global_step") == 0:
            # Saved before the optimizer was built (the step-0 evaluation of `eval.at_start`): it held only its
            # counters, and a freshly built optimizer is exactly its state.
            variables = variables[:n_o]
        elif n_o != len(variables):
            raise CheckpointError(
                f"{ckpt}: checkpoint has {n_o} optimizer variables, the optimizer {len(variables)}: "
                "not the same optimizer; start a new output_dir"
            )
        for i, v in enumerate(variables):
            v.assign(arrays[f"o{i}"])
        self.state = RunState(**state)
        self.saved_step = self.state.global_step
        self.schedule.load_state(self.state.policy)
        self.optimizer.learning_rate.assign(self.current_learning_rate())
        self.log.write_history(self.state.history)
        log.info(
            "resumed from %s: epoch %d, step %d of the epoch, global step %d",
            ckpt,
            self.state.epoch,
            self.state.step_in_epoch,
            self.state.global_step,
        )
        return {k[2:]: v for k, v in arrays.items() if k.startswith("x_")}

    # ----- the training log ------------------------------------------------------------------
    def window_means(self) -> dict[str, float]:
        """Means over the steps since the training log's last entry (per-step values, see HarnessCallback)."""
        window = self.state.loss_window
        return {k: v / window["steps"] for k, v in window.get("sums", {}).items()}

    def recent_train_means(self) -> dict[str, float]:
        """The open window's means, or the last entry's when the window has just closed."""
        if self.state.loss_window.get("steps"):
            return self.window_means()
        if self.state.train_log:
            last = self.state.train_log[-1]
            return {k[len("train/") :]: v for k, v in last.items() if k.startswith("train/")}
        return {}

    # ----- evaluation -----------------------------------------------------------------------
    def evaluate(self, schedule: bool = True) -> bool:
        """Evaluate on dev, log, update the schedule (`schedule=False`: a baseline that only sets the
        value to beat); export if best. Returns True to stop."""
        t0 = time.perf_counter()
        metrics, value = self.dev_metrics()
        decision, new_rate = self.schedule.evaluated(value, self.state.global_step, self.state.learning_rate, schedule)
        record = {
            "step": self.state.global_step,
            "epoch": self.state.epoch,
            "learning_rate": self.state.learning_rate,
            **{f"train/{k}": v for k, v in self.recent_train_means().items()},
            **{f"dev/{k}": v for k, v in metrics.items()},
            "primary": value,
            "best": self.policy.best,
            "eval_seconds": round(time.perf_counter() - t0, 2),
        }
        self.state.history.append(record)
        self.log.record(self.state.history)
        log.info(
            "step %d: dev %s = %.4f (best %.4f at step %d)",
            record["step"],
            self.primary_metric,
            value,
            self.policy.best,
            self.policy.best_step,
        )
        if decision.improved:
            self.check_finite_weights()
            export_encoder(
                self.encoder,
                self.write_dir / "best",
                training={
                    **self.training_info,
                    "step": self.state.global_step,
                    "epoch": self.state.epoch,
                    "dev": {self.primary_metric: value},
                },
            )
        if new_rate != self.state.learning_rate:
            self.state.learning_rate = new_rate
            self.optimizer.learning_rate.assign(self.current_learning_rate())
        if decision.stop:
            self.state.stopped_early, self.state.stop_reason = True, "plateau"
        return decision.stop

    def dev_metrics(self) -> tuple[dict[str, float], float]:
        """The dev evaluation and its primary value; a model whose embeddings cannot rank (NaN, zero or one vector)
        stops the run here, naming the step, before it could become best/."""
        try:
            metrics = run_evaluators(self.evaluators, self.score_with)
        except (NonFiniteError, DegenerateError) as e:
            raise type(e)(
                f"step {self.state.global_step}: dev evaluation: {e}; stopped without exporting it ({self.kept()})"
            ) from None
        if self.primary_metric not in metrics:
            raise KeyError(
                f"primary metric {self.primary_metric!r} not among the evaluation's metrics; "
                f"valid: {', '.join(sorted(k for k in metrics if not k.endswith('n_questions')))}"
            )
        return metrics, float(metrics[self.primary_metric])

    def check_finite_weights(self) -> None:
        """NonFiniteError naming the first weight holding NaN or inf (a diverged model is never exported)."""
        for w in self.encoder.weights:
            if not np.isfinite(w.numpy()).all():
                raise NonFiniteError(
                    f"step {self.state.global_step}: weight {w.path} holds NaN or inf values; "
                    f"stopped without exporting it ({self.kept()})"
                )

    def kept(self) -> str:
        """What a run stopped by a diverged or collapsed model leaves to the user, as it is on disk."""
        best = self.write_dir / "best"
        if not best.exists():
            return f"{self.out} has no best/: no evaluation before this one was good"
        step = f" of step {self.policy.best_step}" if self.policy.best_step >= 0 else ""
        return f"{self.out} keeps the best/{step} and the last good checkpoint"

    def evaluate_at_start(self) -> None:
        """With `eval_at_start`, score the untrained model once (step 0) so metrics.jsonl holds the starting
        point and `best/` is only replaced by a model that beats it (a student that never beats its
        starting copy of the teacher says so). It does not count towards learning-rate or early-stop
        patience. Without it, `compare_with_start` scores the starting point all the same, only to report it
        (`summary.json`'s `start`: a best/ worse than the model it started from is said, not hidden); nothing is
        exported and no schedule changes. Skipped on resume."""
        if self.state.global_step != 0 or self.state.history or "start" in self.state.extra:
            return
        if self.eval_at_start:
            self.evaluate(schedule=False)
            self.state.extra["start"] = {"metric": self.primary_metric, "value": self.state.history[-1]["primary"]}
        elif self.compare_with_start:
            _, value = self.dev_metrics()
            self.state.extra["start"] = {"metric": self.primary_metric, "value": value}
            log.info(
                "starting point: dev %s = %.4f (for summary.json; eval.at_start would keep it as best/ until beaten)",
                self.primary_metric,
                value,
            )
        else:
            return
        self.save_checkpoint()

    # ----- per step -------------------------------------------------------------------------
    def current_learning_rate(self) -> float:
        """The rate for the next step (the schedule's, warmup included)."""
        return self.schedule.rate(self.state.learning_rate, self.state.global_step, self.total_steps)

    def before_step(self) -> None:
        """Called before every optimizer step: sets the optimizer's rate during warmup (and once after it) and a
        decay; a Ctrl-C that a finalizer swallowed stops the run here."""
        raise_if_interrupted()
        if self.schedule.moves_rate(self.state.global_step):
            self.optimizer.learning_rate.assign(self.current_learning_rate())

    def after_step(self, logs: dict | None) -> bool:
        """Called after every optimizer step; returns True when training must stop. A non-finite loss stops the run
        with NonFiniteError before anything is saved: the checkpoint and best/ stay those of the last good step."""
        raise_if_interrupted()
        self.state.global_step += 1
        self.state.step_in_epoch += 1
        self.last_logs = {k: float(v) for k, v in (logs or {}).items()}
        loss = self.last_logs.get("loss")
        if loss is not None and not math.isfinite(loss):
            raise NonFiniteError(
                f"step {self.state.global_step}: the training loss is {loss} (learning rate "
                f"{self.current_learning_rate():.3g}); stopped ({self.kept()}); lower schedule.learning_rate (or check "
                "the data) and start a new output_dir"
            )
        window = self.state.loss_window
        sums = window.setdefault("sums", {})
        for k, v in self.last_logs.items():
            sums[k] = sums.get(k, 0.0) + v
        window["steps"] = window.get("steps", 0) + 1
        if self.state.global_step % TRAIN_LOG_EVERY == 0:
            entry = {
                "step": self.state.global_step,
                "learning_rate": self.current_learning_rate(),
                **{f"train/{k}": v for k, v in self.window_means().items() if math.isfinite(v)},
            }
            self.state.train_log.append(entry)
            self.state.loss_window = {}
            if self.chief:
                self.log.scalars(entry)
        stop = False
        if self.evaluation_due():
            stop = self.evaluate()
        if not stop and self.schedule.budget_reached(self.state.global_step):
            log.info("step budget reached: %d steps (schedule.max_steps)", self.state.global_step)
            if not self.state.history or self.state.history[-1]["step"] != self.state.global_step:
                self.evaluate()
            self.state.stopped_early, self.state.stop_reason, stop = True, "max_steps", True
        if stop or self.state.global_step % self.checkpoint_every == 0:
            self.save_checkpoint()
        return stop

    def evaluation_due(self) -> bool:
        """Whether the step just taken is evaluated: every `eval_every` global steps, or within each epoch after its
        steps 1, 1 + eval_every, 1 + 2 x eval_every, ... (`eval_within_epoch`), or N times an epoch that way
        (`eval_per_epoch`)."""
        i = self.state.step_in_epoch - 1  # the batch index within the epoch, as the reference scripts count
        if self.eval_per_epoch:
            if self.epoch_steps is None:
                raise RuntimeError("eval.per_epoch needs the trainer to set the harness's epoch_steps")
            every = max(1, self.epoch_steps // self.eval_per_epoch)
            return i % every == 0 and i // every < self.eval_per_epoch
        if self.eval_within_epoch:
            return i % self.eval_every == 0
        return self.state.global_step % self.eval_every == 0

    def reopen(self, epochs: int) -> bool:
        """A finished run whose config now asks for more epochs continues (unless it stopped early:
        more epochs change nothing there); returns whether there is training left to do."""
        if not self.state.finished:
            return True
        if self.state.stopped_early or self.state.epoch >= epochs:
            return False
        log.info("%s: finished after %d epochs; training on to %d", self.out, self.state.epoch, epochs)
        self.state.finished = False
        return True

    def end_epoch(self) -> None:
        self.state.epoch += 1
        self.state.step_in_epoch = 0
        self.save_checkpoint()

    def export_last(self) -> Path:
        """The model as it is now, exported (hub format, atomically) to `last/`. When `best/` was exported at this
        very step it holds these weights, and `last/` is made of hard links to its files (a muse export is ~0.6 GB)."""
        last = self.state.history[-1] if self.state.history else {}
        training = {
            **self.training_info,
            "step": self.state.global_step,
            "epoch": self.state.epoch,
            "dev": {self.primary_metric: last.get("primary")},
        }
        best = self.write_dir / "best"
        if self.policy.best_step == self.state.global_step and best.exists():
            try:
                return link_export(best, self.write_dir / "last", training)
            except OSError as e:  # a filesystem without hard links: the same model, written out
                log.info("%s: cannot hard-link best/ (%s); exporting last/ in full", self.out, e)
        return export_encoder(self.encoder, self.write_dir / "last", training=training)

    def plot_curves(self) -> Path:
        """`curves.png`: the dev primary metric, the training loss and its terms, and the learning rate by step."""
        stage = self.training_info.get("stage", "run")
        title = f"{self.out.parent.name}/{self.out.name} ({stage}): dev {self.primary_metric}"
        path = self.write_dir / "curves.png"
        self.log.write_train_log(self.state.train_log)
        return plots.training_curves(self.state.history, self.primary_metric, title, path, self.state.train_log)

    def finish(self, summary: dict[str, Any]) -> dict[str, Any]:
        """Final evaluation if the last step was not evaluated; export the final model to `last/` (what
        training ended with, whether or not it beat `best/`); write summary.json."""
        if not self.state.history or self.state.history[-1]["step"] != self.state.global_step:
            # It may set a new best, but changes no schedule: a run later trained on to more epochs
            # then follows the same learning rates as one started with them.
            self.evaluate(schedule=False)
        self.export_last()
        self.plot_curves()
        self.state.finished = True
        self.save_checkpoint()
        # The finished checkpoint is on disk (fsynced); the one before it only guarded an interrupted write.
        shutil.rmtree(self.write_dir / "checkpoint.prev", ignore_errors=True)
        summary = {
            **summary,
            "best": {"metric": self.primary_metric, "value": self.policy.best, "step": self.policy.best_step},
            "steps": self.state.global_step,
            "epochs_completed": self.state.epoch,
            "stopped_early": self.state.stopped_early,
            "stop_reason": self.state.stop_reason,
            "wall_seconds": round(self.state.wall_seconds, 1),
            "best_export": str(self.out / "best"),
            "last_export": str(self.out / "last"),
            **({"start": {**self.state.extra["start"], "step": 0}} if "start" in self.state.extra else {}),
        }
        atomic_write_json(self.write_dir / "summary.json", summary)
        if not self.chief:
            shutil.rmtree(self.write_dir, ignore_errors=True)
        return summary


class HarnessCallback(keras.callbacks.Callback):
    """Hands every finished batch to the harness; stops `fit` cleanly when it says so."""

    def __init__(self, harness: RunHarness):
        super().__init__()
        self.harness = harness
        self.pass_sums: dict[str, float] = {}
        self.pass_steps = 0

    def on_epoch_begin(self, epoch, logs=None):
        self.pass_sums, self.pass_steps = {}, 0

    def on_epoch_end(self, epoch, logs=None):
        # Keras reads the pass's means from the metrics this callback resets: give the callbacks after it (the
        # progress line) the means of the batches' own values instead
        if logs is not None and self.pass_steps:
            logs.update({k: v / self.pass_steps for k, v in self.pass_sums.items()})

    def on_train_batch_begin(self, batch, logs=None):
        self.harness.before_step()

    def on_train_batch_end(self, batch, logs=None):
        for k, v in (logs or {}).items():
            self.pass_sums[k] = self.pass_sums.get(k, 0.0) + float(v)
        self.pass_steps += 1
        try:
            stop = self.harness.after_step(logs)
        except (StopIteration, tf.errors.OutOfRangeError) as e:
            # Keras takes these for the end of the data and would go on with a shortened epoch: never let one out.
            raise WriteError(
                f"{self.harness.out}: step {self.harness.state.global_step}: {getattr(e, 'message', None) or e!r}"
            ) from e
        finally:
            # Keras's logs are means since the pass began; reset after every batch they are that batch's values,
            # which the harness averages over windows of steps a resume continues (Progbar still shows means)
            if hasattr(self.model, "reset_metrics"):
                self.model.reset_metrics()
        if stop:
            self.model.stop_training = True
