"""A run's checkpoint: its counters and history (`RunState`), the encoder's and optimizer's variables and a
trainer's own arrays, written atomically beside the previous one, which a resume falls back to."""

from __future__ import annotations

import json
import logging
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from relkt.errors import CheckpointError
from relkt.io import fsync_tree, read_json, read_npz, recover_dir, replace_dir, write_errors

log = logging.getLogger("relkt.training")

_UNREADABLE = (CheckpointError, OSError, ValueError, KeyError)  # the read door says CheckpointError


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
    # the training loss, its terms and the learning rate every TRAIN_LOG_EVERY steps (curves.png, train.jsonl,
    # TensorBoard): an evaluation's record alone draws a short run's curve from two points
    train_log: list = field(default_factory=list)
    # the steps since the training log's last entry: {"steps": n, "sums": {name: sum of its per-step values}}, kept
    # here so that a resumed run's next entry is the mean of the same steps an uninterrupted run's is
    loss_window: dict = field(default_factory=dict)
    finished: bool = False
    stopped_early: bool = False
    stop_reason: str = ""  # "plateau" (early stop) or "max_steps" (the step budget)
    extra: dict = field(default_factory=dict)
    # Seconds the run's processes spent up to its last checkpoint, summed over resumes: the wall time of a run that
    # spans sessions (work redone after an interruption counts, time between processes does not).
    wall_seconds: float = 0.0


class Checkpointer:
    """`save` writes `checkpoint/` (arrays.npz + state.json) into `write_dir` through a fresh folder swapped in,
    keeping the previous one as `checkpoint.prev`; `load` reads `out`'s newest readable checkpoint."""

    def __init__(self, out: Path, write_dir: Path):
        self.out, self.write_dir = Path(out), Path(write_dir)

    @property
    def path(self) -> Path:
        return self.out / "checkpoint"

    def save(self, encoder, optimizer, state: RunState, extra_arrays: Callable[[], dict[str, np.ndarray]]) -> None:
        tmp = self.write_dir / ".checkpoint.writing"
        arrays = {f"w{i}": v.numpy() for i, v in enumerate(encoder.weights)}
        arrays.update({f"o{i}": v.numpy() for i, v in enumerate(optimizer.variables)})
        arrays.update({f"x_{k}": v for k, v in extra_arrays().items()})
        try:
            with write_errors(self.write_dir / "checkpoint", "write the checkpoint"):
                shutil.rmtree(tmp, ignore_errors=True)
                tmp.mkdir()
                with open(tmp / "arrays.npz", "wb") as f:
                    np.savez(f, **arrays)
                (tmp / "state.json").write_text(json.dumps(state.__dict__, indent=1))
                fsync_tree(tmp)
                replace_dir(tmp, self.write_dir / "checkpoint", keep_previous=self.write_dir / "checkpoint.prev")
        finally:  # a failed or interrupted write leaves the previous checkpoint, and nothing beside it
            shutil.rmtree(tmp, ignore_errors=True)

    def load(self) -> tuple[Path, dict, dict[str, np.ndarray]] | None:
        """(folder, state dict, arrays) of the newest readable checkpoint; None when there is none; CheckpointError
        when there is one and neither it nor the previous one can be read."""
        ckpt = recover_dir(self.path)
        previous = self.out / "checkpoint.prev"
        if ckpt is None and previous.exists():  # a kill between the two renames of save
            ckpt = previous
        if ckpt is None:
            return None
        try:
            return (ckpt, *self._read(ckpt))
        except _UNREADABLE as e:
            if ckpt == previous or not previous.exists():
                raise CheckpointError(
                    f"{ckpt}: cannot read the checkpoint ({type(e).__name__}: {e}) and there is no "
                    "earlier one; start a new output_dir"
                ) from None
            log.warning(
                "%s: cannot read the checkpoint (%s: %s); resuming from the previous one, %s",
                ckpt,
                type(e).__name__,
                e,
                previous,
            )
        try:
            return (previous, *self._read(previous))
        except _UNREADABLE as e2:
            raise CheckpointError(
                f"{ckpt} and {previous}: neither checkpoint can be read ({e2}); start a new output_dir"
            ) from None

    @staticmethod
    def _read(ckpt: Path) -> tuple[dict, dict[str, np.ndarray]]:
        state = read_json(ckpt / "state.json", "checkpoint state", CheckpointError)
        arrays = read_npz(ckpt / "arrays.npz", "checkpoint's arrays", CheckpointError)
        return state, arrays
