"""What a run costs as it grows: encoding, scoring and training measured at 10x steps on synthetic data of real
shapes, with wall time, throughput and peak memory, and the paper's full run projected from the measured rates.

    python benchmarks/bench_scale.py --quick   # about 1 min on 2 cores: smaller sizes, the table, the projection
    python benchmarks/bench_scale.py --json scale.json --plot docs/results/scale.png  # every size (about 16 min)

Texts are words drawn (Zipf-like) from mUSE's own whole-word pieces, 12 to a question and 30 to a sentence: about what
XQuAD-R's English costs (13.1 and 33.9 pieces; its 11 languages average 23.3 and 60.0, so a multilingual pool encodes
at about half the rate). Scoring uses random unit embeddings with 11 gold answers a question
(LAReQA's shape). Training times `--steps` optimizer steps of `muse` at the paper's batch sizes (teacher 16 triplets,
student 8 pairs) over a data set of each size, token table trainable and frozen: a step costs the same whatever
the data's size, and what grows with it (the dataset's texts, the student's teacher targets) shows in memory.
Memory is the process's resident set, sampled every 20 ms: "peak" is the most it held during a measurement, "extra"
that less what it held before it (the inputs excluded). No GPU is used or needed.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import threading
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from relkt.metrics.ranking import BLOCK_ELEMENTS, gold_ranks, per_question_metrics, summarize

# The paper's run (CL-ReLKT Sec. 4, App. A.5): SQuAD v1.1 train's English questions, 3 BM25 + 5 online teacher
# epochs of 2 triplets an anchor (batch 16), 10 student epochs over 10 languages (batch 8).
PAPER = {
    "questions": 87_599,
    "teacher_epochs": 8,
    "online_epochs": 5,
    "triplets_per_anchor": 2,
    "teacher_batch": 16,
    "student_epochs": 10,
    "student_langs": 10,
    "student_batch": 8,
    # answer sentences per question, measured on ../shared/data/squad-train (2,868 sentences, 3,807 questions)
    "sentences_per_question": 2868 / 3807,
}
QUICK = {
    "encode": [1_000, 10_000],
    "score": [13_000, 130_000],
    "score_questions": 2_000,
    "targets": [10_000, 100_000],
    "train": [1_000, 10_000],
    "steps": 5,
}
FULL = {
    "encode": [10_000, 100_000, 1_000_000],
    "score": [13_000, 130_000, 1_300_000],
    "score_questions": 10_000,
    "targets": [10_000, 100_000, 876_000],
    "train": [1_000, 10_000, 100_000],
    "steps": 20,
}


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@contextmanager
def measured(record: dict):
    """Wall seconds and peak resident memory of the block into `record` (`seconds`, `peak_rss`, `extra_rss`)."""
    base, peak, done = rss_bytes(), [rss_bytes()], threading.Event()

    def sample():
        while not done.wait(0.02):
            peak[0] = max(peak[0], rss_bytes())

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    t0 = time.perf_counter()
    try:
        yield
    finally:
        record["seconds"] = time.perf_counter() - t0
        done.set()
        sampler.join()
        peak[0] = max(peak[0], rss_bytes())
        record["peak_rss"], record["extra_rss"] = peak[0], peak[0] - base


class TextMaker:
    """Synthetic texts of mUSE's cost: whole-word pieces of its own vocabulary, drawn with Zipf-like weights."""

    def __init__(self, vocabulary: list[str], seed: int = 0):
        words = [p[1:] for p in vocabulary if p.startswith("▁") and p[1:].isascii() and p[1:].isalpha() and len(p) > 2]
        self.words = np.array(words[:20_000])
        weights = 1.0 / np.arange(1, len(self.words) + 1)
        self.p = weights / weights.sum()
        self.rng = np.random.default_rng(seed)

    def texts(self, n: int, words: int) -> list[str]:
        picks = self.rng.choice(len(self.words), size=(n, words), p=self.p)
        return [" ".join(row) for row in self.words[picks]]


def bench_encode(encoder, maker: TextMaker, sizes: list[int], slice_size: int = 20_000) -> list[dict]:
    """Encode n texts (half questions, half sentences) in slices, into one preallocated array."""
    encoder.encode(maker.texts(256, 12), batch_size=128)  # trace outside the timing
    rows = []
    for n in sizes:
        record = {"texts": n}
        with measured(record):
            out = np.empty((n, encoder.dim), np.float32)
            for lo in range(0, n, slice_size):
                k = min(slice_size, n - lo)
                texts = maker.texts(k // 2, 12) + maker.texts(k - k // 2, 30)
                out[lo : lo + k] = encoder.encode(texts, batch_size=128)
        record["texts_per_s"] = n / record["seconds"]
        record["output_bytes"] = out.nbytes
        rows.append(record)
        print(
            f"  encode {n:>9,} texts: {record['seconds']:8.1f} s, {record['texts_per_s']:6.0f} texts/s, peak RSS "
            f"{record['peak_rss'] / 2**30:5.2f} GiB (output {out.nbytes / 2**30:.2f} GiB)",
            flush=True,
        )
        del out
    return rows


def unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    out = np.empty((n, dim), np.float32)
    for lo in range(0, n, 100_000):
        block = rng.standard_normal((min(100_000, n - lo), dim), dtype=np.float32)
        out[lo : lo + len(block)] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def bench_score(sizes: list[int], n_questions: int, dim: int = 512, golds: int = 11) -> list[dict]:
    """Gold ranks, per-question metrics and their means for `n_questions` against pools of each size, beside the bare
    score-matrix product over the same blocks (the physical limit)."""
    rng = np.random.default_rng(0)
    q = unit_rows(rng, n_questions, dim)
    rows = []
    for n in sizes:
        c = unit_rows(rng, n, dim)
        gold = np.stack([rng.choice(n, golds, replace=False) for _ in range(n_questions)])
        chunk = max(1, BLOCK_ELEMENTS // n)
        gold_ranks(q[:chunk], c, gold[:chunk])  # warm the BLAS threads outside the timing
        record = {"candidates": n, "questions": n_questions, "block_questions": chunk}
        with measured(record):
            metrics = summarize(per_question_metrics(gold_ranks(q, c, gold)))
        bare = {}
        with measured(bare):
            for lo in range(0, n_questions, chunk):
                q[lo : lo + chunk] @ c.T
        record.update(
            bare_seconds=bare["seconds"],
            ratio=record["seconds"] / bare["seconds"],
            mAP=metrics["mAP"],
            embeddings_bytes=q.nbytes + c.nbytes,
        )
        rows.append(record)
        print(
            f"  score {n_questions:,} questions x {n:>9,} candidates: {record['seconds']:7.2f} s (bare product "
            f"{bare['seconds']:.2f} s, {record['ratio']:.2f}x), extra memory {record['extra_rss'] / 2**20:6.0f} MiB "
            f"beside {record['embeddings_bytes'] / 2**30:.2f} GiB of embeddings",
            flush=True,
        )
        del c
    return rows


def student_targets(rng: np.random.Generator, n: int, dim: int) -> tuple[np.ndarray, np.ndarray]:
    """The student's teacher targets for n examples in `student_langs` languages: one row per distinct English
    question and document (plus the zero row), and each example's (question, document) rows."""
    sources = max(1, n // PAPER["student_langs"])
    table = rng.standard_normal((2 * sources + 1, dim), dtype=np.float32)
    source = rng.integers(0, sources, n)
    return table, np.stack([source, sources + source], axis=1).astype(np.int32)


def _targets_memory(n: int, layout: str, dim: int) -> int:
    """In a fresh process: the extra resident memory of a student data set's targets in `layout`."""
    import tensorflow as tf  # deferred: heavy, only in this worker process

    table, idx = student_targets(np.random.default_rng(0), n, dim)
    record: dict = {}
    with measured(record):
        if layout == "per example":
            ds = tf.data.Dataset.from_tensor_slices(table[idx]).batch(8)
        else:  # as relkt.training.stage.text_dataset holds them
            variable = tf.Variable(table, trainable=False)
            ds = tf.data.Dataset.from_tensor_slices(idx).batch(8).map(lambda y: tf.gather(variable, y))
        next(iter(ds))
    return record["extra_rss"]


def bench_student_targets(sizes: list[int], dim: int = 512) -> list[dict]:
    """Memory of the student's targets as its data set holds them: a (2, dim) copy an example (relkt before this
    benchmark) against the table of distinct targets and two row indices an example (relkt now), each measured in a
    fresh process (freed memory that a process keeps would hide the second)."""
    rows = []
    context = multiprocessing.get_context("spawn")
    for n in sizes:
        record = {"examples": n, "table_size": (2 * max(1, n // PAPER["student_langs"]) + 1) * dim * 4}
        for layout in ("per example", "table + rows"):
            with context.Pool(1) as worker:
                record[layout] = worker.apply(_targets_memory, (n, layout, dim))
        rows.append(record)
        print(
            f"  student targets, {n:>9,} examples: a copy an example {record['per example'] / 2**20:7.0f} MiB, "
            f"table + rows {record['table + rows'] / 2**20:6.0f} MiB (the table: {record['table_size'] / 2**20:.0f} "
            "MiB)",
            flush=True,
        )
    return rows


TABLES = ("trainable (lazy)", "trainable (dense)", "frozen")  # schedule.sparse_rows lazy / dense; the table frozen


def bench_train(maker: TextMaker, sizes: list[int], steps: int) -> list[dict]:
    """Optimizer steps of each stage, `muse`, token table trainable with lazy Adam (the rows a batch read), trainable
    with dense Adam (every row every step) and frozen, over data sets of each size."""
    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow)
    from relkt.losses import DistillationLoss, TripletLoss  # deferred: heavy (Keras)
    from relkt.stages.pair_model import PairModel  # deferred: heavy (TensorFlow)
    from relkt.stages.sparse_adam import SparseAdam  # deferred: heavy (Keras)
    from relkt.stages.triplet_model import TripletModel  # deferred: heavy (TensorFlow)
    from relkt.training.stage import text_dataset  # deferred: heavy (TensorFlow)

    rows = []
    for stage, batch in (("teacher", PAPER["teacher_batch"]), ("student", PAPER["student_batch"])):
        for token_table in TABLES:
            frozen, sparse_rows = token_table == "frozen", "dense" if "dense" in token_table else "lazy"
            encoder = build_encoder("muse", trainable=True, freeze_token_embedding=frozen)
            if stage == "teacher":
                model = TripletModel(encoder)
                model.compile(optimizer=SparseAdam(1e-5, sparse_rows), loss=TripletLoss(0.24, "cosine"))
            else:
                model = PairModel(encoder)
                model.compile(
                    optimizer=SparseAdam(1e-3, sparse_rows),
                    loss=DistillationLoss(
                        gamma=1000.0, weights={"beta": 0.001, "lam": 1.0, "omega": 0.01}, distance="squared_l2"
                    ),
                )
            for n in sizes:
                record = {"stage": stage, "token_table": token_table, "examples": n, "batch": batch, "steps": steps}
                with measured(record):
                    t0, table = time.perf_counter(), None
                    if stage == "teacher":
                        texts = {
                            "anchor": maker.texts(n, 12),
                            "positive": maker.texts(n, 30),
                            "negative": maker.texts(n, 30),
                        }
                        targets = np.zeros(n, np.float32)
                    else:  # as the student trains: a table of distinct targets (10 languages share an English
                        # question's and its document's), and each example's two rows in it
                        texts = {"q": maker.texts(n, 12), "d": maker.texts(n, 30)}
                        table, targets = student_targets(maker.rng, n, encoder.dim)
                    ds = text_dataset(texts, targets, encoder, batch, target_table=table)
                    record["setup_seconds"] = time.perf_counter() - t0
                    if not model.built or not model.optimizer.built:
                        model.fit(ds.take(1), epochs=1, verbose=0)  # trace and build outside the timing
                    t0 = time.perf_counter()
                    model.fit(ds.skip(1).take(steps), epochs=1, verbose=0)
                    record["step_seconds"] = (time.perf_counter() - t0) / steps
                record["steps_per_s"] = 1.0 / record["step_seconds"]
                record["examples_per_s"] = batch / record["step_seconds"]
                # text_dataset tokenizes every batch once before the first step: its share of a step
                record["tokenize_ms_per_step"] = 1000 * record["setup_seconds"] / -(-n // batch)
                rows.append(record)
                print(
                    f"  {stage} step, {token_table:>17} table, {n:>7,} examples: {record['steps_per_s']:5.2f} "
                    f"steps/s ({record['examples_per_s']:5.1f} examples/s; + {record['tokenize_ms_per_step']:.1f} ms a "
                    f"step tokenizing beforehand), peak RSS {record['peak_rss'] / 2**30:5.2f} GiB",
                    flush=True,
                )
                del ds, texts, targets
            del model, encoder
    for stage in ("teacher", "student"):  # each trainable choice as a share of the frozen rate
        rate = step_rates(rows, stage)
        print(
            f"  {stage}: trainable (lazy) at {rate[TABLES[0]] / rate['frozen']:.2f}x the frozen rate, trainable "
            f"(dense) at {rate[TABLES[1]] / rate['frozen']:.2f}x"
        )
    return rows


def step_rates(train: list[dict], stage: str) -> dict[str, float]:
    """Steps/s of each token-table choice of `stage`: the median over the sizes measured (a step costs the same
    whatever the data's size; on this 2-core VM one size's 20-100 steps vary by up to 2x from run to run)."""
    return {
        t: float(np.median([r["steps_per_s"] for r in train if r["stage"] == stage and r["token_table"] == t]))
        for t in TABLES
    }


def projection(encode: list[dict], train: list[dict]) -> dict:
    """The paper's full run on this machine, from the measured rates (encoding: the largest size measured; a step:
    the median over sizes)."""
    rate = encode[-1]["texts_per_s"]
    step = {(stage, t): 1.0 / r for stage in ("teacher", "student") for t, r in step_rates(train, stage).items()}
    p = PAPER
    n_sent = round(p["questions"] * p["sentences_per_question"])
    teacher_steps = p["teacher_epochs"] * p["questions"] * p["triplets_per_anchor"] / p["teacher_batch"]
    mining = p["online_epochs"] * (p["questions"] + n_sent) / rate  # each online epoch encodes questions and sentences
    student_steps = p["student_epochs"] * p["student_langs"] * p["questions"] / p["student_batch"]
    targets = (p["questions"] + n_sent) / rate  # T(q_en) and T(d), once
    out = {
        "sentences": n_sent,
        "teacher_steps": teacher_steps,
        "student_steps": student_steps,
        "mining_seconds": mining,
        "targets_seconds": targets,
    }
    for table in TABLES:
        out[f"teacher_hours {table}"] = (teacher_steps * step[("teacher", table)] + mining) / 3600
        out[f"student_hours {table}"] = (student_steps * step[("student", table)] + targets) / 3600
    return out


def plot(result: dict, path: Path) -> None:
    import matplotlib  # deferred: heavy, only with --plot

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # deferred: after choosing the Agg backend

    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    enc, score = result["encode"], result["score"]
    ax = axes[0]
    ax.loglog([r["texts"] for r in enc], [r["seconds"] for r in enc], "o-", label="encode (s)")
    ax.loglog([r["candidates"] for r in score], [r["seconds"] for r in score], "s-", label="score 10k questions (s)")
    ax.loglog([r["candidates"] for r in score], [r["bare_seconds"] for r in score], "s--", label="bare product (s)")
    ax.set_xlabel("texts / candidates")
    ax.set_title("time")
    ax.legend(fontsize=8)
    ax = axes[1]
    ax.loglog([r["texts"] for r in enc], [r["peak_rss"] / 2**30 for r in enc], "o-", label="encode: peak RSS")
    ax.loglog([r["texts"] for r in enc], [r["output_bytes"] / 2**30 for r in enc], "o:", label="encode: its output")
    ax.loglog(
        [r["candidates"] for r in score],
        [max(r["extra_rss"], 1) / 2**30 for r in score],
        "s-",
        label="score: extra beside embeddings",
    )
    ax.set_xlabel("texts / candidates")
    ax.set_ylabel("GiB")
    ax.set_title("memory")
    ax.legend(fontsize=8)
    ax = axes[2]
    for stage in ("teacher", "student"):
        for table, style in zip(TABLES, ("-", ":", "--")):
            rows = [r for r in result["train"] if r["stage"] == stage and r["token_table"] == table]
            ax.semilogx(
                [r["examples"] for r in rows],
                [r["peak_rss"] / 2**30 for r in rows],
                "o" + style,
                label=f"{stage}, table {table}",
            )
    ax.set_xlabel("training examples")
    ax.set_ylabel("peak RSS (GiB)")
    ax.set_title("training memory")
    ax.legend(fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the smaller sizes only (about 1 min on 2 cores)")
    p.add_argument("--sections", default="encode,score,targets,train", help="which to run (default: all four)")
    p.add_argument("--steps", type=int, default=None, help="timed training steps a size (default: 5 quick, 20 full)")
    p.add_argument(
        "--sizes",
        action="append",
        default=[],
        metavar="SECTION=N,N",
        help="the sizes of one section, e.g. encode=100000 (default: the --quick or full ones)",
    )
    p.add_argument("--json", default=None, help="write every figure here")
    p.add_argument("--plot", default=None, help="draw time and memory against size here (PNG)")
    args = p.parse_args(argv)
    sizes = dict(QUICK if args.quick else FULL)
    if args.steps:
        sizes["steps"] = args.steps
    for item in args.sizes:
        section, _, values = item.partition("=")
        if section not in sizes or section in ("steps", "score_questions") or not values:
            p.error(f"--sizes {item}: expected SECTION=N[,N...] with SECTION one of encode, score, targets, train")
        sizes[section] = [int(v) for v in values.split(",")]
    sections = set(args.sections.split(","))
    result: dict = {"sizes": sizes, "cores": os.cpu_count()}
    t0 = time.perf_counter()

    maker = None
    if sections & {"encode", "train"}:
        from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow), not for scoring alone

        encoder = build_encoder("muse", trainable=False)
        maker = TextMaker(encoder.tokenizer.get_vocabulary())
        pieces = [len(x) for x in encoder.tokenizer(maker.texts(200, 12) + maker.texts(200, 30))]
        print(f"texts: {np.mean(pieces[:200]):.1f} pieces a question, {np.mean(pieces[200:]):.1f} a sentence")
    if "encode" in sections:
        print("encoding (muse, batch 128):")
        result["encode"] = bench_encode(encoder, maker, sizes["encode"])
    if "score" in sections:
        print(f"scoring (gold ranks + metrics; blocks of at most {BLOCK_ELEMENTS:,} scores):")
        result["score"] = bench_score(sizes["score"], sizes["score_questions"])
    if "targets" in sections:
        print("student targets in the data set (memory):")
        result["targets"] = bench_student_targets(sizes["targets"])
    if "train" in sections:
        print(f"training steps (muse; {sizes['steps']} timed steps a size):")
        result["train"] = bench_train(maker, sizes["train"], sizes["steps"])
    if {"encode", "train"} <= sections:
        proj = result["projection"] = projection(result["encode"], result["train"])
        print(f"\nThe paper's run on this machine ({os.cpu_count()} cores), from the rates above:")
        print(
            f"  teacher: {proj['teacher_steps']:,.0f} steps + online mining ({PAPER['online_epochs']} x "
            f"{PAPER['questions']:,} questions and {proj['sentences']:,} sentences encoded): "
            + ", ".join(f"{proj['teacher_hours ' + t]:,.1f} h (table {t})" for t in TABLES)
        )
        print(
            f"  student: {proj['student_steps']:,.0f} steps + teacher targets: "
            + ", ".join(f"{proj['student_hours ' + t]:,.1f} h (table {t})" for t in TABLES)
            + "; dev evaluations not included"
        )
    result["seconds"] = time.perf_counter() - t0
    print(f"\nbench_scale: {result['seconds']:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    if args.plot:
        plot(result, Path(args.plot))


if __name__ == "__main__":
    main()
