"""Student steps over batches of like length (`distill.sort_window`) against random batches (`muse`, 2 cores).

    python benchmarks/bench_sort_window.py [--pairs ../shared/data/parallel] [--langs el hi vi] [--steps 60]
    # about 4 min on 2 cores

Why: a batch pads to its longest text, and parallel text has a long tail (../shared/data/parallel's el, hi, vi: a
median of 34 characters, 1% over 300), so a random batch of 32 holds about 4x the characters it pads to. Both
variants run Keras `fit` over the first `--steps` batches of one epoch's order (`StudentTrainer.epoch_order`'s two
ways: the seeded permutation, and it regrouped by `length_sorted`), on the pair files' own sentences (the question
side the student encodes), alternating; a trainable token table (lazy Adam), the recipe's loss (beta = 1), batch 32.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from fit_timing import best_step_seconds, print_steps


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", default="../shared/data/parallel", help="a folder of {lang}.tsv pair files")
    p.add_argument("--langs", nargs="+", default=["el", "hi", "vi"])
    p.add_argument("--steps", type=int, default=60, help="batches per timed pass")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--window", type=int, default=100, help="distill.sort_window: batches sorted together")
    p.add_argument("--repeats", type=int, default=2, help="timed passes of each variant, alternating")
    args = p.parse_args(argv)

    from relkt.data.parallel_corpus import read_pairs  # deferred: heavy (TensorFlow)
    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow)
    from relkt.losses import DistillationLoss  # deferred: heavy (TensorFlow)
    from relkt.stages.pair_model import PairModel  # deferred: heavy (TensorFlow)
    from relkt.stages.sparse_adam import SparseAdam  # deferred: heavy (TensorFlow)
    from relkt.training.stage import length_sorted, text_dataset  # deferred: heavy (TensorFlow)

    texts = [x for lang in args.langs for x in read_pairs(Path(args.pairs), lang).xx]
    encoder = build_encoder("muse", trainable=True, freeze_token_embedding=False)
    lengths = encoder.length_keys(texts)
    rng = np.random.default_rng([0, 1])
    permutation = rng.permutation(len(texts))
    orders = {
        "random batches": permutation,
        f"sort_window {args.window}": length_sorted(permutation, lengths, args.batch, args.window, rng),
    }
    n = args.steps * args.batch
    model = PairModel(encoder, ["q"])
    model.compile(optimizer=SparseAdam(1e-5, "lazy"), loss=DistillationLoss(objective="q", weights={"beta": 1}))
    targets = np.random.default_rng(0).standard_normal((len(texts), 2, encoder.dim)).astype(np.float32)
    variants, padded = {}, {}
    for name, order in orders.items():
        take = order[:n]
        variants[name] = text_dataset({"q": [texts[i] for i in take]}, targets[take], encoder, args.batch)
        padded[name] = sum(
            lengths[take[k : k + args.batch]].max() * len(take[k : k + args.batch]) for k in range(0, n, args.batch)
        )
    best = best_step_seconds(model, variants, args.steps, args.repeats)
    real = {name: int(lengths[order[:n]].sum()) for name, order in orders.items()}
    print(
        f"student step, muse, batch {args.batch}, the first {args.steps} batches of an epoch over {len(texts):,} "
        f"pairs ({' '.join(args.langs)}); best of {args.repeats} passes:"
    )
    print_steps(best, {name: f"pieces padded / real {padded[name] / real[name]:.2f}" for name in best})


if __name__ == "__main__":
    main()
