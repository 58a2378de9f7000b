"""Where a training step's time goes: `muse` at the paper's batches (teacher 16 triplets, student 8 pairs), token table
frozen and trainable (lazy Adam), each part timed alone on the same batches in one run.

    python benchmarks/bench_step_profile.py [--steps 30]               # about 3 min on 2 cores
    python benchmarks/bench_step_profile.py --threads                  # also: each thread setting in a fresh process

Parts: the input pipeline alone (tokenization in tf.data, batching, the student's target gather), tokenization alone,
the forward pass, forward + backward, a whole compiled step (forward, backward, Adam) on batches already in memory,
and Keras `fit` over `relkt.training.stage.text_dataset` (what training runs: every batch tokenized before the first
step). `fit` less the compiled step is what the pipeline, Keras and Python add. Variants: forward + backward with XLA
(`jit_compile`, shapes seen before: XLA compiles once per padded length), and `fit` over batches tokenized in tf.data
while the steps run (relkt before issue #43). Texts as in bench_scale.py (mUSE's own whole words, 12 to a
question, 30 to a sentence). No GPU is used or needed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np
import tensorflow as tf
from bench_scale import PAPER, TextMaker, student_targets


def timed(fn, batches, repeat: int = 1) -> float:
    """Seconds per call of fn over `batches`, after one warm-up call on each distinct batch (tracing)."""
    for b in batches:
        fn(*b)
    t0 = time.perf_counter()
    for _ in range(repeat):
        for b in batches:
            out = fn(*b)
    np.asarray(tf.nest.flatten(out)[0])  # wait for the last result
    return (time.perf_counter() - t0) / (repeat * len(batches))


def profile(stage: str, steps: int, token_table: str = "frozen", seed: int = 0) -> dict:
    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow)
    from relkt.losses import DistillationLoss, TripletLoss  # deferred: heavy (Keras)
    from relkt.stages.pair_model import PairModel  # deferred: heavy (TensorFlow)
    from relkt.stages.sparse_adam import SparseAdam  # deferred: heavy (Keras)
    from relkt.stages.triplet_model import TripletModel  # deferred: heavy (TensorFlow)
    from relkt.training.stage import text_dataset  # deferred: heavy (TensorFlow)

    encoder = build_encoder("muse", trainable=True, freeze_token_embedding=token_table == "frozen")
    maker = TextMaker(encoder.tokenizer.get_vocabulary(), seed=seed)
    n = steps * (PAPER["teacher_batch"] if stage == "teacher" else PAPER["student_batch"])
    batch = PAPER["teacher_batch"] if stage == "teacher" else PAPER["student_batch"]
    table = None
    if stage == "teacher":
        texts = {"anchor": maker.texts(n, 12), "positive": maker.texts(n, 30), "negative": maker.texts(n, 30)}
        targets = np.zeros(n, np.float32)
        model, loss = TripletModel(encoder), TripletLoss(0.24, "cosine")
    else:
        texts = {"q": maker.texts(n, 12), "d": maker.texts(n, 30)}
        table, targets = student_targets(maker.rng, n, encoder.dim)
        model = PairModel(encoder)
        loss = DistillationLoss(gamma=1000.0, weights={"beta": 0.001, "lam": 1.0, "omega": 0.01}, distance="squared_l2")
    model.compile(optimizer=SparseAdam(1e-5, "lazy"), loss=loss)  # a frozen table: no difference
    ds = text_dataset(texts, targets, encoder, batch, target_table=table)
    out: dict = {"stage": stage, "table": token_table, "batch": batch, "steps": steps}

    t0 = time.perf_counter()
    batches = [(x, y) for x, y in ds]  # the pipeline alone, drained as fast as it goes
    out["pipeline"] = (time.perf_counter() - t0) / len(batches)
    raw = tf.data.Dataset.from_tensor_slices(texts).batch(batch)
    tokenize = tf.function(lambda f: {k: encoder.preprocess(v) for k, v in f.items()})
    out["tokenize"] = timed(tokenize, [(f,) for f in raw])

    forward = tf.function(lambda x: model(x, training=True))
    out["forward"] = timed(forward, [(x,) for x, _ in batches])

    def grads(x, y):
        with tf.GradientTape() as tape:
            value = model.compute_loss(x, y, model(x, training=True))
        return tape.gradient(value, model.trainable_variables)

    out["forward+backward"] = timed(tf.function(grads), batches)
    try:
        out["forward+backward, XLA"] = timed(tf.function(grads, jit_compile=True), batches)
    except Exception as e:  # noqa: BLE001 - an op XLA cannot compile on CPU is a finding, not a crash
        out["forward+backward, XLA"] = f"failed: {type(e).__name__}: {str(e).splitlines()[0][:200]}"

    def step(x, y):
        g = grads(x, y)
        model.optimizer.apply(g, model.trainable_variables)
        return g[0]

    out["compiled step"] = timed(tf.function(step), batches)

    model.fit(ds.take(1), epochs=1, verbose=0)  # trace Keras's own step
    t0 = time.perf_counter()
    model.fit(ds, epochs=1, verbose=0)
    out["fit"] = (time.perf_counter() - t0) / len(batches)  # text_dataset: every batch tokenized before the first
    # relkt before issue #43: each batch tokenized in tf.data (parallel map, autotuned) while the steps run
    variable = None if table is None else tf.Variable(table, trainable=False)
    live = (
        tf.data.Dataset.from_tensor_slices((texts, targets))
        .batch(batch)
        .map(
            lambda f, y: (
                {k: encoder.preprocess(v) for k, v in f.items()},
                y if variable is None else tf.gather(variable, y),
            ),
            num_parallel_calls=tf.data.AUTOTUNE,
        )
        .prefetch(tf.data.AUTOTUNE)
    )
    t0 = time.perf_counter()
    model.fit(live, epochs=1, verbose=0)
    out["fit, tokenizing while stepping"] = (time.perf_counter() - t0) / len(batches)
    return out


def report(result: dict) -> None:
    fit = result["fit"]
    print(
        f"{result['stage']} step (batch {result['batch']}, {result['steps']} batches), token table {result['table']}:"
    )
    for key, value in result.items():
        if key in ("stage", "table", "batch", "steps", "threads"):
            continue
        if isinstance(value, str):
            print(f"  {key:28s} {value}")
        else:
            print(f"  {key:28s} {1000 * value:7.1f} ms  ({value / fit:5.2f} of fit)")
    print(f"  {'fit less the compiled step':28s} {1000 * (fit - result['compiled step']):7.1f} ms")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=30, help="batches a part is timed over")
    p.add_argument("--threads", action="store_true", help="also time fit under each thread setting (fresh processes)")
    p.add_argument("--stage", default="teacher,student")
    p.add_argument("--table", default="frozen,lazy", help="token table: frozen, lazy (trainable, lazy Adam) or both")
    p.add_argument("--intra-inter", default=None, help=argparse.SUPPRESS)  # a worker's thread setting
    p.add_argument("--json", default=None, help="write every figure here")
    args = p.parse_args(argv)
    if args.intra_inter:  # a worker: set the threads before TensorFlow starts, time fit only
        import tensorflow as tf  # deferred: the thread settings must precede any op

        intra, inter = (int(x) for x in args.intra_inter.split(","))
        tf.config.threading.set_intra_op_parallelism_threads(intra)
        tf.config.threading.set_inter_op_parallelism_threads(inter)
        print(json.dumps({s: profile(s, args.steps)["fit"] for s in args.stage.split(",")}))
        return
    results = [profile(s, args.steps, table) for s in args.stage.split(",") for table in args.table.split(",")]
    for r in results:
        report(r)
    if args.threads:
        print("fit under thread settings (intra-op, inter-op; 0 = TensorFlow's choice), each in a fresh process:")
        settings = {}
        for setting in ("0,0", "2,1", "1,2", "1,1", "2,2"):
            proc = subprocess.run(
                [sys.executable, __file__, "--steps", str(args.steps), "--stage", args.stage, "--intra-inter", setting],
                capture_output=True,
                text=True,
                env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
                check=True,
            )
            settings[setting] = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"  {setting}: " + ", ".join(f"{s} {1000 * v:.1f} ms" for s, v in settings[setting].items()))
        results.append({"threads": settings})
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)


if __name__ == "__main__":
    main()
