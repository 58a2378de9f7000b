"""Stage 2: distil the frozen teacher into a student across languages (CL-ReLKT Eq. 2).

    python -m relkt.train_student --config configs/quickstart_student.yaml [--set key=value ...] [--smoke]

The student starts as a copy of the teacher (or any encoder spec, projected to the teacher's size).
Teacher targets are computed once and cached; only the student is optimized. Re-running the same
command resumes an interrupted run.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import sys
import zipfile
from pathlib import Path
from typing import Sequence

import numpy as np

from relkt.errors import ConfigError, NonFiniteError

log = logging.getLogger("relkt.train_student")


def weights_digest(encoder) -> str:
    """A hash of every weight's bytes: equal digests mean bit-identical models."""
    h = hashlib.sha256()
    for w in encoder.weights:
        h.update(np.ascontiguousarray(w.numpy()).tobytes())
    return h.hexdigest()


def teacher_targets(teacher, texts: list[str], cache: Path, batch_size: int) -> np.ndarray:
    """T(text) for unique texts, computed once and cached (npz keyed by a hash of the texts and teacher)."""
    key = hashlib.sha256(("\x00".join(texts) + weights_digest(teacher)).encode()).hexdigest()
    if cache.exists():
        try:
            with np.load(cache) as z:
                if str(z["key"]) == key and np.isfinite(z["targets"]).all():
                    log.info("teacher targets: reusing %s", cache)
                    return z["targets"]
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as e:  # truncated or damaged: recompute
            log.warning("teacher targets: %s cannot be read (%s: %s); computing them again", cache, type(e).__name__, e)
    targets = teacher.encode(texts, batch_size=batch_size, progress="teacher targets")
    if not np.isfinite(targets).all():
        raise NonFiniteError(f"the teacher's embeddings hold NaN or inf ({int((~np.isfinite(targets).all(1)).sum())} "
                             "texts): its weights are not finite; train the student from a finite teacher")
    tmp = cache.with_suffix(".tmp.npz")
    with open(tmp, "wb") as f:
        np.savez(f, key=key, targets=targets)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(cache)
    return targets


class StudentTrainer:
    """Holds parallel data, the frozen teacher's targets, the student and the run harness."""

    def __init__(self, config):
        import keras

        from relkt.config import to_dict
        from relkt.data.lareqa_pool import LareqaPool
        from relkt.data.parallel import parallel_from_pool, parallel_from_translation
        from relkt.encoders import build_encoder
        from relkt.encoders.projected_encoder import ProjectedEncoder
        from relkt.losses import DistillationLoss
        from relkt.metrics import LareqaEvaluator
        from relkt.training.common import QuietEncoder, dev_pool, sample_questions
        from relkt.training.pair_model import PairModel
        from relkt.training.run_harness import RunHarness

        from relkt.training.distribute import make_strategy, set_precision, worker

        self.config = c = config
        self.strategy = make_strategy(c.distribute)  # first: multi-worker collectives are set up at startup
        set_precision(c.distribute.mixed_precision)
        self.chief, _ = worker(self.strategy)
        keras.utils.set_random_seed(c.seed)
        d = c.data
        out = Path(c.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        pool = LareqaPool.load(d.data_dir, langs=None, split="train", fractions=tuple(d.split_fractions), seed=d.split_seed)
        langs = d.student_langs or pool.langs
        missing = sorted(set(langs) - set(pool.langs)) if d.parallel == "dataset" else []
        if missing or d.source_lang not in pool.langs:
            raise ConfigError(f"data.student_langs / data.source_lang: no data for {', '.join(missing or [d.source_lang])} "
                              f"in the data folder (it holds {', '.join(pool.langs)})")
        keep = sorted(set(langs) | {d.source_lang})
        if d.parallel == "dataset":
            pool = pool.subset(question_langs=keep, candidate_langs=keep)
        else:
            pool = pool.subset(question_langs=[d.source_lang], candidate_langs=[d.source_lang])
        # Vocabulary extension reads every training text of the student's languages (not just the sampled examples).
        self.language_texts = sorted(set(pool.question_texts()) | set(pool.candidate_texts(d.with_context)))
        if d.max_train_questions:
            src = [i for i, q in enumerate(pool.questions) if q.lang == d.source_lang]
            sources = LareqaPool([pool.questions[i] for i in src], pool.candidates, [pool.gold[i] for i in src])
            keep_ids = {q.qas_id for q in sample_questions(sources, d.max_train_questions, c.seed).questions}
            idx = [i for i, q in enumerate(pool.questions) if q.qas_id in keep_ids]
            pool = LareqaPool([pool.questions[i] for i in idx], pool.candidates, [pool.gold[i] for i in idx])
        if d.parallel == "dataset":
            self.examples = parallel_from_pool(pool, langs, d.source_lang, c.distill.document, d.with_context)
        else:
            from relkt.data.translate import ArgosTranslator, CachedTranslator

            cache = Path(d.translation_cache) if d.translation_cache else out / "translations.json"
            self.examples = parallel_from_translation(pool, langs, CachedTranslator(ArgosTranslator(), cache),
                                                      d.source_lang, d.with_context)
        if not len(self.examples):
            raise ValueError(f"no parallel examples for languages {langs}")

        self.teacher = build_encoder(c.teacher.spec, trainable=False, **c.teacher.options)
        self.teacher_digest = weights_digest(self.teacher)
        student_spec = c.student.spec or c.teacher.spec
        dist = c.distill
        with self.strategy.scope():  # the student, its optimizer and metrics live under the strategy
            student = build_encoder(student_spec, trainable=True, **(c.student.options or c.teacher.options))
            self.vocab_extension = None
            if c.student.extend_vocab.enabled:
                student = self._extend_vocab(student, student_spec)
            if student.dim != self.teacher.dim:
                student = ProjectedEncoder(student, self.teacher.dim)
            self.student = student
            self.model = PairModel(self.student)
            self.model.compile(optimizer=self._optimizer(),
                               loss=DistillationLoss(dist.gamma, dist.beta, dist.lam, dist.omega, dist.distance,
                                                     dist.objective, dist.contrast, dist.temperature, dist.negatives),
                               metrics=self._term_metrics())
        self.metric_fns = self._term_metrics()  # the same measurements for the strategy.run loop
        self.optimizer = self.model.optimizer

        uniq = sorted(set(self.examples.q_source) | set(self.examples.d_teacher))
        targets = teacher_targets(self.teacher, uniq, out / "teacher_targets.npz", c.eval.batch_size)
        row = {t: i for i, t in enumerate(uniq)}
        self.y = np.stack([targets[[row[t] for t in self.examples.q_source]],
                           targets[[row[t] for t in self.examples.d_teacher]]], axis=1).astype(np.float32)
        if dist.contrast and dist.negatives == "bank":  # rank against every training target, not just the batch's
            self.model.loss.set_banks(targets[sorted({row[t] for t in self.examples.q_source})],
                                      targets[sorted({row[t] for t in self.examples.d_teacher})])
        self.q_target = np.array(self.examples.q_target, dtype=object)
        self.d_student = np.array(self.examples.d_student, dtype=object)

        evaluator = LareqaEvaluator(dev_pool(c), with_context=d.with_context, batch_size=c.eval.batch_size)
        quiet = QuietEncoder(self.student, c.eval.batch_size)
        self.harness = RunHarness(
            out, self.student, self.optimizer, evaluate=lambda: LareqaEvaluator.flat(evaluator(quiet)),
            primary_metric=c.eval.primary_metric, eval_every=c.eval.every_steps, schedule=c.schedule,
            training_info={"stage": "student", "teacher": c.teacher.spec, "student_base": student_spec, "config": to_dict(c)},
            checkpoint_every=c.schedule.checkpoint_every, chief=self.chief, eval_at_start=c.eval.at_start,
        )
        counts = {lang: self.examples.lang.count(lang) for lang in sorted(set(self.examples.lang))}
        log.info("student: %d parallel examples %s; teacher %s (dim %d), student %s", len(self.examples), counts,
                 c.teacher.spec, self.teacher.dim, student_spec)

    def fingerprints(self) -> dict[str, dict]:
        """What a resumed run must find again besides the data (relkt.training.common.check_fingerprints)."""
        return {"teacher": {"weights_sha256": self.teacher_digest}}  # its weights, wherever it now lies

    def _term_metrics(self) -> list:
        from relkt.losses.distillation_loss import term_metrics

        dist = self.config.distill
        return term_metrics(dist.distance, dist.temperature if dist.contrast else None)

    def _extend_vocab(self, student, spec: str):
        """The student with the characters of its training texts added to its vocabulary (deterministic
        given the data, so a resumed run rebuilds the same vocabulary before restoring weights)."""
        from relkt.encoders.muse_encoder import MuseEncoder
        from relkt.encoders.sentencepiece_extension import extend_sentencepiece_vocabulary
        from relkt.encoders.vocab_extension import extend_vocabulary

        v = self.config.student.extend_vocab
        if spec.startswith(("hub:", "muse")) and getattr(student, "metadata", {}).get("kind") == "bert":
            raise ConfigError(f"student.extend_vocab needs a trainable BERT student; {spec} is a BERT export: "
                              f"use student.spec=bert:{spec.partition(':')[2]}")
        texts = sorted(set(self.language_texts) | set(self.examples.q_target) | set(self.examples.d_student))
        try:
            if isinstance(student, MuseEncoder):  # sentencepiece: new pieces in the model proto
                student, ext = extend_sentencepiece_vocabulary(student, texts, v.min_count, v.init, seed=self.config.seed,
                                                               pieces=v.pieces)
            else:
                student, ext = extend_vocabulary(student, texts, v.min_count, v.init, v.split_scripts, seed=self.config.seed,
                                                 pieces=v.pieces)
        except ConfigError as e:
            raise ConfigError(f"student.extend_vocab (student.spec={spec!r}): {e}") from None
        self.vocab_extension = ext
        log.info("vocabulary extension: %s", {k: val for k, val in ext.summary().items() if k != "split_pattern"})
        return student

    def _optimizer(self):
        """Adam; with vocabulary extension and a new-rows multiplier, Adam whose steps on the new embedding
        rows are that many times larger (the rows start untrained, the rest is fine-tuned)."""
        import keras

        from relkt.training.row_scaled_adam import RowScaledAdam

        lr, mult = self.config.schedule.learning_rate, self.config.student.extend_vocab.new_rows_lr_multiplier
        if self.vocab_extension is None or mult == 1.0:
            return keras.optimizers.Adam(lr)
        inner = getattr(self.student, "inner", self.student)  # also under a projection
        table = getattr(inner, "backbone", inner).token_embedding.embeddings  # BERT's backbone, or muse's own table
        return RowScaledAdam(lr, row_scales={table.path: (self.vocab_extension.first_id, mult)})

    def _dataset(self, rows):
        import tensorflow as tf

        enc = self.student
        x = {"q": self.q_target[rows].tolist(), "d": self.d_student[rows].tolist()}
        ds = tf.data.Dataset.from_tensor_slices((x, self.y[rows])).batch(self.config.distill.batch_size)
        ds = ds.map(lambda f, y: ({k: enc.preprocess(v) for k, v in f.items()}, y), num_parallel_calls=tf.data.AUTOTUNE)
        return ds.prefetch(tf.data.AUTOTUNE)

    def run(self) -> dict:
        from relkt.training.distributed_loop import fit
        from relkt.training.run_harness import HarnessCallback

        c, h = self.config, self.harness
        h.restore()
        if not h.reopen(c.distill.epochs):
            log.info("%s: this run already finished (summary.json); nothing to do", c.output_dir)
            return {**json.loads((h.out / "summary.json").read_text()), "already_finished": True}
        h.evaluate_at_start()
        bs = c.distill.batch_size
        steps = math.ceil(len(self.examples) / bs)
        callback = HarnessCallback(h)
        while h.state.epoch < c.distill.epochs and not h.state.stopped_early:
            order = np.random.default_rng([c.seed, h.state.epoch]).permutation(len(self.examples))
            s = h.state.step_in_epoch
            if s < steps:
                fit(self.model, self.strategy, self._dataset(order[s * bs:]), callback, c.verbose, self.metric_fns)
            if not h.state.stopped_early:
                h.end_epoch()
        unchanged = weights_digest(self.teacher) == self.teacher_digest
        if not unchanged:
            raise RuntimeError("the teacher's weights changed during student training")
        extra = {"vocab_extension": self.vocab_extension.summary()} if self.vocab_extension else {}
        return h.finish({"stage": "student", "examples": len(self.examples), "teacher_unchanged": unchanged,
                         "teacher_digest": self.teacher_digest, **extra})


def train_student(config) -> dict:
    """Train a student with `config` (a StudentConfig); returns the run summary."""
    from relkt.training.common import run_trainer

    return run_trainer(StudentTrainer, config)


def main(argv: Sequence[str] | None = None) -> int:
    from relkt.config import StudentConfig
    from relkt.training.common import trainer_main

    return trainer_main(argv, "python -m relkt.train_student", __doc__, StudentConfig, train_student, "student")


if __name__ == "__main__":
    sys.exit(main())
