"""Stage 1: fine-tune the teacher with a triplet loss (or LAReQA's in-batch softmax); BM25 negatives first, then
online mining.

Run by its CLI, relkt/train_teacher.py, once flags and config are checked:

    python -m relkt.train_teacher --config configs/quickstart/teacher.yaml [--set key=value ...] [--smoke]

Re-running the same command resumes an interrupted run from its last checkpoint.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from relkt.config import TeacherConfig
from relkt.data.alignment_pairs import AlignmentPairs
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.parallel_corpus import pair_file
from relkt.data.selection import load_split, measured_split, more_qa_sources, pool_langs, teacher_pool
from relkt.encoders import build_encoder
from relkt.encoders.registry import extend_encoder_vocabulary, token_table
from relkt.encoders.vocab_extension import VocabExtension
from relkt.errors import ConfigError
from relkt.losses import TripletLoss
from relkt.losses.in_batch_softmax_loss import GOLD_PAD, NO_ID
from relkt.metrics import CorpusBitextEvaluator
from relkt.metrics.answer_context import context_weight
from relkt.metrics.joint_evaluator import JointEvaluator
from relkt.mining import TripletNegatives
from relkt.stages.in_batch_model import PAIR_ID_START, InBatchModel
from relkt.stages.sparse_adam import SparseAdam
from relkt.stages.triplet_model import TripletModel
from relkt.training.distributed_loop import fit
from relkt.training.run_folder import file_fingerprint
from relkt.training.run_harness import HarnessCallback
from relkt.training.stage import Stage, run_epochs, stage_harness, start_run, text_dataset

log = logging.getLogger("relkt.train_teacher")


def alignment_pairs(config: TeacherConfig) -> AlignmentPairs:
    """The alignment task's pairs (`config.align`), none holding a text of a test source: the run's test split and
    every `data.more_test` source."""
    a, data = config.align, config.data
    sources = [data, *(dataclasses.replace(data, test_dir=path, more_test=[]) for path in data.more_test)]
    test_texts: set[str] = set()
    for each in sources:
        pool = load_split(each, "test")
        test_texts.update(pool.question_texts())
        test_texts.update(pool.candidate_texts())
    pairs = AlignmentPairs.read(
        a.pairs_dir, a.langs, a.pairs_per_lang, a.dev_pairs, test_texts, config.seed, a.more_pairs
    )
    log.info(
        "alignment task: %d pairs in %s (%s removed: a test source holds their text)",
        len(pairs),
        ",".join(a.langs),
        ", ".join(f"{lang} {n}" for lang, n in pairs.dropped.items()),
    )
    return pairs


def in_batch_model(encoder, config: TeacherConfig, anchors: int) -> InBatchModel:
    """The in-batch objective's model from `config.in_batch`; a batch holds at most the `anchors` there are."""
    b = config.in_batch
    batch_size = min(b.batch_size, anchors)
    return InBatchModel(
        encoder,
        batch_size=batch_size,
        negatives_per_row=b.negatives_per_question,
        chunk_size=min(b.chunk_size, batch_size),
        scale=b.scale,
        scale_trainable=b.scale_trainable,
        scale_learning_rate=b.scale_learning_rate,
        symmetric=b.symmetric,
        pair_weight=config.align.weight,
        answer_context=b.answer_context,
        context_weight=b.context_weight,
        context_trainable=b.context_trainable,
        context_learning_rate=b.context_learning_rate,
    )


class TeacherTrainer(Stage):
    """One teacher run: config -> data -> triplets and negatives -> model and loss -> harness; `run()` trains."""

    config_class, name = TeacherConfig, "teacher"

    def __init__(
        self,
        config: TeacherConfig,
        pool: LareqaPool | None = None,
        encoder: Any = None,
        evaluators: Sequence[Any] = (),
    ):
        """Given, `pool` (the training pool, `teacher_pool(config.data, config.seed)`), `encoder` (a built, trainable
        encoder standing for `encoder.spec`, made under the run's strategy) and `evaluators` (more dev evaluators
        beside the config's) are used in place of what the config would build."""
        self.config = c = config
        self.strategy, self.chief = start_run(c)
        self.pool = pool if pool is not None else teacher_pool(c.data, c.seed)
        contexts = [x.context for x in self.pool.candidates] if self.answer_context else None
        self.triplets = TripletNegatives(
            self.pool, self.pool.candidate_texts(c.data.with_context), c.triplet, c.mining, c.seed, contexts
        )
        self.align = alignment_pairs(c) if c.align.pairs_dir else None
        with self.strategy.scope():  # model, optimizer and metrics live under the strategy
            self.encoder = encoder or build_encoder(c.encoder.spec, trainable=True, **c.encoder.options)
            self.vocab_extension = None
            if c.extend_vocab.enabled:
                self.encoder, self.vocab_extension = self.grow_vocabulary(self.encoder)
            optimizer = self.make_optimizer()
            if c.objective == "in_batch":
                self.model = in_batch_model(self.encoder, c, len(self.triplets))
                self.model.compile(optimizer=optimizer)
            else:
                self.model = TripletModel(self.encoder)
                self.model.compile(optimizer=optimizer, loss=TripletLoss(c.triplet.margin, c.triplet.distance))
        self.optimizer = self.model.optimizer  # a LossScaleOptimizer under float16
        self.harness = stage_harness(
            c,
            self.encoder,
            self.optimizer,
            self.chief,
            {"stage": "teacher", "base_encoder": c.encoder.spec, "languages": sorted(set(self.pool.langs))},
            more_evaluators=list(evaluators),
        )
        self.harness.evaluators += self.align_evaluators(self.harness.evaluators[0])
        self.harness.extra_arrays = self.arrays
        log.info(
            "teacher: %d anchors from %d %s questions, %d %s candidates (%s)",
            len(self.triplets),
            len(self.pool.questions),
            ",".join(c.data.train_langs),
            len(self.pool.candidates),
            ",".join(c.data.answer_langs),
            c.data.answer_unit,
        )

    def grow_vocabulary(self, encoder) -> tuple[Any, VocabExtension]:
        """`encoder` with the pieces `extend_vocab.langs`' alignment training pairs need (their X side, each text
        once, sorted: a resumed run grows the same vocabulary before its weights are restored)."""
        v = self.config.extend_vocab
        if getattr(encoder, "freeze_token_embedding", False):
            raise ConfigError(
                "extend_vocab: the encoder's token table is frozen (freeze_token_embedding in encoder.options), so "
                "the new pieces would never leave their init rows: set it false"
            )
        chosen = [self.align.langs.index(lang) for lang in v.langs]
        texts = sorted(set(self.align.xx[np.isin(self.align.lang_of, chosen)].tolist()))
        try:
            grown, extension = extend_encoder_vocabulary(encoder, texts, seed=self.config.seed, **v.extension_options())
        except ConfigError as e:
            raise ConfigError(f"extend_vocab (encoder.spec={self.config.encoder.spec!r}): {e}") from None
        log.info(
            "vocabulary extension from %d %s texts: %s",
            len(texts),
            ",".join(v.langs),
            {k: x for k, x in extension.summary().items() if k != "split_pattern"},
        )
        return grown, extension

    def make_optimizer(self) -> SparseAdam:
        """Adam, sparse on the token table as `schedule.sparse_rows` says; the rows vocabulary extension added step
        `extend_vocab.new_rows_lr_multiplier` times as far (they start untrained, the rest is fine-tuned)."""
        s, mult = self.config.schedule, self.config.extend_vocab.new_rows_lr_multiplier
        if self.vocab_extension is None or mult == 1.0:
            return SparseAdam(s.learning_rate, s.sparse_rows)
        scales = {token_table(self.encoder).path: (self.vocab_extension.first_id, mult)}
        return SparseAdam(s.learning_rate, s.sparse_rows, row_scales=scales)

    def align_evaluators(self, qa) -> list:
        """With the alignment task: each language's held-out pairs (`corpus/LANG/P@1`) and `joint/P@1`, their mean
        with the English QA dev's P@1 from `qa`, the harness's own dev LAReQA evaluator (called again inside the
        round, its texts' embeddings already cached: the dev pool is read once)."""
        if self.align is None:
            return []
        return [JointEvaluator(qa, CorpusBitextEvaluator(self.align.dev, self.config.eval.batch_size))]

    @property
    def answer_context(self) -> bool:
        """Whether candidates are mixed with their paragraphs (the in-batch objective's `answer_context`)."""
        return self.config.objective == "in_batch" and self.config.in_batch.answer_context

    def fingerprints(self) -> dict[str, dict]:
        """What a resumed run must find again besides the training source (`config_fingerprints`)."""
        return self.config_fingerprints(self.config)

    @classmethod
    def epochs_of(cls, config: TeacherConfig) -> int:
        return config.mining.bm25_epochs + config.mining.online_epochs

    @classmethod
    def config_fingerprints(cls, config: TeacherConfig) -> dict[str, dict]:
        """Each `data.more_qa` file (`more_qa/K/FILE`; its base model is in its checkpoint) and each pair file of the
        alignment task (`align/K/LANG.tsv`, K-th folder: `align.pairs_dir`, then `align.more_pairs`')."""
        a = config.align
        folders = [a.pairs_dir, *a.more_pairs] if a.pairs_dir else []
        return {
            f"more_qa/{k}/{path.name}": file_fingerprint(path)
            for k, source in enumerate(more_qa_sources(config.data))
            for _, path in sorted(source.files().items())
        } | {
            f"align/{k}/{lang}.tsv": file_fingerprint(pair_file(folder, lang))
            for k, folder in enumerate(folders)
            for lang in a.langs
            if pair_file(folder, lang).is_file()
        }

    def arrays(self) -> dict[str, np.ndarray]:
        """What a checkpoint carries besides weights: the negatives, the epoch's order, the in-batch scale."""
        out = dict(self.triplets.arrays())
        for name in ("log_scale", "context_weight"):
            variable = getattr(self.model, name, None)
            if variable is not None:
                out[name] = np.array(variable.numpy())
        return out

    def load_arrays(self, arrays: dict[str, np.ndarray]) -> None:
        """Restore what `arrays` saved: the negatives, the epoch's order, the scale and the context weight."""
        self.triplets.load_arrays(arrays)
        for name in ("log_scale", "context_weight"):
            variable = getattr(self.model, name, None)
            if name in arrays and variable is not None:
                variable.assign(arrays[name])

    @property
    def batch_size(self) -> int:
        """Rows a step: triplets, or the in-batch objective's questions (at most the anchors there are)."""
        return self.model.batch_size if self.config.objective == "in_batch" else self.config.triplet.batch_size

    def run(self) -> dict:
        """Train every BM25 and online epoch (resuming where the run folder stopped); returns the summary."""
        self.callback = HarnessCallback(self.harness)
        return run_epochs(
            self.harness,
            self.epochs_of(self.config),
            self.train_epoch,
            self.summary,
            restore=self.load_arrays,
        )

    def train_epoch(self, epoch: int, step: int) -> None:
        """BM25 epochs take BM25 negatives, online epochs mine with the current model, at the epoch's start and
        every `mining.remine_every` steps; each round is recorded once, so a resumed epoch does not mine again."""
        c, m, h = self.config, self.config.mining, self.harness
        online = epoch >= m.bm25_epochs
        bs = self.batch_size
        while True:
            boundary = step == 0 or (online and m.remine_every and step % m.remine_every == 0)
            if boundary and h.state.extra.get("mined_at") != [epoch, step]:
                self.mine(epoch, step, online)
            steps_total = math.ceil(len(self.triplets.epoch_pairs) / bs)
            h.epoch_steps = len(self.triplets.epoch_pairs) // bs
            if step >= steps_total:
                return
            end = (
                min(steps_total, (step // m.remine_every + 1) * m.remine_every)
                if online and m.remine_every
                else steps_total
            )
            ds = self.dataset(self.triplets.epoch_pairs[step * bs : end * bs])
            fit(self.model, self.strategy, ds, self.callback, c.verbose)
            step = h.state.step_in_epoch
            if h.state.stopped_early:
                return

    def with_pair_batches(self, anchors: np.ndarray, epoch: int) -> np.ndarray:
        """The epoch's QA batches with the alignment task's batches spread evenly among them (`align.share` of all);
        a pair row is `len(triplets)` + its index in the pair table."""
        a, bs = self.config.align, self.batch_size
        qa = [anchors[i : i + bs] for i in range(0, len(anchors), bs)]
        n_pairs = round(a.share / (1 - a.share) * len(qa))
        rng = np.random.default_rng([self.config.seed, epoch, 77])
        pairs = [b + len(self.triplets) for b in self.align.batches(n_pairs, bs, a.mono, rng)]
        at = np.linspace(0, len(qa) + len(pairs), num=len(pairs), endpoint=False).astype(int) if pairs else []
        out, q, p, slots = [], iter(qa), iter(pairs), {int(i) for i in at}
        for i in range(len(qa) + len(pairs)):
            out.append(next(p) if i in slots else next(q))
        return np.concatenate(out) if out else anchors

    def dataset(self, rows: np.ndarray):
        """The batches of this stretch of the epoch: triplets, or the in-batch objective's rows and their ids."""
        if self.config.objective == "in_batch":
            texts, ids = self.in_batch_rows(rows)
            return text_dataset(texts, ids, self.encoder, self.batch_size)
        texts = self.triplets.triplet_texts(rows)
        return text_dataset(texts, np.zeros(len(rows), np.float32), self.encoder, self.batch_size)

    def in_batch_rows(self, rows: np.ndarray) -> tuple[dict[str, list[str]], np.ndarray]:
        """The texts and ids of QA anchors and translation pairs (rows past the anchors), in `rows`' order."""
        k, n = self.model.negatives_per_row, len(self.triplets)
        qa = rows < n
        texts, ids = self.triplets.in_batch_rows(rows[qa], k)
        if qa.all():
            return texts, ids
        pair = rows[~qa] - n
        pair_id = (PAIR_ID_START + self.align.en_id[pair]).astype(np.int64)
        pair_ids = np.full((len(pair), ids.shape[1]), GOLD_PAD, np.int64)
        pair_ids[:, 0], pair_ids[:, 1 : 1 + k], pair_ids[:, 1 + k] = pair_id, NO_ID, pair_id
        pair_texts = {"anchor": self.align.xx[pair], "positive": self.align.en[pair]}
        merged_ids = np.zeros((len(rows), ids.shape[1]), np.int64)
        merged_ids[qa], merged_ids[~qa] = ids, pair_ids
        merged = {}
        for name, column in texts.items():
            out = np.empty(len(rows), dtype=object)
            out[qa] = column
            out[~qa] = pair_texts.get(name, "")
            merged[name] = out.tolist()
        return merged, merged_ids.astype(np.int32)

    def mine(self, epoch: int, step: int, online: bool) -> None:
        """Mine this round's negatives (BM25, or online with the current model), record the round, order the epoch."""
        h = self.harness
        rng = np.random.default_rng([self.config.seed, epoch, step])
        report = self.triplets.online_round(self.encoder, rng) if online else self.triplets.bm25_round(rng)
        report.update(epoch=epoch, step=h.state.global_step)
        h.state.extra.setdefault("mining", []).append(report)
        h.state.extra["mined_at"] = [epoch, step]
        log.info(
            "epoch %d negatives (%s): %d triplets; %d anchors found no new negative and keep their last; %d have none",
            epoch,
            report["source"],
            report["triplets"],
            report["anchors_without_new_negative"],
            report["anchors_without_any_negative"],
        )
        if step == 0 and self.config.objective == "in_batch":
            self.triplets.shuffle_anchors(epoch, self.batch_size)
            if self.align is not None:
                self.triplets.epoch_pairs = self.with_pair_batches(self.triplets.epoch_pairs, epoch)
        elif step == 0:
            self.triplets.shuffle_epoch(epoch)

    def summary(self) -> dict:
        """What the run's summary.json adds for a teacher: objective, alignment pairs, scale, context weight, mining."""
        scale = getattr(self.model, "log_scale", None)
        return {
            "stage": "teacher",
            "objective": self.config.objective,
            **(
                {"align_pairs": len(self.align), "align_dropped_test_overlap": self.align.dropped} if self.align else {}
            ),
            **({"in_batch_scale": float(np.exp(scale.numpy()))} if scale is not None else {}),
            **({"answer_context_weight": context_weight(self.encoder)} if self.answer_context else {}),
            **({"vocab_extension": self.vocab_extension.summary()} if self.vocab_extension else {}),
            "anchors": len(self.triplets),
            "mining": self.harness.state.extra.get("mining", []),
            # the unit, and what it let into training, on the languages the pool is cut from
            "split": measured_split(self.config.data, pool_langs(self.config.data)),
        }
