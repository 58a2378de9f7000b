"""Stage 2: distil the frozen teacher into a student across languages (CL-ReLKT Eq. 2).

Run by its CLI, relkt/train_student.py, once flags and config are checked:

    python -m relkt.train_student --config configs/quickstart/student.yaml [--set key=value ...] [--smoke]

The student starts as a copy of the teacher (or any encoder spec, projected to the teacher's size).
Teacher targets are computed once and cached; only the student is optimized. Re-running the same
command resumes an interrupted run.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import tensorflow as tf

from relkt.config import StudentConfig
from relkt.data.native_questions import native_fingerprint_files
from relkt.data.parallel import held_out_rule, pair_files_read
from relkt.data.selection import load_split, measured_split
from relkt.data.student_inputs import StudentInputs
from relkt.encoders import build_encoder, weights_digest
from relkt.encoders.encoder_kind import kind_of
from relkt.encoders.language_rows import language_rows
from relkt.encoders.projected_encoder import ProjectedEncoder
from relkt.encoders.registry import extend_encoder_vocabulary, token_table
from relkt.errors import ConfigError
from relkt.losses import STUDENT_INPUTS, TEACHER_TARGETS, TERMS, DistillationLoss, LossTerm
from relkt.losses.loss_terms import DOCUMENT
from relkt.metrics import CorpusBitextEvaluator
from relkt.stages.pair_model import PairModel
from relkt.stages.row_subset_adam import RowSubsetAdam
from relkt.stages.sparse_adam import SparseAdam
from relkt.stages.teacher_targets import teacher_targets
from relkt.training.distributed_loop import fit
from relkt.training.run_folder import file_fingerprint
from relkt.training.run_harness import HarnessCallback
from relkt.training.stage import Stage, length_sorted, run_epochs, stage_harness, start_run, text_dataset

log = logging.getLogger("relkt.train_student")


class StudentTrainer(Stage):
    """One student run: config -> parallel data -> frozen teacher -> student, loss -> cached targets -> harness."""

    config_class, name = StudentConfig, "student"

    def __init__(
        self,
        config: StudentConfig,
        terms: Sequence[LossTerm] = TERMS,
        inputs: StudentInputs | None = None,
        teacher: Any = None,
        evaluators: Sequence[Any] = (),
    ):
        """`terms`: the stage-2 loss-term table (relkt.losses.loss_terms); `distill.objective` says which train.
        Given, `inputs` (`StudentInputs.for_config(config)`: what the student trains on), `teacher` (a built,
        frozen encoder standing for `teacher.spec`) and `evaluators` (more dev evaluators, relkt.metrics.evaluator's
        protocol, beside the config's) are used in place of what the config would build."""
        self.config = c = config
        self.loss = self._loss(terms)  # before any data loads: an unknown term or a missing weight fails at once
        out = Path(c.output_dir)
        out.mkdir(parents=True, exist_ok=True)
        self.strategy, self.chief = start_run(c)
        rows = c.student.language_rows
        self.inputs = inputs = inputs or StudentInputs.build(
            c.data, c.distill.document, out, c.seed, rows.langs, rows.replay_pairs_per_lang
        )
        self.langs, self.language_texts, self.examples = inputs.langs, inputs.language_texts, inputs.examples
        self.corpus_dev = inputs.corpus_dev
        self.teacher = teacher or build_encoder(c.teacher.spec, trainable=False, **c.teacher.options)
        self.teacher_digest = weights_digest(self.teacher)
        with self.strategy.scope():  # the student, its optimizer and metrics live under the strategy
            self.student = self._student()
            if c.distill.length_chunks > 1 and "padding_mask" not in self.student.preprocess(tf.constant(["a"])):
                raise ConfigError(
                    f"distill.length_chunks: {c.distill.length_chunks} cuts each run of a batch to its longest text "
                    f"by the features' padding_mask, and {type(self.student).__name__}'s features have none; use 1"
                )
            self.model = PairModel(self.student, self.loss.student_inputs, c.distill.length_chunks)
            self.model.compile(optimizer=self._optimizer(), loss=self.loss)
        self.optimizer = self.model.optimizer
        self.target_table, self.target_rows = self._targets(out / "teacher_targets.npz")
        corpus_metric = [CorpusBitextEvaluator(self.corpus_dev, c.eval.batch_size)] if self.corpus_dev else []
        self.harness = stage_harness(
            c,
            self.student,
            self.optimizer,
            self.chief,
            {
                "stage": "student",
                "teacher": c.teacher.spec,
                "student_base": c.student.spec or c.teacher.spec,
                "languages": sorted(set(self.langs)),
            },
            more_evaluators=corpus_metric + list(evaluators),
            compare_with_start=True,
        )
        counts = {lang: self.examples.lang.count(lang) for lang in sorted(set(self.examples.lang))}
        log.info(
            "student: %d parallel examples %s; teacher %s (dim %d), student %s",
            len(self.examples),
            counts,
            c.teacher.spec,
            self.teacher.dim,
            c.student.spec or c.teacher.spec,
        )

    def fingerprints(self) -> dict[str, dict]:
        """What a resumed run must find again besides the QA data (relkt.training.run_folder.check_fingerprints): the
        teacher's weights, wherever it now lies, each `data.native_qa` file, and every pair file read
        (`pairs/FOLDER/LANG.tsv`), corpus_dir's with the rule that splits off its held-out pairs."""
        data = self.config.data
        pairs = pair_files_read(data, self.langs)
        alone = replace(data, more_pairs={}, code_switch_langs=[])
        corpus = {path.resolve() for path in pair_files_read(alone, self.langs).values()}
        rule = held_out_rule(data)
        return {
            "teacher": {"weights_sha256": self.teacher_digest},
            **{name: file_fingerprint(path) for name, path in native_fingerprint_files(data).items()},
            **{
                f"pairs/{name}": {**file_fingerprint(path), **({"held_out": rule} if path.resolve() in corpus else {})}
                for name, path in sorted(pairs.items())
            },
        }

    # ----- models ---------------------------------------------------------------------------------------------
    def _student(self):
        """The student's base (the teacher's copy by default), its vocabulary grown if asked (deterministic given
        the data, so a resumed run rebuilds the same vocabulary before restoring weights), projected to the
        teacher's size if it differs."""
        c, v = self.config, self.config.student.extend_vocab
        spec = c.student.spec or c.teacher.spec
        options = c.student.options or c.teacher.options
        asked = options.get("dim")
        if asked is not None and asked != self.teacher.dim:
            raise ConfigError(
                f"student.options.dim: {asked}, but the student learns the teacher's vectors ({c.teacher.spec}: dim "
                f"{self.teacher.dim}), so its export has the teacher's size: drop dim or set it to {self.teacher.dim}"
            )
        student = build_encoder(spec, trainable=True, **options)
        self.vocab_extension, self.language_rows = None, None
        frozen = getattr(student, "freeze_token_embedding", False)
        if frozen and (c.student.language_rows.langs or (v.enabled and v.new_rows_lr_multiplier != 1.0)):
            raise ConfigError(
                "student.language_rows / student.extend_vocab.new_rows_lr_multiplier train token rows, but "
                "the student's token table is frozen (freeze_token_embedding in student.options, or "
                "teacher.options when student.options is empty): set student.options.freeze_token_embedding: "
                "false, or drop those settings (new pieces then stay at their `init` rows)"
            )
        if v.enabled:
            if not kind_of(spec).mixable and getattr(student, "metadata", {}).get("kind") == "bert":
                raise ConfigError(
                    f"student.extend_vocab needs a trainable BERT student; {spec} is a BERT export: "
                    f"use student.spec=bert:{spec.partition(':')[2]}"
                )
            texts = self.vocabulary_texts(v.learn_from, c.student.language_rows.langs)
            try:
                student, self.vocab_extension = extend_encoder_vocabulary(
                    student, texts, seed=c.seed, **v.extension_options()
                )
            except ConfigError as e:
                raise ConfigError(f"student.extend_vocab (student.spec={spec!r}): {e}") from None
            log.info(
                "vocabulary extension: %s%s",
                {k: x for k, x in self.vocab_extension.summary().items() if k != "split_pattern"},
                "; the token table is frozen: the new pieces stay at their init rows" if frozen else "",
            )
        if student.dim != self.teacher.dim:
            if c.student.language_rows.langs:
                raise ConfigError(
                    f"student.language_rows keeps every weight but token rows, so the student ({spec}, "
                    f"dim {student.dim}) must have the teacher's size ({self.teacher.dim})"
                )
            log.info(
                "the student (%s, dim %d) is projected to the teacher's size (%d)", spec, student.dim, self.teacher.dim
            )
            return ProjectedEncoder(student, self.teacher.dim)
        self.language_rows = self._language_rows(student) if c.student.language_rows.langs else None
        return student

    def _language_rows(self, student) -> np.ndarray:
        """Choose the rows of `student.language_rows` and, unless the rest trains at its own rate, freeze every other
        variable (the optimizer checks)."""
        c, section = self.config, self.config.student.language_rows
        langs, ex = set(section.langs), self.examples
        missing = sorted(langs - set(ex.lang))
        if missing:
            raise ConfigError(
                f"student.language_rows.langs: no training example in {', '.join(missing)} "
                f"(the student's languages: {', '.join(sorted(set(ex.lang)))})"
            )
        own = sorted(
            {t for i, lang in enumerate(ex.lang) if lang in langs for t in (ex.q_target[i], ex.d_student[i]) if t}
        )
        # The others' reads: the training pool's other languages, the English sources and, with
        # freeze_replayed_rows, the student's own texts in the languages it replays (pairs may be all
        # a run holds of a language the base reads).
        train = load_split(c.data, "train")
        replayed = (
            {t for i, lang in enumerate(ex.lang) if lang not in langs for t in (ex.q_target[i], ex.d_student[i]) if t}
            if section.freeze_replayed_rows
            else set()
        )
        other = sorted(
            {q.text for q in train.questions if q.lang not in langs}
            | {x.sentence for x in train.candidates if x.lang not in langs}
            | set(ex.q_source)
            | replayed
        )
        table = token_table(student)
        rows = language_rows(student, own, other, section.max_other_count, section.min_own_ratio)
        # rows added by vocabulary extension: this run's, or the teacher's (a muse export keeps where they start)
        first = self.vocab_extension.first_id if self.vocab_extension else getattr(student, "added_rows_start", 0)
        added = int(np.sum(rows >= first)) if first else 0
        if not section.rest_lr_multiplier:
            for variable in student.trainable_variables:
                if variable.path != table.path:
                    variable.trainable = False
        log.info(
            "language rows: %d of %d token rows train (%s; %d of them added by vocabulary extension); the rest %s",
            len(rows),
            table.shape[0],
            ", ".join(sorted(langs)),
            added,
            f"trains at {section.rest_lr_multiplier:g} x the rate" if section.rest_lr_multiplier else "is frozen",
        )
        return rows

    def _optimizer(self):
        """Adam, sparse on the token table as `schedule.sparse_rows` says (SparseAdam); with vocabulary extension and
        a new-rows multiplier, its steps on the new embedding rows are that many times larger (the rows start
        untrained, the rest is fine-tuned); with language rows, Adam on those rows (RowSubsetAdam), the new ones
        among them at the multiplier, and on the rest at `rest_lr_multiplier` times the rate (0: frozen)."""
        lr, mult = self.config.schedule.learning_rate, self.config.student.extend_vocab.new_rows_lr_multiplier
        sparse = self.config.schedule.sparse_rows
        if self.language_rows is not None:  # the rows at the rate (added: x mult), the rest at rest_lr_multiplier
            first = self.vocab_extension.first_id if self.vocab_extension else np.inf
            return RowSubsetAdam(
                lr,
                token_table(self.student).path,
                self.language_rows.tolist(),
                [mult if r >= first else 1.0 for r in self.language_rows],
                sparse_rows=sparse,
                rest_scale=self.config.student.language_rows.rest_lr_multiplier,
                rest_rows=self.config.student.language_rows.rest_rows or None,
            )
        if self.vocab_extension is None or mult == 1.0:
            return SparseAdam(lr, sparse)
        scales = {token_table(self.student).path: (self.vocab_extension.first_id, mult)}
        return SparseAdam(lr, sparse, row_scales=scales)

    def _loss(self, terms: Sequence[LossTerm]) -> DistillationLoss:
        d = self.config.distill
        try:
            return DistillationLoss(
                gamma=d.gamma,
                distance=d.distance,
                objective=d.objective,
                contrast=d.contrast,
                temperature=d.temperature,
                negatives=d.negatives,
                weights=d.weights,
                terms=terms,
            )
        except ValueError as e:
            raise ConfigError(str(e)) from None

    def _targets(self, cache: Path) -> tuple[np.ndarray, np.ndarray]:
        """The teacher targets the loss reads (its `teacher_targets`: [T(q_en), T(d)] for the paper's terms) as a
        table of every distinct text's target, from one cached encoding, plus a zero row (an absent text: a corpus
        pair's T(d)), and each example's row in it per target, (examples, targets) int32. The training data gathers
        its batches' targets from the table, so memory holds one target a distinct text, not one an example and
        target (10 languages share their English question's and document's targets). With ranking against a bank,
        each target's rows are also the loss's candidates."""
        ex, d = self.examples, self.config.distill
        columns = {name: getattr(ex, TEACHER_TARGETS[name]) for name in self.loss.teacher_targets}
        uniq = sorted(set().union(*columns.values()) - {""})
        targets = teacher_targets(self.teacher, uniq, cache, self.config.eval.batch_size)
        absent = len(uniq)
        row = {t: i for i, t in enumerate(uniq)} | {"": absent}
        rows = np.array([[row[t] for t in texts] for texts in columns.values()], np.int32).T.reshape(len(ex), -1)
        if d.contrast and d.negatives == "bank":  # rank against every training target, not just the batch's
            self.loss.set_banks({name: targets[np.setdiff1d(rows[:, i], [absent])] for i, name in enumerate(columns)})
        table = np.concatenate([targets, np.zeros((1, targets.shape[1]), targets.dtype)]).astype(np.float32)
        return table, rows

    def example_targets(self) -> np.ndarray:
        """(examples, 2, dim): every example's targets, gathered (for inspection; training gathers per batch)."""
        return self.target_table[self.target_rows]

    def vocabulary_texts(self, learn_from: str, taught: Sequence[str]) -> list[str]:
        """What vocabulary extension learns from: every training text, or (`taught`) the student texts of the taught
        languages' examples only; sorted, each once."""
        ex = self.examples
        if learn_from == "all":
            return sorted(set(self.language_texts) | set(ex.q_target) | set(ex.d_student))
        if not taught:
            raise ConfigError(
                "student.extend_vocab.learn_from: taught learns the pieces from the taught languages' texts; "
                "student.language_rows.langs names none"
            )
        taught = set(taught)
        rows = [i for i, lang in enumerate(ex.lang) if lang in taught]
        return sorted({ex.q_target[i] for i in rows} | {ex.d_student[i] for i in rows if ex.d_student[i]})

    # ----- training -------------------------------------------------------------------------------------------
    def run(self) -> dict:
        self.callback = HarnessCallback(self.harness)
        d = self.config.distill  # every epoch has the same batches (the last one partial): schedule.decay's length
        self.harness.total_steps = d.epochs * math.ceil(len(self.examples) / d.batch_size)
        return run_epochs(self.harness, d.epochs, self.train_epoch, self.summary)

    def train_epoch(self, epoch: int, step: int) -> None:
        """The examples in an order fixed by (seed, epoch), from step `step` on."""
        c, bs = self.config, self.config.distill.batch_size
        self.harness.epoch_steps = len(self.examples) // bs
        order = self.epoch_order(epoch)[step * bs :]
        if len(order):
            fields = {name: getattr(self.examples, STUDENT_INPUTS[name]) for name in self.loss.student_inputs}
            texts = {name: [field[i] for i in order] for name, field in fields.items()}
            has = self.examples.has_document()  # the loss reads no document term of the other rows: not encoded
            present = {DOCUMENT: [has[i] for i in order]} if DOCUMENT in texts else None
            ds = text_dataset(texts, self.target_rows[order], self.student, bs, self.target_table, present)
            fit(self.model, self.strategy, ds, self.callback, c.verbose)

    def epoch_order(self, epoch: int) -> np.ndarray:
        """The examples' order in `epoch`, fixed by (seed, epoch) so a resumed epoch goes on where it stopped: a random
        permutation, with `distill.sort_window` regrouped into batches of like length (`row_tokens`)."""
        c = self.config
        rng = np.random.default_rng([c.seed, epoch])
        order = rng.permutation(len(self.examples))
        if not c.distill.sort_window:
            return order
        return length_sorted(order, self.row_tokens(), c.distill.batch_size, c.distill.sort_window, rng)

    def row_tokens(self) -> np.ndarray:
        """Each example's tokens over the texts the student encodes (its question, and its document where it has
        one), counted by the student's own tokenizer once a run."""
        if getattr(self, "_row_tokens", None) is None:
            has = np.asarray(self.examples.has_document())
            tokens = np.zeros(len(self.examples), np.int64)
            for name in self.loss.student_inputs:
                texts = getattr(self.examples, STUDENT_INPUTS[name])
                counted = self.student.length_keys(texts)
                tokens += np.where(has, counted, 0) if name == DOCUMENT else counted
            self._row_tokens = tokens
        return self._row_tokens

    def summary(self) -> dict:
        if weights_digest(self.teacher) != self.teacher_digest:
            raise RuntimeError("the teacher's weights changed during student training")
        extra = {"vocab_extension": self.vocab_extension.summary()} if self.vocab_extension else {}
        if self.language_rows is not None:
            extra["language_rows"] = {
                "langs": sorted(self.config.student.language_rows.langs),
                "rows": len(self.language_rows),
            }
        corpus = sum(not x for x in self.examples.has_document())
        return {
            "stage": "student",
            "examples": len(self.examples),
            "corpus_pairs": corpus,
            "teacher_unchanged": True,
            "teacher_digest": self.teacher_digest,
            "split": measured_split(self.config.data),  # the unit, and what it let into training
            **extra,
        }
