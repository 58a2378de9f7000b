"""One optimizer step on an mUSE-sized token table (128,187 x 512) whose batch reads a few hundred rows: Adam over the
whole table, SparseAdam dense and lazy (with vocabulary extension's new-rows rate), and RowSubsetAdam
(student.language_rows), rows alone and with the rest of the table at a hundredth of the rate (`rest_lr_multiplier`,
relkt teach's recipe) against that same update written as relkt wrote it until 2026-11-27 (Keras's Adam on the
whole table, then each row's move scaled), and with the rest's rows lazy (`student.language_rows.rest_rows: lazy`),
side by side in one run.

    python benchmarks/bench_row_optimizers.py [--rows-read 600] [--chosen 4244] [--steps 20]

Prints ms per step of each, and each one's time as a multiple of RowSubsetAdam's. The gradient is what an embedding
lookup gives: tf.IndexedSlices over the rows a batch read (32 short sentences read ~600 distinct rows).
"""

from __future__ import annotations

import argparse
import time

import keras
import numpy as np
import tensorflow as tf

from relkt.stages.row_subset_adam import RowSubsetAdam
from relkt.stages.sparse_adam import SparseAdam


class ScaledKerasAdam(keras.optimizers.Adam):
    """RowSubsetAdam's dense `rest_scale` update as it was written until 2026-11-27: Keras's Adam on the table, then
    each row's move scaled (the chosen rows by 1, the rest by `rest`)."""

    def __init__(self, learning_rate, rows, rest: float):
        super().__init__(learning_rate)
        self.factor = np.full(HEIGHT, rest, np.float32)
        self.factor[rows] = 1.0

    def update_step(self, gradient, variable, learning_rate):
        before = tf.identity(tf.convert_to_tensor(variable))
        super().update_step(gradient, variable, learning_rate)
        return variable.assign(before + (tf.convert_to_tensor(variable) - before) * self.factor[:, None])


HEIGHT, WIDTH = 128_187, 512  # mUSE-small's table after vocabulary extension for el/hi/vi


def ms_per_step(optimizer, table: keras.Variable, grads: list[tf.IndexedSlices]) -> float:
    step = tf.function(lambda g: optimizer.apply([g], [table]))
    step(grads[0])  # trace, build the slots
    start = time.perf_counter()
    for g in grads[1:]:
        step(g)
    _ = table.numpy()[0, 0]
    return 1000 * (time.perf_counter() - start) / (len(grads) - 1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows-read", type=int, default=600, help="distinct rows a batch reads")
    p.add_argument(
        "--chosen", type=int, default=4244, help="rows RowSubsetAdam may move (fold 0 of xquad_muse_rows: 4244)"
    )
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    chosen = np.sort(rng.choice(HEIGHT, args.chosen, replace=False))
    grads = []
    for _ in range(args.steps + 1):
        ids = np.concatenate(
            [rng.choice(chosen, args.rows_read // 2, replace=False), rng.choice(HEIGHT, args.rows_read // 2)]
        )
        grads.append(
            tf.IndexedSlices(
                tf.constant(rng.normal(size=(len(ids), WIDTH)).astype("float32")),
                tf.constant(ids.astype("int32")),
                tf.constant([HEIGHT, WIDTH]),
            )
        )
    results = {}
    for name, make in (
        ("Adam (whole table)", lambda path: keras.optimizers.Adam(1e-3)),
        ("SparseAdam dense (new rows x20)", lambda p: SparseAdam(1e-3, "dense", row_scales={p: (128_010, 20.0)})),
        ("SparseAdam lazy (new rows x20)", lambda p: SparseAdam(1e-3, "lazy", row_scales={p: (128_010, 20.0)})),
        ("RowSubsetAdam (chosen rows)", lambda path: RowSubsetAdam(1e-3, path, chosen.tolist())),
        ("Keras Adam, rows scaled (before)", lambda path: ScaledKerasAdam(1e-3, chosen, 0.01)),
        (
            "RowSubsetAdam, rest at 0.01",
            lambda path: RowSubsetAdam(1e-3, path, chosen.tolist(), sparse_rows="dense", rest_scale=0.01),
        ),
        (
            "RowSubsetAdam, rest 0.01 lazy",
            lambda path: RowSubsetAdam(
                1e-3, path, chosen.tolist(), sparse_rows="dense", rest_scale=0.01, rest_rows="lazy"
            ),
        ),
    ):
        table = keras.Variable(np.zeros((HEIGHT, WIDTH), "float32"), name="token_embedding")
        results[name] = ms_per_step(make(table.path), table, grads)
    base = results["RowSubsetAdam (chosen rows)"]
    for name, ms in results.items():
        print(f"{name:32s} {ms:8.2f} ms/step  {ms / base:6.1f}x RowSubsetAdam")
    before, now = results["Keras Adam, rows scaled (before)"], results["RowSubsetAdam, rest at 0.01"]
    print(f"rest at 0.01: fused {now:.1f} ms against {before:.1f} ms as written before: {before / now:.2f}x faster")
    lazy = results["RowSubsetAdam, rest 0.01 lazy"]
    print(
        f"rest at 0.01, its rows lazy (rest_rows): {lazy:.1f} ms against {now:.1f} ms dense: {now / lazy:.1f}x faster"
    )


if __name__ == "__main__":
    main()
