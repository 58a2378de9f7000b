"""A student step that encodes only the documents a batch has, against one that encodes every row's (`muse`, 2 cores).

    python benchmarks/bench_student_documents.py [--steps 40] [--with-documents 0.087]   # about 4 min on 2 cores

Why: a student trained on general parallel text beside QA pairs (`data.corpus_dir`) sees mostly pairs without an
answer document; the loss reads no document term there, yet each batch's S(d) pass ran over every row, padded to
the batch's longest document. With `--with-documents 0.087` (the share in `xquad_muse_best`: 2,436 QA examples
among 28,024) almost every batch of 32 holds one. Both variants run Keras `fit` on the same batches (`text_dataset`
with and without `present`), alternating, on a trainable token table (lazy Adam); the loss is the recipe's (beta =
lambda = omega = 1). Texts as in bench_scale.py: questions of 12 words, pair sentences of 20, documents of 30.
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_scale import TextMaker
from fit_timing import best_step_seconds, print_steps


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=40, help="batches per timed pass")
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--with-documents", type=float, default=0.087, help="share of examples that have a document")
    p.add_argument("--repeats", type=int, default=2, help="timed passes of each variant, alternating")
    args = p.parse_args(argv)

    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow)
    from relkt.losses import DistillationLoss  # deferred: heavy (TensorFlow)
    from relkt.stages.pair_model import PairModel  # deferred: heavy (TensorFlow)
    from relkt.stages.sparse_adam import SparseAdam  # deferred: heavy (TensorFlow)
    from relkt.training.stage import text_dataset  # deferred: heavy (TensorFlow)

    encoder = build_encoder("muse", trainable=True, freeze_token_embedding=False)
    maker = TextMaker(encoder.tokenizer.get_vocabulary(), seed=0)
    n = args.steps * args.batch
    has = maker.rng.random(n) < args.with_documents
    questions = [q if h else s for q, s, h in zip(maker.texts(n, 12), maker.texts(n, 20), has)]
    documents = [d if h else "" for d, h in zip(maker.texts(n, 30), has)]
    targets = maker.rng.standard_normal((n, 2, encoder.dim)).astype(np.float32)
    targets[~has, 1] = 0.0  # no document: a zero T(d), as the student trainer caches it
    texts = {"q": questions, "d": documents}
    model = PairModel(encoder, ["q", "d"])
    model.compile(optimizer=SparseAdam(1e-5, "lazy"), loss=DistillationLoss(weights={"beta": 1, "lam": 1, "omega": 1}))
    variants = {
        "every row's document": text_dataset(texts, targets, encoder, args.batch),
        "only the documents there are": text_dataset(texts, targets, encoder, args.batch, present={"d": has}),
    }
    best = best_step_seconds(model, variants, args.steps, args.repeats)
    batches_with = np.mean([has[i : i + args.batch].any() for i in range(0, n, args.batch)])
    print(
        f"student step, muse, batch {args.batch}, {args.steps} batches, {args.with_documents:.1%} of examples with a "
        f"document ({batches_with:.0%} of batches hold one); best of {args.repeats} passes:"
    )
    print_steps(best)


if __name__ == "__main__":
    main()
