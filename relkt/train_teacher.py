"""Stage 1: fine-tune the teacher with a triplet loss; BM25 negatives first, then online mining.

    python -m relkt.train_teacher --config configs/quickstart.yaml [--set key=value ...] [--smoke]

Re-running the same command resumes an interrupted run from its last checkpoint.
"""

from __future__ import annotations

import json
import logging
import math
import sys
from typing import Sequence

import numpy as np

log = logging.getLogger("relkt.train_teacher")


class TeacherTrainer:
    """Holds the data, encoder, mining state and run harness of one teacher run."""

    def __init__(self, config):
        import keras

        from relkt.data.lareqa_pool import LareqaPool
        from relkt.encoders import build_encoder
        from relkt.losses import TripletLoss
        from relkt.metrics import LareqaEvaluator, gold_matrix
        from relkt.mining import Bm25Index
        from relkt.training.common import QuietEncoder, dev_pool, sample_questions
        from relkt.training.run_harness import RunHarness
        from relkt.training.triplet_model import TripletModel
        from relkt.config import to_dict

        from relkt.training.distribute import make_strategy, set_precision, worker

        self.config = c = config
        self.strategy = make_strategy(c.distribute)  # first: multi-worker collectives are set up at startup
        set_precision(c.distribute.mixed_precision)
        self.chief, _ = worker(self.strategy)
        keras.utils.set_random_seed(c.seed)
        d = c.data
        langs = sorted(set(d.train_langs) | set(d.answer_langs))
        pool = LareqaPool.load(d.data_dir, langs=langs, split="train", fractions=tuple(d.split_fractions), seed=d.split_seed)
        pool = pool.subset(question_langs=d.train_langs, candidate_langs=d.answer_langs)
        if d.answer_unit == "passage":
            pool = pool.to_passages()
        pool = sample_questions(pool, d.max_train_questions, c.seed)
        self.pool = pool
        # One anchor per (question, gold answer in an answer language), or a seeded sample of them.
        positives = self._positives(pool, c.triplet.positives_per_question, c.seed)
        q_idx = np.array([i for i, g in enumerate(positives) for _ in g], dtype=np.int64)
        self.anchor_q = q_idx
        self.anchor_pos = np.concatenate([g for g in positives if len(g)]).astype(np.int64) if len(q_idx) else q_idx
        if not len(q_idx):
            raise ValueError(f"no training anchors: no {d.train_langs} question has an answer in {d.answer_langs}")
        self.anchor_gold = gold_matrix(pool.gold)[q_idx]
        self.q_texts = np.array(pool.question_texts(), dtype=object)
        self.c_texts = np.array(pool.candidate_texts(d.with_context), dtype=object)
        m = c.mining
        self.n_slots = max(m.bm25_negatives if m.bm25_epochs else 0, (m.hard + m.semi_hard) if m.online_epochs else 0)
        self.negatives = np.full((len(q_idx), self.n_slots), -1, dtype=np.int64)
        self.epoch_pairs = np.zeros(0, dtype=np.int64)
        self.bm25_top = None
        if m.bm25_epochs:
            index = Bm25Index(self.c_texts.tolist(), k1=m.bm25_k1, b=m.bm25_b)
            self.bm25_top = index.top(self.q_texts[q_idx].tolist(), m.bm25_top_end)

        with self.strategy.scope():  # model, optimizer and metrics live under the strategy
            self.encoder = build_encoder(c.encoder.spec, trainable=True, **c.encoder.options)
            self.model = TripletModel(self.encoder)
            self.model.compile(optimizer=keras.optimizers.Adam(c.schedule.learning_rate),
                               loss=TripletLoss(c.triplet.margin, c.triplet.distance))
        self.optimizer = self.model.optimizer  # a LossScaleOptimizer under float16
        evaluator = LareqaEvaluator(dev_pool(c), with_context=d.with_context, batch_size=c.eval.batch_size)
        quiet = QuietEncoder(self.encoder, c.eval.batch_size)
        self.harness = RunHarness(
            c.output_dir, self.encoder, self.optimizer,
            evaluate=lambda: LareqaEvaluator.flat(evaluator(quiet)),
            primary_metric=c.eval.primary_metric, eval_every=c.eval.every_steps, schedule=c.schedule,
            training_info={"stage": "teacher", "base_encoder": c.encoder.spec, "config": to_dict(c)},
            checkpoint_every=c.schedule.checkpoint_every, chief=self.chief, eval_at_start=c.eval.at_start,
        )
        self.harness.extra_arrays = lambda: {"negatives": self.negatives, "epoch_pairs": self.epoch_pairs}
        log.info("teacher: %d anchors from %d %s questions, %d %s candidates (%s)", len(q_idx), len(pool.questions),
                 ",".join(d.train_langs), len(pool.candidates), ",".join(d.answer_langs), d.answer_unit)

    def fingerprints(self) -> dict[str, dict]:
        """What a resumed run must find again besides the data: nothing (its base model is in its checkpoint)."""
        return {}

    @staticmethod
    def _positives(pool, per_question: int, seed: int) -> list[np.ndarray]:
        """Each question's positives: all its gold answers, or (per_question = N > 0) the one in its own
        language plus N-1 drawn from the rest; fixed by the seed so a resumed run sees the same anchors."""
        if per_question <= 0:
            return list(pool.gold)
        rng = np.random.default_rng([seed, 7])
        c_langs = pool.candidate_langs
        out = []
        for q, g in zip(pool.questions, pool.gold):
            own = g[c_langs[g] == q.lang]
            rest = g[c_langs[g] != q.lang]
            k = max(per_question - len(own[:1]), 0)
            out.append(np.concatenate([own[:1], rng.permutation(rest)[:k]]).astype(np.int64))
        return out

    # ----- negatives ------------------------------------------------------------------------
    def _bm25_round(self, rng) -> dict:
        from relkt.mining import bm25_negatives

        m = self.config.mining
        picked = bm25_negatives(self.bm25_top, self.anchor_gold, m.bm25_negatives, m.bm25_top_start, rng)
        new = np.full_like(self.negatives, -1)
        new[:, : picked.shape[1]] = picked
        return self._merge(new, "bm25")

    def _online_round(self, rng) -> dict:
        from relkt.mining import mine_negatives

        c, m = self.config, self.config.mining
        uniq_q, inverse = np.unique(self.anchor_q, return_inverse=True)
        q_emb = self.encoder.encode(self.q_texts[uniq_q].tolist(), batch_size=m.encode_batch_size)[inverse]
        c_emb = self.encoder.encode(self.c_texts.tolist(), batch_size=m.encode_batch_size)
        result = mine_negatives(q_emb, c_emb, self.anchor_pos, self.anchor_gold, c.triplet.margin, m.hard,
                                m.semi_hard, c.triplet.distance, m.pick, rng)
        new = np.full_like(self.negatives, -1)
        new[:, : result.negatives.shape[1]] = result.negatives
        report = self._merge(new, "online")
        report.update(mean_hard_available=float(result.n_hard.mean()), mean_semi_hard_available=float(result.n_semi_hard.mean()))
        return report

    def _merge(self, new, source: str) -> dict:
        """Take the new negatives; an anchor that got none keeps its last ones (reported, not dropped)."""
        none_new = (new < 0).all(axis=1)
        merged = np.where(none_new[:, None], self.negatives, new)
        self.negatives = merged
        return {"source": source, "anchors": int(len(new)), "anchors_without_new_negative": int(none_new.sum()),
                "anchors_without_any_negative": int((merged < 0).all(axis=1).sum()),
                "triplets": int((merged >= 0).sum())}

    # ----- training -------------------------------------------------------------------------
    def _dataset(self, pairs):
        import tensorflow as tf

        a = self.anchor_q[pairs // self.n_slots]
        p = self.anchor_pos[pairs // self.n_slots]
        n = self.negatives[pairs // self.n_slots, pairs % self.n_slots]
        x = {"anchor": self.q_texts[a].tolist(), "positive": self.c_texts[p].tolist(), "negative": self.c_texts[n].tolist()}
        enc = self.encoder
        ds = tf.data.Dataset.from_tensor_slices((x, np.zeros(len(pairs), np.float32)))
        ds = ds.batch(self.config.triplet.batch_size)
        ds = ds.map(lambda f, y: ({k: enc.preprocess(v) for k, v in f.items()}, y), num_parallel_calls=tf.data.AUTOTUNE)
        return ds.prefetch(tf.data.AUTOTUNE)

    def run(self) -> dict:
        from relkt.training.distributed_loop import fit
        from relkt.training.run_harness import HarnessCallback

        c, m, h = self.config, self.config.mining, self.harness
        restored = h.restore()
        if restored is not None:
            self.negatives, self.epoch_pairs = restored["negatives"], restored["epoch_pairs"]
        if not h.reopen(m.bm25_epochs + m.online_epochs):
            log.info("%s: this run already finished (summary.json); nothing to do", c.output_dir)
            return {**json.loads((h.out / "summary.json").read_text()), "already_finished": True}
        h.evaluate_at_start()
        bs = c.triplet.batch_size
        total_epochs = m.bm25_epochs + m.online_epochs
        callback = HarnessCallback(h)
        while h.state.epoch < total_epochs and not h.state.stopped_early:
            e = h.state.epoch
            online = e >= m.bm25_epochs
            s = h.state.step_in_epoch
            while True:
                mined_at = h.state.extra.get("mined_at")
                boundary = s == 0 or (online and m.remine_every and s % m.remine_every == 0)
                if boundary and mined_at != [e, s]:
                    rng = np.random.default_rng([c.seed, e, s])
                    report = self._online_round(rng) if online else self._bm25_round(rng)
                    report.update(epoch=e, step=h.state.global_step)
                    h.state.extra.setdefault("mining", []).append(report)
                    h.state.extra["mined_at"] = [e, s]
                    log.info("epoch %d negatives (%s): %d triplets; %d anchors found no new negative and keep "
                             "their last; %d have none", e, report["source"], report["triplets"],
                             report["anchors_without_new_negative"], report["anchors_without_any_negative"])
                    if s == 0:
                        valid = np.flatnonzero((self.negatives >= 0).ravel())
                        self.epoch_pairs = np.random.default_rng([c.seed, e, 10**6]).permutation(valid)
                steps_total = math.ceil(len(self.epoch_pairs) / bs)
                if s >= steps_total:
                    break
                end = steps_total
                if online and m.remine_every:
                    end = min(steps_total, (s // m.remine_every + 1) * m.remine_every)
                fit(self.model, self.strategy, self._dataset(self.epoch_pairs[s * bs : end * bs]), callback, c.verbose)
                s = h.state.step_in_epoch
                if h.state.stopped_early:
                    break
            if not h.state.stopped_early:
                h.end_epoch()
        return h.finish({"stage": "teacher", "anchors": int(len(self.anchor_q)), "mining": h.state.extra.get("mining", [])})


def train_teacher(config) -> dict:
    """Train a teacher with `config` (a TeacherConfig); returns the run summary."""
    from relkt.training.common import run_trainer

    return run_trainer(TeacherTrainer, config)


def main(argv: Sequence[str] | None = None) -> int:
    from relkt.config import TeacherConfig
    from relkt.training.common import trainer_main

    return trainer_main(argv, "python -m relkt.train_teacher", __doc__, TeacherConfig, train_teacher, "teacher")


if __name__ == "__main__":
    sys.exit(main())
