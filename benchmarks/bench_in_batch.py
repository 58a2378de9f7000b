"""The in-batch teacher's step with relkt's `muse` at batch 64, 256 and 1,024 questions: step time and peak memory,
the whole batch in one graph beside gradient caching (chunks of 64), each configuration in a fresh process.

    python benchmarks/bench_in_batch.py --data-dir ../shared/data/squad-train-full [--steps 3] [--batches 64,256,1024]
    python benchmarks/bench_in_batch.py --data-dir ../shared/data/squad-train-full --steps 2 --one 128,0,context

Each row: questions a step, chunk (0 = one graph), negatives a question (1, as the recipe), seconds a step (mean of
`--steps` after one traced step, the same sampled batch each time) and the process's peak resident memory
(ru_maxrss) over the whole run, which includes the model and the texts (the row `load only` measures those).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

import numpy as np
import tensorflow as tf

from relkt.data import LareqaPool
from relkt.encoders import build_encoder
from relkt.stages.in_batch_model import InBatchModel
from relkt.stages.sparse_adam import SparseAdam


def one(data_dir: str, batch: int, chunk: int, steps: int, context: bool = False) -> dict:
    """One configuration, in this process: (seconds a step, peak MiB); with `context`, every answer and negative
    also reads its paragraph (answer context learned)."""
    pool = LareqaPool.load(data_dir, langs=["en"])
    rng = np.random.default_rng(0)
    golds = [i for i, g in enumerate(pool.gold) if len(g)]
    cands = pool.candidate_texts()
    qs = pool.question_texts()
    encoder = build_encoder("muse", trainable=True)
    result = {"batch": batch, "chunk": chunk, "context": context}
    if batch:
        model = InBatchModel(encoder, batch_size=batch, negatives_per_row=1, chunk_size=chunk, answer_context=context)
        model.compile(optimizer=SparseAdam(1e-5, "lazy"))
        rows = rng.choice(golds, batch, replace=False)  # one batch, stepped on again: a fixed shape, traced once
        neg = rng.integers(0, len(cands), batch)
        x = {
            "anchor": encoder.preprocess(tf.constant([qs[i] for i in rows])),
            "positive": encoder.preprocess(tf.constant([cands[pool.gold[i][0]] for i in rows])),
            "negative_0": encoder.preprocess(tf.constant([cands[j] for j in neg])),
        }
        if context:
            paragraphs = [c.context for c in pool.candidates]
            x["positive_context"] = encoder.preprocess(tf.constant([paragraphs[pool.gold[i][0]] for i in rows]))
            x["negative_0_context"] = encoder.preprocess(tf.constant([paragraphs[j] for j in neg]))
        ids = np.stack([np.arange(batch), 10**6 + np.arange(batch), np.arange(batch)], 1).astype(np.int32)
        times = []
        for s in range(steps + 1):
            start = time.perf_counter()
            model.train_on_batch(x, ids)
            if s:
                times.append(time.perf_counter() - start)
        result["seconds_a_step"] = float(np.mean(times))
    result["peak_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data-dir", required=True)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--batches", default="64,256,1024")
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.one:
        batch, chunk, *context = a.one.split(",")
        print(json.dumps(one(a.data_dir, int(batch), int(chunk), a.steps, context == ["context"])))
        return
    rows = [(0, 0)]
    for b in (int(v) for v in a.batches.split(",")):
        rows += [(b, 0), (b, 64)] if b > 64 else [(b, 0)]
    print("| questions a step | chunk | s a step | peak MiB |\n|---|---|---|---|")
    for batch, chunk in rows:
        cmd = [sys.executable, __file__, "--data-dir", a.data_dir, "--steps", str(a.steps), "--one", f"{batch},{chunk}"]
        out = subprocess.run(cmd, capture_output=True, text=True)
        if out.returncode:
            print(f"| {batch or 'load only'} | {chunk} | failed: {out.stderr.strip().splitlines()[-1][:80]} | |")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        step = f"{r['seconds_a_step']:.2f}" if "seconds_a_step" in r else "-"
        print(f"| {batch or 'load only'} | {chunk or 'one graph'} | {step} | {r['peak_mib']:.0f} |", flush=True)


if __name__ == "__main__":
    main()
