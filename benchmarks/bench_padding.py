"""Three ways a student step pads less, side by side: random batches, the same batches encoded in runs of like
length (`distill.length_chunks`), and batches of like length (`distill.sort_window`) (`muse`, 2 cores).

    python benchmarks/bench_padding.py [--pairs ../shared/data/parallel] [--langs el hi vi] [--steps 60]
    # about 5 min on 2 cores

Why: a batch pads to its longest text, and parallel text has a long tail (../shared/data/parallel's el, hi, vi: a
median of 34 characters, 1% over 300), so a random batch of 32 pads to about 4x its pieces. `length_chunks` keeps
the batch (the same rows, loss and gradients) and encodes it in runs, each cut to its own longest; `sort_window`
changes which rows share a batch (and so what the student learns: docs/results/scale.md). Each variant runs Keras
`fit` over the first `--steps` batches of one epoch's order (`StudentTrainer.epoch_order`'s seeded permutation, or
it regrouped by `length_sorted`) on the pair files' own sentences (the question side the student encodes),
alternating; a trainable token table (lazy Adam), the recipe's loss (beta = 1), batch 32.
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
    p.add_argument("--chunks", type=int, default=4, help="distill.length_chunks: runs a batch is encoded in")
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
    lengths = encoder.length_keys(texts) + 2  # <s> and </s>
    rng = np.random.default_rng([0, 1])
    permutation = rng.permutation(len(texts))
    sorted_order = length_sorted(permutation, lengths, args.batch, args.window, rng)
    n = args.steps * args.batch
    targets = np.random.default_rng(0).standard_normal((len(texts), 2, encoder.dim)).astype(np.float32)

    def model(chunks: int):
        m = PairModel(encoder, ["q"], length_chunks=chunks)
        m.compile(optimizer=SparseAdam(1e-5, "lazy"), loss=DistillationLoss(objective="q", weights={"beta": 1}))
        return m

    def batches(order):
        take = order[:n]
        return text_dataset({"q": [texts[i] for i in take]}, targets[take], encoder, args.batch)

    def padded(order, chunks=1):
        """Pieces a step encodes, over the real pieces: each batch's runs of like length, each at its longest."""
        total = 0
        for k in range(0, n, args.batch):
            rows = np.sort(lengths[order[k : k + args.batch]])
            bounds = [i * len(rows) // chunks for i in range(chunks + 1)]
            total += sum(rows[lo:hi].max() * (hi - lo) for lo, hi in zip(bounds, bounds[1:]) if hi > lo)
        return total / lengths[order[:n]].sum()

    variants = {
        "random batches": (model(1), batches(permutation)),
        f"length_chunks {args.chunks}": (model(args.chunks), batches(permutation)),
        f"sort_window {args.window}": (model(1), batches(sorted_order)),
    }
    notes = {
        "random batches": padded(permutation),
        f"length_chunks {args.chunks}": padded(permutation, args.chunks),
        f"sort_window {args.window}": padded(sorted_order),
    }
    best = best_step_seconds(None, variants, args.steps, args.repeats)
    print(
        f"student step, muse, batch {args.batch}, the first {args.steps} batches of an epoch over {len(texts):,} "
        f"pairs ({' '.join(args.langs)}); best of {args.repeats} passes (speed against random batches):"
    )
    print_steps(best, {name: f"pieces encoded / real {value:.2f}" for name, value in notes.items()})


if __name__ == "__main__":
    main()
