"""Stage-1 (teacher) configuration."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

from relkt.config.sections import (
    BATCH_MAX,
    GROWS_ON_RESUME,
    NON_EMPTY,
    SEED_RANGE,
    DataSection,
    DistributeSection,
    EncoderSection,
    EvalSection,
    ScheduleSection,
    VocabGrowthSection,
    within,
)
from relkt.errors import ConfigError


@dataclass
class MiningSection:
    """Negatives: BM25 for the first epochs, then online hard/semi-hard mining with the current model."""

    bm25_epochs: int = 3  # first epochs, with BM25 negatives
    # then epochs with negatives mined by the current model (more BM25 epochs would re-label trained ones)
    online_epochs: int = field(default=5, metadata=GROWS_ON_RESUME)
    bm25_k1: float = field(default=1.5, metadata=within(0))  # BM25 term-frequency saturation
    bm25_b: float = field(default=0.75, metadata=within(0, 1))  # BM25 length normalization
    # negatives are drawn from BM25 ranks [top_start, top_end) minus gold answers
    bm25_top_start: int = field(default=0, metadata=within(0))
    bm25_top_end: int = 30  # see bm25_top_start (validate: above it)
    bm25_negatives: int = field(default=2, metadata=within(0))  # per anchor
    hard: int = field(default=1, metadata=within(0))  # per anchor: d(a, n) < d(a, p)
    semi_hard: int = field(default=1, metadata=within(0))  # per anchor: d(a, p) < d(a, n) < d(a, p) + margin
    pick: Literal["random", "hardest"] = "random"  # among the qualifying candidates
    remine_every: int = field(default=0, metadata=within(0))  # steps; 0 = once at the start of each online epoch
    encode_batch_size: int = field(default=128, metadata=within(1, BATCH_MAX))  # texts per encoding batch when mining

    def validate(self) -> None:
        if self.bm25_epochs < 0 or self.online_epochs < 0 or self.bm25_epochs + self.online_epochs == 0:
            raise ConfigError("mining: bm25_epochs + online_epochs must be > 0 (both >= 0)")
        if not 0 <= self.bm25_top_start < self.bm25_top_end:
            raise ConfigError(
                f"mining: need 0 <= bm25_top_start < bm25_top_end, got {self.bm25_top_start}, {self.bm25_top_end}"
            )
        if self.bm25_epochs and self.bm25_negatives < 1:
            raise ConfigError("mining: BM25 epochs need bm25_negatives >= 1 (0 builds an epoch of no triplets)")
        if self.online_epochs and self.hard + self.semi_hard < 1:
            raise ConfigError("mining: online epochs need hard + semi_hard >= 1")


@dataclass
class TripletSection:
    """The paper's triplet objective: margin, distance, triplets a step and the anchors each question gives."""

    margin: float = field(default=0.24, metadata=within(above=0))  # the paper's XQuAD margin (0.13 MLQA, 0.27 XORQA)
    distance: Literal["cosine", "squared_l2"] = "cosine"  # of the triplet loss and the mining
    batch_size: int = field(default=16, metadata=within(1, BATCH_MAX))  # triplets per step (global, across replicas)
    # Anchors per question: 0 = one per gold answer in every answer language. N > 0 keeps the answer in
    # the question's own language plus N-1 drawn (seeded) from the other languages: cross-lingual positives
    # at a fraction of the steps when answer_langs lists many languages.
    positives_per_question: int = 0
    # Which gold answers are positives: any language; the question's own (X-X); or only other languages than the
    # question's (X-Y: LAReQA's best training, 0.66 mAP on XQuAD-R against 0.23 for X-X), with data.train_langs and
    # data.answer_langs naming several languages.
    pairing: Literal["any", "same", "cross"] = "any"

    def validate(self) -> None:
        if self.pairing not in ("any", "same", "cross"):
            raise ConfigError(f"triplet.pairing must be any, same or cross, got {self.pairing!r}")
        if self.positives_per_question < 0:
            raise ConfigError(f"triplet.positives_per_question must be >= 0, got {self.positives_per_question}")
        if self.batch_size < 1:
            raise ConfigError(f"triplet.batch_size must be >= 1, got {self.batch_size}")


@dataclass
class InBatchSection:
    """The in-batch softmax objective (`objective: in_batch`, LAReQA's): each question against every answer of its
    batch and the batch's mined negatives (BM25, then online: `mining`'s schedule), similarity times a scale."""

    batch_size: int = field(default=64, metadata=within(1, BATCH_MAX))  # questions per step (global)
    # rows embedded at once when the step computes gradients; 0 = the whole batch in one graph. Smaller chunks hold
    # less memory at the cost of a second forward pass (gradient caching: the same gradients)
    chunk_size: int = field(default=0, metadata=within(0))
    negatives_per_question: int = field(default=1, metadata=within(0))  # mined negatives a row adds as columns
    scale: float = field(default=20.0, metadata=within(above=0))  # the similarity's scale at the start
    scale_trainable: bool = True  # LAReQA's trainable scale; false keeps `scale` fixed
    scale_learning_rate: float = field(default=1e-3, metadata=within(above=0))  # plain steps on the log scale
    symmetric: bool = False  # also each answer against the batch's questions, the two directions averaged
    # answer context, learned: each candidate its sentence and its paragraph encoded apart, mixed by a learned weight
    # (normalize(e(sentence) + w * e(paragraph))); the export carries w and scoring mixes the same way
    answer_context: bool = False
    context_weight: float = field(default=0.5, metadata=within(0))  # w at the start
    context_trainable: bool = True  # false keeps `context_weight` fixed
    context_learning_rate: float = field(default=1e-3, metadata=within(above=0))  # plain steps on w (kept >= 0)

    def validate(self) -> None:
        if self.chunk_size > self.batch_size:
            raise ConfigError(
                f"in_batch.chunk_size ({self.chunk_size}) must be at most in_batch.batch_size ({self.batch_size})"
            )


@dataclass
class AlignSection:
    """Languages kept aligned while the teacher learns QA (the in-batch objective): translation-ranking batches, a
    sentence in X against the English twins of its batch, mixed among the QA batches."""

    pairs_dir: str = ""  # a folder of {lang}.tsv pair files; "" = no alignment task
    langs: list[str] = field(default_factory=list)  # the languages X (not en)
    pairs_per_lang: int = field(default=2000, metadata=within(0))  # training pairs a language; 0 = every one
    dev_pairs: int = field(default=200, metadata=within(0))  # held out a language: the dev metric's corpus/LANG/P@1
    share: float = field(default=0.25, metadata=within(0, 0.9))  # of the steps, translation-ranking batches
    weight: float = field(default=1.0, metadata=within(above=0))  # their loss's weight against the QA batches'
    mono: bool = True  # each batch one language pair (X-X-mono's lesson); false mixes the languages
    # More pair folders beside pairs_dir: folder -> training pairs drawn per language of align.langs with a file there
    # (0 = all), e.g. {../shared/data/xor-questions: 0}. A question file (id, split, xx, en) gives its `split = train`
    # rows alone, and a training pair holding one of its other questions is refused. No dev pairs come from these.
    more_pairs: dict[str, int] = field(default_factory=dict)

    def validate(self) -> None:
        if self.pairs_dir and not self.langs:
            raise ConfigError("align.langs: name the languages to keep aligned (align.pairs_dir is set)")
        if self.langs and not self.pairs_dir:
            raise ConfigError("align.pairs_dir: the folder of {lang}.tsv pair files (align.langs is set)")
        if self.more_pairs and not self.pairs_dir:
            raise ConfigError(
                "align.more_pairs: pair folders beside align.pairs_dir, which gives the dev pairs; set it"
            )
        for folder, count in self.more_pairs.items():
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise ConfigError(f"align.more_pairs.{folder}: pairs a language, a whole number >= 0, got {count!r}")


@dataclass
class TeacherVocabSection(VocabGrowthSection):
    """Grow the teacher's vocabulary with the pieces the alignment task's languages need, so a language the base
    cannot read (mUSE: el, hi, vi) learns rows of its own while the teacher learns QA; give the new rows a
    `new_rows_lr_multiplier`: at the teacher's rate they hardly move."""

    key: ClassVar[str] = "extend_vocab"
    # The languages whose alignment training pairs (their X side; never the dev pairs) the pieces are learned from;
    # each one of align.langs.
    langs: list[str] = field(default_factory=list)

    def validate(self) -> None:
        super().validate()
        if self.enabled and not self.langs:
            raise ConfigError("extend_vocab.langs: name the languages whose alignment pairs teach the pieces")


@dataclass
class TeacherConfig:
    """`python -m relkt.train_teacher --config FILE [--set key=value ...]`."""

    # the run folder: checkpoints, best/, last/, logs
    output_dir: str = field(default="runs/teacher", metadata=NON_EMPTY)
    # every random draw of the run (data order, sampling, initialization)
    seed: int = field(default=0, metadata=within(*SEED_RANGE))
    smoke: bool = False  # shrink data, batch and evaluation for a quick end-to-end check
    # Keras progress: 0 none, 1 a bar on a terminal (one line per pass otherwise), 2 one line per pass
    verbose: int = field(default=1, metadata=within(0, 2))
    # triplet: the paper's (question, answer, negative) triplets; in_batch: LAReQA's in-batch softmax (`in_batch`)
    objective: Literal["triplet", "in_batch"] = "triplet"
    data: DataSection = field(default_factory=DataSection)
    encoder: EncoderSection = field(default_factory=EncoderSection)
    mining: MiningSection = field(default_factory=MiningSection)
    triplet: TripletSection = field(default_factory=TripletSection)
    in_batch: InBatchSection = field(default_factory=InBatchSection)
    align: AlignSection = field(default_factory=AlignSection)
    extend_vocab: TeacherVocabSection = field(default_factory=TeacherVocabSection)
    eval: EvalSection = field(default_factory=EvalSection)
    schedule: ScheduleSection = field(default_factory=ScheduleSection)
    distribute: DistributeSection = field(default_factory=DistributeSection)

    def validate(self) -> None:
        if self.objective == "in_batch" and self.distribute.strategy != "default":
            raise ConfigError(
                f"objective: in_batch trains on one device (distribute.strategy: default); got "
                f"distribute.strategy: {self.distribute.strategy}"
            )
        if self.objective == "in_batch" and self.distribute.mixed_precision == "float16":
            raise ConfigError("objective: in_batch does not scale its loss for float16; use bfloat16 or none")
        if self.objective == "in_batch" and self.in_batch.answer_context and self.data.with_context:
            raise ConfigError(
                "in_batch.answer_context mixes each sentence with its paragraph; data.with_context concatenates them "
                "into one text: choose one"
            )
        missing = sorted(set(self.extend_vocab.langs) - set(self.align.langs))
        if self.extend_vocab.enabled and missing:
            raise ConfigError(
                f"extend_vocab.langs: {', '.join(missing)} not in align.langs; the pieces are learned from the "
                "alignment task's pairs"
            )
        if self.align.pairs_dir and self.objective != "in_batch":
            raise ConfigError("align: the alignment task trains with the in-batch objective (objective: in_batch)")
        if self.schedule.decay != "none":  # the harness would refuse it at the first step; say so before training
            raise ConfigError(
                f"schedule.decay: {self.schedule.decay} is a student's setting (a teacher's BM25 and online epochs "
                "differ in length, so its run has no fixed length to decay over); leave it none for the teacher"
            )

    def apply_smoke(self) -> TeacherConfig:
        """The smoke switch: few questions, small batches, frequent evaluation, one epoch per phase."""
        if self.smoke:
            self.data.max_train_questions = min(self.data.max_train_questions or 64, 64)
            self.triplet.batch_size = min(self.triplet.batch_size, 8)
            self.in_batch.batch_size = min(self.in_batch.batch_size, 8)
            self.in_batch.chunk_size = min(self.in_batch.chunk_size, 8)
            self.mining.bm25_epochs = min(self.mining.bm25_epochs, 1)
            self.mining.online_epochs = min(self.mining.online_epochs, 1)
            self.eval.every_steps = min(self.eval.every_steps, 5)
            self.eval.max_questions = min(self.eval.max_questions or 64, 64)
        return self
