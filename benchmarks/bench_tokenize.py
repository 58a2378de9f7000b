"""Tokenize the XQuAD-R pool: MiniLM's tokenizer vs the extended ones (characters, learned pieces).

    python benchmarks/bench_tokenize.py --data-dir ../shared/data/xquad-r [--pieces 1000] [--repeats 3]

Vocabulary extension splits spaceless scripts in-graph with a regex; with learned pieces that regex
is an alternation of ~1000 strings. This prints, side by side, each tokenizer's throughput over every
question and candidate of the pool (a traced function, warm, best of `--repeats`) and Thai pieces per
text, so the cost of the split is measured, not guessed. The extensions are built from the train
articles only, as relkt.train_student builds them.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import tensorflow as tf

from relkt.data import LareqaPool
from relkt.encoders import build_encoder
from relkt.encoders.vocab_extension import extend_vocabulary


def timed(tokenizer, texts: list[str], repeats: int, batch_size: int = 512) -> tuple[float, np.ndarray]:
    """Best wall time over `repeats` passes, and pieces per text."""

    fn = tf.function(lambda s: tokenizer(s), input_signature=[tf.TensorSpec([None], tf.string)])
    batches = [tf.constant(texts[lo : lo + batch_size]) for lo in range(0, len(texts), batch_size)]
    fn(batches[0])  # trace once
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        lengths = [fn(b).row_lengths().numpy() for b in batches]
        best = min(best, time.perf_counter() - start)
    return best, np.concatenate(lengths)


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default=None)
    p.add_argument("--pieces", type=int, default=1000, help="learned Thai pieces for the third tokenizer")
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args(argv)

    pool = LareqaPool.load(args.data_dir)
    train = LareqaPool.load(args.data_dir, split="train")
    train_texts = sorted(set(train.question_texts()) | set(train.candidate_texts(False)))
    texts = [q.text for q in pool.questions] + list(pool.candidate_texts(False))
    langs = np.array([q.lang for q in pool.questions] + [c.lang for c in pool.candidates])
    base = build_encoder("minilm", trainable=False)
    tokenizers = {
        "MiniLM (no split)": base.tokenizer,
        "+ characters": extend_vocabulary(base, train_texts)[0].tokenizer,
        f"+ {args.pieces} pieces": extend_vocabulary(base, train_texts, pieces=args.pieces)[0].tokenizer,
    }
    print(f"{len(texts)} texts ({len(set(langs))} languages), best of {args.repeats}")
    print("| tokenizer | seconds | texts/s | Thai pieces per text (median) | Thai texts over 126 pieces |")
    print("|---|---|---|---|---|")
    for name, tok in tokenizers.items():
        seconds, lengths = timed(tok, texts, args.repeats)
        thai = lengths[langs == "th"]
        print(
            f"| {name} | {seconds:.2f} | {len(texts) / seconds:,.0f} | {np.median(thai):.0f} | "
            f"{100 * np.mean(thai > 126):.1f}% |"
        )


if __name__ == "__main__":
    main()
