"""What a run logs for people and tools: metrics.jsonl (one JSON object per evaluation) and TensorBoard scalars."""

from __future__ import annotations

import json
import math
from pathlib import Path

import tensorflow as tf

from relkt.errors import WriteError
from relkt.io import atomic_write_text, tf_reason


class RunLog:
    """A run's logs in its folder: metrics.jsonl (the evaluations) and the TensorBoard events."""

    def __init__(self, write_dir: Path):
        self.write_dir = Path(write_dir)
        self._writer = None

    def write_history(self, history: list[dict]) -> None:
        """metrics.jsonl, rewritten whole (a resumed run's file holds exactly its checkpoint's history)."""
        atomic_write_text(
            self.write_dir / "metrics.jsonl", "".join(json.dumps(h, allow_nan=False) + "\n" for h in history)
        )

    def write_train_log(self, train_log: list[dict]) -> None:
        """train.jsonl: the training loss, its terms and the rate every few steps, rewritten whole."""
        atomic_write_text(
            self.write_dir / "train.jsonl", "".join(json.dumps(h, allow_nan=False) + "\n" for h in train_log)
        )

    def scalars(self, record: dict) -> None:
        """One record's finite numbers (but its step) as TensorBoard scalars at its step."""
        try:
            if self._writer is None:
                self._writer = tf.summary.create_file_writer(str(self.write_dir / "tensorboard"))
            with self._writer.as_default(step=record["step"]):
                for k, v in record.items():
                    if isinstance(v, (int, float)) and k != "step" and math.isfinite(v):
                        tf.summary.scalar(k, v)
            self._writer.flush()
        except tf.errors.OpError as e:
            raise WriteError(f"{self.write_dir / 'tensorboard'}: cannot write ({tf_reason(e)})") from None

    def record(self, history: list[dict]) -> None:
        """After an evaluation: metrics.jsonl, and the newest record's finite numbers as TensorBoard scalars."""
        self.write_history(history)
        self.scalars(history[-1])
