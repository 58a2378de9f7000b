"""Negative mining speed on the XQuAD-R training split, side by side in one run.

    python benchmarks/bench_mining.py --data-dir ../shared/data/xquad-r [--encoder minilm] [--bm25-queries 500]

1. Online mining, one refresh: relkt (batched encoding of all questions and candidates, one matrix
   product per chunk, vectorized selection) vs the per-example approach (encode each question alone,
   score it against the candidates, pick negatives in a Python loop). Same encoder, same candidates.
2. BM25 negatives: bm25s vs rank_bm25 (BM25Okapi) over all training candidates (every language),
   top-30 per question; rank_bm25 is timed on the first N questions and extrapolated.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import tensorflow as tf
from rank_bm25 import BM25Okapi

from relkt.data import LareqaPool
from relkt.encoders import build_encoder
from relkt.metrics import gold_matrix
from relkt.mining import Bm25Index, bm25_tokenize, mine_negatives


def per_example_mining(encoder, questions, c_emb, positives, gold, margin):
    """One compiled forward call per question (the fastest single-text path), then a Python loop."""

    forward = tf.function(
        lambda s: encoder(encoder._preprocess(s), training=False), input_signature=[tf.TensorSpec([None], tf.string)]
    )
    negatives, encode_seconds = [], 0.0
    for i, q in enumerate(questions):
        t0 = time.perf_counter()
        a = forward(tf.constant([q])).numpy()[0]
        encode_seconds += time.perf_counter() - t0
        d = 1.0 - c_emb @ a
        d_pos = d[positives[i]]
        hard = [j for j in np.argsort(d) if d[j] < d_pos and j not in gold[i]][:1]
        semi = [j for j in np.argsort(d) if d_pos < d[j] < d_pos + margin and j not in gold[i]][:1]
        negatives.append((hard + [-1])[:1] + (semi + [-1])[:1])
    return np.array(negatives), encode_seconds


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default=None)
    p.add_argument("--encoder", default="minilm")
    p.add_argument("--bm25-queries", type=int, default=500, help="questions timed with rank_bm25 (extrapolated)")
    p.add_argument("--skip-bm25", action="store_true")
    p.add_argument("--skip-online", action="store_true", help="BM25 alone (e.g. on all of SQuAD train)")
    args = p.parse_args(argv)

    train = LareqaPool.load(args.data_dir, split="train")
    if not args.skip_online:
        online(args, train)
    if not args.skip_bm25:
        bm25(args, train)


def online(args, train) -> None:
    """Part 1: one online mining refresh, relkt's against per-example."""
    en = train.subset(question_langs=["en"], candidate_langs=["en"])
    encoder = build_encoder(args.encoder, trainable=False)
    questions, candidates = en.question_texts(), en.candidate_texts()
    positives = np.array([g[0] for g in en.gold])
    gold = gold_matrix(en.gold)
    print(
        f"online mining: {len(questions)} English training questions x {len(candidates)} candidates, "
        f"encoder {args.encoder}"
    )
    encoder.encode(questions[:8])  # warm up tracing

    t0 = time.perf_counter()
    q_emb = encoder.encode(questions, batch_size=128)
    c_emb = encoder.encode(candidates, batch_size=128)
    t_enc = time.perf_counter() - t0
    fast = mine_negatives(q_emb, c_emb, positives, gold, margin=0.24, pick="hardest")
    t_fast = time.perf_counter() - t0

    t0 = time.perf_counter()
    c_emb2 = encoder.encode(candidates, batch_size=128)
    t_cand = time.perf_counter() - t0
    slow, t_q_single = per_example_mining(encoder, questions, c_emb2, positives, [set(g) for g in en.gold], 0.24)
    t_slow = time.perf_counter() - t0
    t_slow_select = t_slow - t_cand - t_q_single
    agree = float((fast.negatives == slow).mean())

    print(f"{'method':<44}{'total s':>10}{'encode s':>10}{'select s':>10}")
    print(f"{'relkt: batched encode + vectorized mining':<44}{t_fast:>10.2f}{t_enc:>10.2f}{t_fast - t_enc:>10.3f}")
    print(
        f"{'per-example: encode, score, loop per question':<44}"
        f"{t_slow:>10.2f}{t_cand + t_q_single:>10.2f}{t_slow_select:>10.3f}"
    )
    print(
        f"speed-up: {t_slow / t_fast:.2f}x overall, {t_slow_select / max(t_fast - t_enc, 1e-9):.0f}x on selection; "
        f"same negatives for {100 * agree:.1f}% of slots"
    )


def bm25(args, train) -> None:
    """Part 2: BM25 top-30 over every training candidate, bm25s's loop and its compiled retrieval against rank_bm25."""
    docs = train.candidate_texts()
    queries = train.question_texts()
    print(f"\nBM25: {len(queries)} training questions (all languages) x {len(docs)} candidates, top 30")
    t0 = time.perf_counter()
    index = Bm25Index(docs)
    t_index = time.perf_counter() - t0
    t0 = time.perf_counter()
    top_fast, scores_compiled = index.scored_top(queries, 30, compiled=True)
    t_compiled = time.perf_counter() - t0
    t0 = time.perf_counter()
    top_loop, scores_loop = index.scored_top(queries, 30, compiled=False)
    t_loop = time.perf_counter() - t0
    t_bm25s = t_index + t_compiled

    n = min(args.bm25_queries, len(queries))
    t0 = time.perf_counter()
    okapi = BM25Okapi([bm25_tokenize(d) or ["\x00"] for d in docs])
    top_slow = np.array([np.argsort(-okapi.get_scores(bm25_tokenize(q)), kind="stable")[:30] for q in queries[:n]])
    t_rank = (time.perf_counter() - t0) * len(queries) / n
    overlap = np.mean([len(set(a) & set(b)) / 30 for a, b in zip(top_fast[:n], top_slow)])
    print(f"{'method':<44}{'seconds':>10}")
    print(f"{'bm25s index':<44}{t_index:>10.2f}")
    print(f"{'bm25s retrieve all, numpy loop (one core)':<44}{t_loop:>10.2f}")
    print(f"{'bm25s retrieve all, compiled (every core)':<44}{t_compiled:>10.2f}")
    print(
        f"compiled: {t_loop / t_compiled:.1f}x the loop (its compiling included), same score at every rank: "
        f"{bool(np.allclose(scores_compiled, scores_loop, rtol=1e-6))}"
    )
    print(f"{'bm25s (index + compiled retrieve)':<44}{t_bm25s:>10.2f}")
    print(f"{f'rank_bm25 (x{len(queries) / n:.0f} from {n} questions)':<44}{t_rank:>10.2f}")
    print(
        f"speed-up: {t_rank / t_bm25s:.0f}x; top-30 overlap {100 * overlap:.1f}% (rank_bm25 floors negative IDF at "
        f"0.25 x mean IDF, bm25s 'robertson' does not)"
    )


if __name__ == "__main__":
    main()
