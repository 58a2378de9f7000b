"""Choose the language-aware ranking on a whole pool: every setting of the grid ranked in its own pass vs one pass.

    python benchmarks/bench_rank_adjust.py --data-dir ../shared/data/xquad-r [--langs ar,de,...] [--dim 512]

`relkt evaluate --rank-adjust auto` ranks the pool under each of the grid's 20 settings (relkt.metrics.
language_aware_ranking.GRID) to choose one. Ranked setting by setting, each pass recomputes the score matrix, the
candidates' and the questions' neighbourhoods; `settings_ap` computes each block of scores and its neighbourhoods once
and ranks it under every setting. Both on the same random embeddings with the pool's real gold and languages; they
must give the same AP for every question. Prints both times and the ratio.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from relkt.data import LareqaPool
from relkt.metrics.language_aware_ranking import GRID, setting_ap, settings_ap


def main(argv=None) -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--data-dir", required=True)
    p.add_argument("--langs", default=None, help="comma-separated languages of the pool (default: every one)")
    p.add_argument("--dim", type=int, default=512, help="embedding size (mUSE: 512)")
    args = p.parse_args(argv)

    pool = LareqaPool.load(args.data_dir, langs=args.langs.split(",") if args.langs else None)
    rng = np.random.default_rng(0)
    q = rng.standard_normal((len(pool.questions), args.dim)).astype(np.float32)
    c = rng.standard_normal((len(pool.candidates), args.dim)).astype(np.float32)
    q /= np.linalg.norm(q, axis=1, keepdims=True)
    c /= np.linalg.norm(c, axis=1, keepdims=True)
    langs = np.asarray(pool.candidate_langs)
    print(f"pool: {len(q)} questions x {len(c)} candidates in {len(set(langs))} languages; {len(GRID)} settings")

    setting_ap(q[:64], c, pool.gold[:64], langs, GRID[0])  # numba's kernel and BLAS warmed outside the timing
    t0 = time.perf_counter()
    alone = {s.name: setting_ap(q, c, pool.gold, langs, s) for s in GRID}
    t_alone = time.perf_counter() - t0
    t0 = time.perf_counter()
    together = settings_ap(q, c, pool.gold, langs, GRID)
    t_together = time.perf_counter() - t0
    same = all(np.allclose(alone[s.name], together[s.name], rtol=1e-6, equal_nan=True) for s in GRID)

    print(f"{'method':<36}{'seconds':>10}")
    print(f"{'each setting in its own pass':<36}{t_alone:>10.2f}")
    print(f"{'one pass for the grid':<36}{t_together:>10.2f}")
    print(f"speed-up: {t_alone / t_together:.1f}x; same AP for every question and setting: {same}")


if __name__ == "__main__":
    main()
