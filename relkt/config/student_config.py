"""Stage-2 (student) configuration."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import ClassVar, Literal

from relkt.config.sections import (
    BATCH_MAX,
    GROWS_ON_RESUME,
    NON_EMPTY,
    SEED_RANGE,
    DistributeSection,
    EncoderSection,
    EvalSection,
    Names,
    PoolSection,
    ScheduleSection,
    VocabGrowthSection,
    within,
)
from relkt.errors import ConfigError
from relkt.names import ALL, PAPER_WEIGHTS


@dataclass
class StudentDataSection(PoolSection):
    """The student's data: which languages it learns, from which parallel text."""

    source_lang: str = "en"  # the teacher's language (English was the paper's best teacher language)
    student_langs: Names = ALL  # languages the student learns, or all: every one found
    parallel: Literal["dataset", "translate"] = "dataset"  # human parallel questions, or machine translation
    translator: Literal["argos", "apertium"] = "argos"  # the machine-translation backend of `parallel: translate`
    translation_cache: str = ""  # default: <output_dir>/translations.json
    # Languages that also get the paper's kind of pair: the source questions machine-translated by `translator`, each
    # with its source-language answer, beside whatever pairs `parallel` and corpus_dir give them ([] = none).
    translate_langs: list[str] = field(default_factory=list)
    # Languages that also get code-switched pairs: the source questions with a share of their words and names
    # replaced from the dictionary folder `code_switch_dir` (relkt.data.code_switch), each with its source-language
    # answer, beside whatever other pairs they get ([] = none).
    code_switch_langs: list[str] = field(default_factory=list)
    code_switch_dir: str = ""  # a folder of {lang}.tsv dictionaries (source, en, xx), e.g. ../shared/data/names
    code_switch_sources: Names = ALL  # its rows' `source` values used, or all
    code_switch_ratio: float = 0.5  # the chance that a word or name with a dictionary entry is switched
    # A weight for the QA data's own examples (its questions in each student language, their translations and
    # code-switched ones): times each is trained on, beside pair-folder pairs trained once. In-domain questions are
    # few among general parallel text (xquad_muse_best: 2,436 of 28,024 examples).
    qa_repeat: int = 1  # times each QA example is trained on (1 = once, like the rest)
    # languages whose pair-file questions (corpus_dir, more_pairs) train twice: as written and romanized (anyascii,
    # relkt.data.romanize), both paired with the teacher's English; for scripts the base reads as <unk> only
    romanize_langs: list[str] = field(default_factory=list)
    # General parallel text beside the QA pairs: a folder of {lang}.tsv files (source, en, xx), e.g.
    # ../shared/data/parallel. A pair teaches the question side only (beta, and the ranking term with contrast). A
    # question file (id, split, xx, en: ../shared/data/xor-questions) trains on its `split = train` rows alone.
    corpus_dir: str = ""  # "" = none
    corpus_langs: Names = ALL  # all = every student language with a file in corpus_dir
    corpus_pairs_per_lang: int = 2000  # training pairs drawn (seeded) per language; 0 = all of them
    # pairs per language held out for the corpus dev metric: each source's last rows in its share (whole documents;
    # never hashed lines, whose neighbours would train)
    corpus_dev_pairs: int = 500
    # sources (the pair files' `source` column, e.g. [tico19]) held out whole from corpus_dir: none of their pairs
    # trains, corpus_dev_pairs of them are the dev metric; what `relkt coverage --held-out-sources` scores. [] = each
    # source's last corpus_dev_pairs rows alone
    corpus_held_out_sources: list[str] = field(default_factory=list)
    # Another domain, by language: one source of a language's pair file held out whole (none of its pairs trains),
    # what a report scores as bitext of another domain beside the corpus_dev_pairs held out of the other sources,
    # e.g. {te: tatoeba}. `relkt teach` picks one for each taught language unless told (--other-domain).
    corpus_other_domain: dict[str, str] = field(default_factory=dict)
    # Question-shaped pairs first (their English side ends in "?"; Tatoeba's are ~15% of parallel/): `all` pairs as
    # drawn, `only` those; each question pair drawn is repeated corpus_question_repeat times (a weight).
    corpus_questions: Literal["all", "only"] = "all"  # all pairs, or only question-shaped ones
    corpus_question_repeat: int = 1  # times each question-shaped pair drawn is trained on (1 = once, like the rest)
    # A weight by language: times each pair-file pair drawn for it (corpus_dir and more_pairs) is trained on, e.g.
    # {vi: 2} for a language with a third of the others' pairs; a language not named trains once. Multiplies
    # corpus_question_repeat.
    corpus_lang_repeat: dict[str, int] = field(default_factory=dict)
    # More pair folders beside corpus_dir, each with its own share: folder -> training pairs drawn per student
    # language with a file there (0 = all), e.g. {../shared/data/xor-questions: 0}. A question file gives its
    # `split = train` rows alone; its other rows are for scoring only, and a training pair from any folder that holds
    # one of their questions is refused at start. No dev slice is drawn from these folders.
    more_pairs: dict[str, int] = field(default_factory=dict)
    # QA written in student languages with no English twin (relkt.data.native_questions): source (a QA folder or
    # file, any format relkt reads, e.g. ../shared/data/qa-native/arcd) -> questions drawn per student language (0 =
    # all). Each question trains against its answer sentence, which the teacher embeds as its target; a source that
    # shares an article, context or question id with data_dir or test_dir is refused at start, naming both.
    native_qa: dict[str, int] = field(default_factory=dict)

    def validate(self) -> None:
        super().validate()
        if self.student_langs != "all" and not [lang for lang in self.student_langs if lang != self.source_lang]:
            raise ConfigError(
                f"data.student_langs: {self.student_langs}: a student learns at least one language other than its "
                f"source language ({self.source_lang}), or all"
            )
        if self.source_lang in self.translate_langs:
            raise ConfigError(
                f"data.translate_langs: {self.source_lang} is the source language; it needs no translation"
            )
        if self.code_switch_langs and not self.code_switch_dir:
            raise ConfigError("data.code_switch_langs needs data.code_switch_dir, a folder of {lang}.tsv dictionaries")
        if self.source_lang in self.code_switch_langs:
            raise ConfigError(f"data.code_switch_langs: {self.source_lang} is the source language")
        if not 0 < self.code_switch_ratio <= 1:
            raise ConfigError(f"data.code_switch_ratio must be in (0, 1], got {self.code_switch_ratio}")
        if self.qa_repeat < 1:
            raise ConfigError(
                f"data.qa_repeat: times each QA example is trained on, an integer >= 1, got {self.qa_repeat}"
            )
        if self.corpus_question_repeat < 1:
            raise ConfigError(f"data.corpus_question_repeat must be >= 1, got {self.corpus_question_repeat}")
        for lang, times in self.corpus_lang_repeat.items():
            if isinstance(times, bool) or not isinstance(times, int) or times < 1:
                raise ConfigError(f"data.corpus_lang_repeat.{lang}: times trained, an integer >= 1, got {times!r}")
            if lang == self.source_lang:
                raise ConfigError(f"data.corpus_lang_repeat: {lang} is the source language; it has no pairs")
        for folder, share in self.more_pairs.items():
            if not isinstance(share, int) or share < 0:
                raise ConfigError(f"data.more_pairs.{folder}: pairs per language, an integer >= 0, got {share!r}")
        for lang, source in self.corpus_other_domain.items():
            if not isinstance(source, str) or not source:
                raise ConfigError(f"data.corpus_other_domain.{lang}: a source of its pair file, got {source!r}")
            if source in self.corpus_held_out_sources:
                raise ConfigError(
                    f"data.corpus_other_domain.{lang}: {source} is in data.corpus_held_out_sources too; a source is "
                    "held out one way"
                )
        for source, share in self.native_qa.items():
            if not source or isinstance(share, bool) or not isinstance(share, int) or share < 0:
                raise ConfigError(
                    f"data.native_qa.{source}: a QA source -> questions drawn per language, an integer >= 0 (0 = all), "
                    f"got {share!r}"
                )
        if self.corpus_pairs_per_lang < 0 or self.corpus_dev_pairs < 0:
            raise ConfigError(
                f"data.corpus_pairs_per_lang and data.corpus_dev_pairs must be >= 0, got "
                f"{self.corpus_pairs_per_lang}, {self.corpus_dev_pairs}"
            )


@dataclass
class DistillSection:
    """Eq. 2: gamma/|M| sum(beta ||T(q_en)-S(q_x)||^2 + lambda ||T(d)-S(d)||^2 + omega ||T(d)-S(q_x)||^2)."""

    gamma: float = 1000.0  # overall scale of the loss
    # every loss term's weight, by the weight key its entry of relkt.losses.loss_terms names: the paper's beta (of
    # ||T(q_en) - S(q_x)||^2), lam (lambda, of ||T(d) - S(d)||^2) and omega (of ||T(d) - S(q_x)||^2), each at the
    # paper's value unless given, and those of added terms (e.g. keep_en). The older `distill.beta`, `distill.lam`
    # and `distill.omega` still load (and `--set` them): they are read as these entries.
    weights: dict[str, float] = field(default_factory=lambda: dict(PAPER_WEIGHTS))
    # of each term: squared L2 (the paper's Eq. 2), that averaged over the dimensions (mean_squared: Keras's MSE, the
    # reference code's), or 1 - cos
    distance: Literal["squared_l2", "mean_squared", "cosine"] = "squared_l2"
    # which loss terms train: '+'-joined names of relkt.losses.loss_terms (q, q+d, q+d+dq: the paper's Table 6); only
    # those terms' inputs are embedded
    objective: str = "q+d+dq"
    document: Literal["en", "parallel"] = "en"  # which answer the student sees (see relkt.data.parallel)
    contrast: float = 0.0  # not in the paper: + contrast * in-batch InfoNCE on each term (DistillationLoss)
    temperature: float = 0.05  # of that InfoNCE
    negatives: Literal["batch", "bank"] = "batch"  # its candidates: the batch's targets, or every training target
    batch_size: int = field(default=16, metadata=within(1, BATCH_MAX))  # parallel examples per step (global)
    epochs: int = field(default=10, metadata=GROWS_ON_RESUME)  # passes over the parallel examples
    # Batches of like length: each run of sort_window batches' examples (in the epoch's random order) sorted by their
    # tokens, cut into batches, and those batches shuffled; a batch then pads to near its own length (random batches
    # of parallel text pad to about 4x; docs/results/scale.md). 0 = random batches. Changes in-batch negatives.
    sort_window: int = 0
    # Each batch encoded in this many runs of like length, each cut to its own longest text: the same rows, loss and
    # gradients as one pass padded to the batch's longest (float order aside), in less time. 1 = one pass.
    length_chunks: int = 1

    @staticmethod
    def upgrade(data: dict) -> dict:
        """A section written before the weights had one channel: `beta: 0.5` is `weights: {beta: 0.5}` (the older
        key wins over a `weights` entry, as the more specific: `--set distill.beta=...` on a loaded config)."""
        legacy = {k: data[k] for k in PAPER_WEIGHTS if k in data}
        if not legacy:
            return data
        weights = data.get("weights") or {}
        if not isinstance(weights, dict):
            return data  # the type error is reported as usual
        rest = {k: v for k, v in data.items() if k not in PAPER_WEIGHTS}
        return {**rest, "weights": {**weights, **legacy}}

    def validate(self) -> None:
        """Bad values fail when the config loads, with the valid range (not as a loss error after data loading)."""
        for key, value in self.weights.items():
            try:
                self.weights[key] = float(value)  # YAML reads 1e-5 as a string
            except (TypeError, ValueError):
                raise ConfigError(f"distill.weights.{key}: expected a number, got {value!r}") from None
        self.weights = {**PAPER_WEIGHTS, **self.weights}  # the paper's three always present, in Eq. 2's order
        named = {name: getattr(self, name) for name in ("gamma", "contrast")}
        for name, value in {**named, **{f"weights.{k}": v for k, v in self.weights.items()}}.items():
            if not (value >= 0 and value != float("inf")):
                raise ConfigError(f"distill.{name} must be a finite number >= 0, got {value}")
        if not re.fullmatch(r"\w+(\+\w+)*", self.objective):
            raise ConfigError(f"distill.objective: '+'-joined loss-term names (e.g. q+d+dq), got {self.objective!r}")
        if self.gamma == 0 or self.contrast + sum(self.weights.values()) == 0:
            raise ConfigError(
                f"distill: gamma ({self.gamma}) and at least one of distill.weights or contrast must be > 0: "
                "the loss would be 0 and nothing would train"
            )
        if not self.temperature > 0:
            raise ConfigError(f"distill.temperature must be > 0, got {self.temperature}")
        if self.negatives == "bank" and not self.contrast:
            raise ConfigError(
                "distill.negatives: bank gives the ranking term its candidates, and distill.contrast is 0: there is "
                "no ranking term, so it would change nothing; set distill.contrast > 0 (e.g. 0.1), or drop negatives"
            )
        if self.batch_size < 1:
            raise ConfigError(f"distill.batch_size must be >= 1, got {self.batch_size}")
        if not 1 <= self.length_chunks <= self.batch_size:
            raise ConfigError(
                f"distill.length_chunks: runs a batch is encoded in, 1 to batch_size ({self.batch_size}), "
                f"got {self.length_chunks}"
            )
        if self.sort_window < 0:
            raise ConfigError(
                f"distill.sort_window: batches sorted together (0 = random batches), got {self.sort_window}"
            )
        if self.epochs < 1:
            raise ConfigError(
                f"distill.epochs must be >= 1, got {self.epochs} (0 would export the untrained copy as best/)"
            )


@dataclass
class VocabExtensionSection(VocabGrowthSection):
    """Grow a `bert:` or `muse` student's vocabulary with the pieces its training texts need
    (see relkt.encoders.vocab_extension); the frozen teacher keeps its own (a teacher grows one in stage 1 with the
    teacher config's `extend_vocab`)."""

    key: ClassVar[str] = "student.extend_vocab"
    # The texts the new pieces are learned from: every training text (all), or with student.language_rows only the
    # taught languages' (taught), so the controls' replay (how many pairs, which languages) leaves the taught
    # languages' pieces as they are and the controls read as the base does.
    learn_from: Literal["all", "taught"] = "all"

    def validate(self) -> None:
        if self.learn_from not in ("all", "taught"):
            raise ConfigError(f"student.extend_vocab.learn_from must be all or taught, got {self.learn_from!r}")
        super().validate()


@dataclass
class LanguageRowsSection:
    """Teach new languages through their own token rows (relkt.encoders.language_rows): the student moves the
    token-table rows, vocabulary extension's among them, that the `langs` training texts read, that the other
    languages' training texts read fewer than `max_other_count` times, and that the `langs` texts read at least
    `min_own_ratio` times as often; every other weight stays the teacher's (or, with `rest_lr_multiplier`, moves at
    that fraction of the rate), so the languages the base model reads keep their embeddings, to within those rare
    rows."""

    # Languages taught through their own token rows, the rest frozen or slower (RowSubsetAdam); [] = off: the whole
    # student trains. Needs a trainable token table and student texts in these languages.
    langs: list[str] = field(default_factory=list)
    # A row the other languages' training texts (and the English sources) read this many times stays frozen; 1 = only
    # rows no other text reads (the others' embeddings then stay bit-identical).
    max_other_count: int = 20
    # A row also needs the `langs` texts to read it this many times for each time the other texts do; 0 = off. Names
    # pass max_other_count (rare everywhere) but parallel text spells them on both sides, so 2 keeps them, and the
    # English articles that name them, where the teacher put them.
    min_own_ratio: float = 2.0
    # Everything else (the network and the table's other rows) trains at this fraction of schedule.learning_rate;
    # 0 = frozen. E.g. 0.01: the rows at the rate that teaches them, the rest at a fine-tuning rate, so the pieces
    # the taught languages share with others still learn and the transformer adapts (replay the languages the base
    # reads in data.student_langs to hold them).
    rest_lr_multiplier: float = 0.0
    # How the table's other rows move when rest_lr_multiplier > 0: "" = as schedule.sparse_rows; lazy = only at steps
    # whose batch reads them, beside dense Adam on the chosen rows (Adam on every row of mUSE's table is ~100 ms a step
    # on 2 cores; a lazy rest costs the rows a batch reads).
    rest_rows: str = ""
    # Pairs drawn from data.corpus_dir for each student language not in `langs` (the languages replayed beside to
    # hold them, relkt teach's --controls); 0 = data.corpus_pairs_per_lang, as the taught ones. Replay holds a
    # language the base reads; it need not teach it, so the taught languages can have more pairs for the same steps.
    replay_pairs_per_lang: int = 0
    # Count the replayed languages' own student texts among the others' reads, so the rows they read stay frozen too.
    # false: the others are the training pool's other languages and the English sources (how new_languages,
    # teach_questions and relkt teach were measured); true where pairs are all a run holds of a language to protect.
    freeze_replayed_rows: bool = False

    def validate(self) -> None:
        if self.replay_pairs_per_lang < 0:
            raise ConfigError(
                f"student.language_rows.replay_pairs_per_lang must be >= 0 (0 = data.corpus_pairs_per_lang), "
                f"got {self.replay_pairs_per_lang}"
            )
        if self.max_other_count < 1:
            raise ConfigError(
                f"student.language_rows.max_other_count must be >= 1 (1 = rows only these languages read), "
                f"got {self.max_other_count}"
            )
        if not math.isfinite(self.min_own_ratio) or self.min_own_ratio < 0:
            raise ConfigError(
                f"student.language_rows.min_own_ratio must be a finite number >= 0 (0 = off), got {self.min_own_ratio}"
            )
        if not math.isfinite(self.rest_lr_multiplier) or self.rest_lr_multiplier < 0:
            raise ConfigError(
                f"student.language_rows.rest_lr_multiplier must be a finite number >= 0 (0 = the rest frozen), "
                f"got {self.rest_lr_multiplier}"
            )
        if self.rest_rows not in ("", "lazy", "dense"):
            raise ConfigError(
                f"student.language_rows.rest_rows must be lazy, dense or empty (= schedule.sparse_rows), "
                f"got {self.rest_rows!r}"
            )


@dataclass
class StudentEncoderSection(EncoderSection):
    """The student's encoder: a copy of the teacher unless a spec is given, with its vocabulary extension and the
    token rows it trains."""

    spec: str = ""  # "" = a copy of the teacher
    extend_vocab: VocabExtensionSection = field(default_factory=VocabExtensionSection)
    language_rows: LanguageRowsSection = field(default_factory=LanguageRowsSection)


@dataclass
class StudentConfig:
    """`python -m relkt.train_student --config FILE [--set key=value ...]`."""

    # the run folder: checkpoints, best/, last/, logs, cached teacher targets
    output_dir: str = field(default="runs/student", metadata=NON_EMPTY)
    # every random draw of the run (data order, sampling, initialization)
    seed: int = field(default=0, metadata=within(*SEED_RANGE))
    smoke: bool = False  # shrink data, batch and evaluation for a quick end-to-end check
    # Keras progress: 0 none, 1 a bar on a terminal (one line per pass otherwise), 2 one line per pass
    verbose: int = field(default=1, metadata=within(0, 2))
    teacher: EncoderSection = field(default_factory=lambda: EncoderSection(spec="hub:runs/teacher/best"))
    student: StudentEncoderSection = field(default_factory=StudentEncoderSection)
    data: StudentDataSection = field(default_factory=StudentDataSection)
    distill: DistillSection = field(default_factory=DistillSection)
    eval: EvalSection = field(default_factory=lambda: EvalSection(primary_metric="lareqa/mAP"))
    schedule: ScheduleSection = field(default_factory=lambda: ScheduleSection(learning_rate=1e-3))
    distribute: DistributeSection = field(default_factory=DistributeSection)

    def apply_smoke(self) -> StudentConfig:
        if self.smoke:
            self.data.max_train_questions = min(self.data.max_train_questions or 32, 32)
            self.distill.batch_size = min(self.distill.batch_size, 8)
            self.distill.epochs = min(self.distill.epochs, 1)
            self.eval.every_steps = min(self.eval.every_steps, 5)
            self.eval.max_questions = min(self.eval.max_questions or 64, 64)
            self.data.corpus_pairs_per_lang = min(self.data.corpus_pairs_per_lang or 32, 32)
            rows = self.student.language_rows  # the replayed languages' own share shrinks with the rest
            rows.replay_pairs_per_lang = min(rows.replay_pairs_per_lang, 32)
            self.data.corpus_dev_pairs = min(self.data.corpus_dev_pairs, 64)
            self.data.more_pairs = {folder: min(share or 32, 32) for folder, share in self.data.more_pairs.items()}
        return self
