"""Score the full XQuAD-R pool from embeddings: relkt's vectorized gold ranks vs the papers' loop.

    python benchmarks/bench_scoring.py --data-dir ../shared/data/xquad-r [--dim 512] [--loop-questions N]

The baseline is what the CL-ReLKT/LAReQA scripts did per question: argsort all candidate scores,
then list.index() each gold. Both run on the same random embeddings with the real gold structure
and must give the same mAP. Prints wall time, peak extra memory of the vectorized pass, the ratio, and relkt's time
as a multiple of the bare score-matrix product of the same embeddings (the physical limit).
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

from relkt.data import LareqaPool
from relkt.metrics.ranking import BLOCK_ELEMENTS, gold_ranks, per_question_metrics


def loop_map(q: np.ndarray, c: np.ndarray, gold: list[np.ndarray]) -> float:
    aps = []
    for i in range(len(q)):
        order = list(np.argsort(-(c @ q[i]), kind="stable"))
        positions = sorted(order.index(j) + 1 for j in gold[i])
        aps.append(np.mean([(k + 1) / p for k, p in enumerate(positions)]))
    return float(np.mean(aps))


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", default=None)
    p.add_argument("--dim", type=int, default=512, help="embedding size (mUSE: 512, MiniLM: 384)")
    p.add_argument(
        "--loop-questions",
        type=int,
        default=0,
        help="time the loop on the first N questions only and extrapolate (0 = all)",
    )
    args = p.parse_args(argv)

    pool = LareqaPool.load(args.data_dir)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((len(pool.questions), args.dim)).astype(np.float32)
    c = rng.standard_normal((len(pool.candidates), args.dim)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    print(f"pool: {len(q)} questions x {len(c)} candidates, {args.dim}-d embeddings")

    gold_ranks(q[:256], c, pool.gold[:256])  # warm the BLAS threads and caches outside the timing
    tracemalloc.start()
    t0 = time.perf_counter()
    fast = float(np.mean(per_question_metrics(gold_ranks(q, c, pool.gold))["AP"]))
    t_fast = time.perf_counter() - t0
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()

    # The physical limit: the bare score matrix, in the same blocks of questions relkt scores in.
    chunk = max(1, BLOCK_ELEMENTS // len(c))
    t0 = time.perf_counter()
    for lo in range(0, len(q), chunk):
        q[lo : lo + chunk] @ c.T
    t_matmul = time.perf_counter() - t0

    n = args.loop_questions or len(q)
    t0 = time.perf_counter()
    slow = loop_map(q[:n], c, pool.gold[:n])
    t_slow = (time.perf_counter() - t0) * len(q) / n
    same = (
        np.isclose(fast, slow)
        if n == len(q)
        else np.isclose(np.mean(per_question_metrics(gold_ranks(q[:n], c, pool.gold[:n]))["AP"]), slow)
    )

    print(f"{'method':<34}{'seconds':>10}{'mAP':>10}")
    print(f"{'bare matrix product (q @ c.T)':<34}{t_matmul:>10.2f}{'':>10}")
    print(f"{'relkt vectorized (gold ranks)':<34}{t_fast:>10.2f}{fast:>10.5f}   peak extra memory {peak:.0f} MiB")
    label = "per-question loop" + ("" if n == len(q) else f" (x{len(q) / n:.0f} from {n})")
    print(f"{label:<34}{t_slow:>10.2f}{slow if n == len(q) else float('nan'):>10.5f}")
    print(
        f"speed-up: {t_slow / t_fast:.1f}x; same mAP: {bool(same)}; relkt's scoring = "
        f"{t_fast / t_matmul:.2f}x the bare "
        "matrix product over the same blocks (goal <= 1.3x)"
    )


if __name__ == "__main__":
    main()
