"""The machinery both trainers share: dev evaluation every N steps, learning-rate halving on plateau,
early stopping, best-model export, metrics.jsonl and TensorBoard logs, atomic checkpoints and resume."""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import keras
import numpy as np
import tensorflow as tf

from relkt.encoders.export import export_encoder
from relkt.errors import CheckpointError, NonFiniteError
from relkt.io import atomic_write_json, atomic_write_text, fsync_tree, recover_dir, replace_dir
from relkt.training.plateau_policy import PlateauPolicy

log = logging.getLogger("relkt.training")


@dataclass
class RunState:
    """Everything needed to resume: counters, schedule, best so far, the evaluation history, and
    a trainer's own small state in `extra` (its arrays go to the checkpoint's npz)."""

    epoch: int = 0
    step_in_epoch: int = 0
    global_step: int = 0
    learning_rate: float = 0.0
    policy: dict = field(default_factory=dict)
    history: list = field(default_factory=list)
    finished: bool = False
    stopped_early: bool = False
    stop_reason: str = ""  # "plateau" (early stop) or "max_steps" (the step budget)
    extra: dict = field(default_factory=dict)


class RunHarness:
    """Owns the output directory of a run.

    Layout: `config.yaml`, `metrics.jsonl` (one JSON object per evaluation), `tensorboard/`,
    `best/` (hub-compatible export of the best model so far), `checkpoint/` (weights, optimizer,
    state), `summary.json` when finished.
    """

    def __init__(
        self,
        output_dir: str | Path,
        encoder,
        optimizer: keras.optimizers.Optimizer,
        evaluate: Callable[[], dict[str, float]],
        primary_metric: str,
        eval_every: int,
        schedule,
        training_info: dict[str, Any],
        checkpoint_every: int = 0,
        chief: bool = True,
        eval_at_start: bool = False,
    ):
        self.out = Path(output_dir)
        self.out.mkdir(parents=True, exist_ok=True)
        # Every worker of a multi-worker run evaluates, exports and checkpoints (saving may need all
        # of them); only the chief writes into the run folder, the others into a scratch folder.
        self.chief = chief
        self.write_dir = self.out if chief else self.out / f".worker-scratch-{os.getpid()}"
        self.write_dir.mkdir(parents=True, exist_ok=True)
        self.encoder, self.optimizer, self.evaluate_fn = encoder, optimizer, evaluate
        self.primary_metric, self.eval_every = primary_metric, eval_every
        self.checkpoint_every = checkpoint_every or eval_every
        self.eval_at_start = eval_at_start
        self.schedule, self.training_info = schedule, training_info
        self.state = RunState(learning_rate=schedule.learning_rate)
        self.policy = PlateauPolicy(schedule.lr_patience, schedule.early_stop_patience)
        self.extra_arrays: Callable[[], dict[str, np.ndarray]] = lambda: {}
        self.last_logs: dict[str, float] = {}
        self._writer = None

    # ----- checkpoint -----------------------------------------------------------------------
    @property
    def checkpoint_dir(self) -> Path:
        return self.out / "checkpoint"

    def save_checkpoint(self) -> None:
        """Weights + optimizer variables + state, written to a fresh folder then swapped in."""
        tmp = self.write_dir / ".checkpoint.writing"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir()
        arrays = {f"w{i}": v.numpy() for i, v in enumerate(self.encoder.weights)}
        arrays.update({f"o{i}": v.numpy() for i, v in enumerate(self.optimizer.variables)})
        arrays.update({f"x_{k}": v for k, v in self.extra_arrays().items()})
        with open(tmp / "arrays.npz", "wb") as f:
            np.savez(f, **arrays)
        self.state.policy = self.policy.state()
        (tmp / "state.json").write_text(json.dumps(self.state.__dict__, indent=1))
        fsync_tree(tmp)
        # The previous checkpoint stays as checkpoint.prev: resume falls back to it if the newest cannot be read.
        replace_dir(tmp, self.write_dir / "checkpoint", keep_previous=self.write_dir / "checkpoint.prev")

    def restore(self) -> dict[str, np.ndarray] | None:
        """Load the last checkpoint into encoder, optimizer and state; returns the trainer's arrays."""
        ckpt = recover_dir(self.checkpoint_dir)
        previous = self.out / "checkpoint.prev"
        if ckpt is None and previous.exists():  # a kill between the two renames of save_checkpoint
            ckpt = previous
        if ckpt is None:
            return None
        try:
            state, arrays = self._read_checkpoint(ckpt)
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:
            if ckpt == previous or not previous.exists():
                raise CheckpointError(f"{ckpt}: cannot read the checkpoint ({type(e).__name__}: {e}) and there is no "
                                      "earlier one; start a new output_dir") from None
            log.warning("%s: cannot read the checkpoint (%s: %s); resuming from the previous one, %s",
                        ckpt, type(e).__name__, e, previous)
            try:
                state, arrays = self._read_checkpoint(previous)
            except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e2:
                raise CheckpointError(f"{ckpt} and {previous}: neither checkpoint can be read ({e2}); start a new "
                                      "output_dir") from None
            ckpt = previous
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
        for i, v in enumerate(self.optimizer.variables):
            v.assign(arrays[f"o{i}"])
        self.state = RunState(**state)
        for k, v in self.state.policy.items():
            setattr(self.policy, k, v)
        if "schedule_best" not in self.state.policy:  # a checkpoint from before baselines: every evaluation counted
            self.policy.schedule_best = self.policy.best
        self.optimizer.learning_rate.assign(self.current_learning_rate())
        self._rewrite_metrics()
        log.info("resumed from %s: epoch %d, step %d of the epoch, global step %d",
                 ckpt, self.state.epoch, self.state.step_in_epoch, self.state.global_step)
        return {k[2:]: v for k, v in arrays.items() if k.startswith("x_")}

    @staticmethod
    def _read_checkpoint(ckpt: Path) -> tuple[dict, dict[str, np.ndarray]]:
        state = json.loads((ckpt / "state.json").read_text())
        with np.load(ckpt / "arrays.npz") as z:
            arrays = {k: z[k] for k in z.files}
        return state, arrays

    # ----- evaluation -----------------------------------------------------------------------
    def _rewrite_metrics(self) -> None:
        atomic_write_text(self.write_dir / "metrics.jsonl", "".join(json.dumps(h) + "\n" for h in self.state.history))

    def _tensorboard(self, record: dict) -> None:
        if self._writer is None:
            self._writer = tf.summary.create_file_writer(str(self.write_dir / "tensorboard"))
        with self._writer.as_default(step=record["step"]):
            for k, v in record.items():
                if isinstance(v, (int, float)) and k != "step" and math.isfinite(v):
                    tf.summary.scalar(k, v)
        self._writer.flush()

    def evaluate(self, schedule: bool = True) -> bool:
        """Evaluate on dev, log, update the plateau policy (`schedule=False`: a baseline that only sets the
        value to beat); export if best. Returns True to stop."""
        t0 = time.perf_counter()
        metrics = self.evaluate_fn()
        if self.primary_metric not in metrics:
            raise KeyError(f"primary metric {self.primary_metric!r} not among the evaluation's metrics; "
                           f"valid: {', '.join(sorted(k for k in metrics if not k.endswith('n_questions')))}")
        value = float(metrics[self.primary_metric])
        decision = self.policy.update(value, self.state.global_step, schedule)
        record = {
            "step": self.state.global_step, "epoch": self.state.epoch, "learning_rate": self.state.learning_rate,
            **{f"train/{k}": float(v) for k, v in self.last_logs.items()},
            **{f"dev/{k}": v for k, v in metrics.items()},
            "primary": value, "best": self.policy.best, "eval_seconds": round(time.perf_counter() - t0, 2),
        }
        self.state.history.append(record)
        self._rewrite_metrics()
        self._tensorboard(record)
        log.info("step %d: dev %s = %.4f (best %.4f at step %d)", record["step"], self.primary_metric, value,
                 self.policy.best, self.policy.best_step)
        if decision.improved:
            self.check_finite_weights()
            export_encoder(self.encoder, self.write_dir / "best", training={
                **self.training_info, "step": self.state.global_step, "epoch": self.state.epoch,
                "dev": {self.primary_metric: value}})
        if decision.reduce_lr:
            lr = self.state.learning_rate
            new_lr = max(lr * self.schedule.lr_factor, min(self.schedule.min_learning_rate, lr))  # never raises it
            log.info("no improvement in %d evaluations: learning rate %.3g -> %.3g", self.policy.since_best,
                     self.state.learning_rate, new_lr)
            self.state.learning_rate = new_lr
            self.optimizer.learning_rate.assign(self.current_learning_rate())
        if decision.stop:
            log.info("early stop: no improvement in %d evaluations", self.policy.since_best)
            self.state.stopped_early, self.state.stop_reason = True, "plateau"
        return decision.stop

    def check_finite_weights(self) -> None:
        """NonFiniteError naming the first weight holding NaN or inf (a diverged model is never exported)."""
        for w in self.encoder.weights:
            if not np.isfinite(w.numpy()).all():
                raise NonFiniteError(f"step {self.state.global_step}: weight {w.path} holds NaN or inf values; "
                                     f"stopped without exporting it ({self.out} keeps its last good best/)")

    def evaluate_at_start(self) -> None:
        """With `eval_at_start`, score the untrained model once (step 0) so metrics.jsonl holds the starting
        point and `best/` is only replaced by a model that beats it (a student that never beats its
        starting copy of the teacher says so). It does not count towards learning-rate or early-stop
        patience. Skipped on resume."""
        if self.eval_at_start and self.state.global_step == 0 and not self.state.history:
            self.evaluate(schedule=False)
            self.save_checkpoint()

    # ----- per step -------------------------------------------------------------------------
    def current_learning_rate(self) -> float:
        """The rate for the next step: the schedule's rate (halved on plateaus), ramped up linearly over
        the first `schedule.warmup_steps` steps of the run."""
        warmup = getattr(self.schedule, "warmup_steps", 0)
        if warmup and self.state.global_step < warmup:
            return self.state.learning_rate * (self.state.global_step + 1) / warmup
        return self.state.learning_rate

    def before_step(self) -> None:
        """Called before every optimizer step: sets the optimizer's rate during warmup (and once after it)."""
        warmup = getattr(self.schedule, "warmup_steps", 0)
        if warmup and self.state.global_step <= warmup:
            self.optimizer.learning_rate.assign(self.current_learning_rate())

    def after_step(self, logs: dict | None) -> bool:
        """Called after every optimizer step; returns True when training must stop. A non-finite loss stops the run
        with NonFiniteError before anything is saved: the checkpoint and best/ stay those of the last good step."""
        self.state.global_step += 1
        self.state.step_in_epoch += 1
        self.last_logs = {k: float(v) for k, v in (logs or {}).items()}
        loss = self.last_logs.get("loss")
        if loss is not None and not math.isfinite(loss):
            raise NonFiniteError(
                f"step {self.state.global_step}: the training loss is {loss} (learning rate "
                f"{self.current_learning_rate():.3g}); stopped. {self.out} keeps the checkpoint and best/ of the last "
                "good evaluation; lower schedule.learning_rate (or check the data) and start a new output_dir")
        stop = False
        if self.state.global_step % self.eval_every == 0:
            stop = self.evaluate()
        budget = getattr(self.schedule, "max_steps", 0)
        if not stop and budget and self.state.global_step >= budget:
            log.info("step budget reached: %d steps (schedule.max_steps)", budget)
            if not self.state.history or self.state.history[-1]["step"] != self.state.global_step:
                self.evaluate()
            self.state.stopped_early, self.state.stop_reason, stop = True, "max_steps", True
        if stop or self.state.global_step % self.checkpoint_every == 0:
            self.save_checkpoint()
        return stop

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
        """The model as it is now, exported (hub format, atomically) to `last/`."""
        last = self.state.history[-1] if self.state.history else {}
        return export_encoder(self.encoder, self.write_dir / "last", training={
            **self.training_info, "step": self.state.global_step, "epoch": self.state.epoch,
            "dev": {self.primary_metric: last.get("primary")}})

    def finish(self, summary: dict[str, Any]) -> dict[str, Any]:
        """Final evaluation if the last step was not evaluated; export the final model to `last/` (what
        training ended with, whether or not it beat `best/`); write summary.json."""
        if not self.state.history or self.state.history[-1]["step"] != self.state.global_step:
            # It may set a new best, but changes no schedule: a run later trained on to more epochs
            # then follows the same learning rates as one started with them.
            self.evaluate(schedule=False)
        self.export_last()
        self.state.finished = True
        self.save_checkpoint()
        summary = {
            **summary, "best": {"metric": self.primary_metric, "value": self.policy.best, "step": self.policy.best_step},
            "steps": self.state.global_step, "epochs_completed": self.state.epoch,
            "stopped_early": self.state.stopped_early, "stop_reason": self.state.stop_reason, "best_export": str(self.out / "best"),
            "last_export": str(self.out / "last"),
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

    def on_train_batch_begin(self, batch, logs=None):
        self.harness.before_step()

    def on_train_batch_end(self, batch, logs=None):
        if self.harness.after_step(logs):
            self.model.stop_training = True
