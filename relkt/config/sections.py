"""Config sections shared by the trainers."""

from __future__ import annotations

import dataclasses
import os
import re
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from relkt.errors import ConfigError
from relkt.names import ALL, named

# Field metadata of a count that may grow when a finished run is run again: training it further is the same run, as
# if it had been started with the larger count (epoch e's data order depends only on (seed, e)). It may not shrink.
# relkt.training.run_folder reads it through `growable_keys`.
GROWS_ON_RESUME = {"grows_on_resume": True}
SEED_RANGE = (0, 2**32 - 1)  # numpy's and Keras's seeds


BATCH_MAX = 2**31 - 1  # what TensorFlow's batch ops take (int32 sizes)


def within(lo: float | None = None, hi: float | None = None, above: float | None = None, **more) -> dict:
    """Field metadata: the value's bounds ([lo, hi], or > above), checked by relkt.config.config_io whenever a config
    loads, `--print-config` included: one place a setting's range is declared."""
    return {"range": (lo, hi, above), **more}


NON_EMPTY = {"non_empty": True}  # a path setting that must name something (an empty one would mean the current folder)

# A setting that names languages (or sources) or says `all`: `all` is every one found, and an empty list is refused
# (relkt.config.config_io), never read as "every one". Read it with `chosen` or `named`.
Names = Literal["all"] | list[str]


def names_keys(cls: type, prefix: str = "") -> set[str]:
    """The dotted keys of config class `cls` typed `Names`: those an older relkt left empty to mean every one."""
    keys, hints = set(), typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if hints[f.name] == Names:
            keys.add(prefix + f.name)
        elif dataclasses.is_dataclass(hints[f.name]):
            keys |= names_keys(hints[f.name], f"{prefix}{f.name}.")
    return keys


# What a split keeps on one side (relkt.data.splits.SPLIT_UNITS; config imports no data code).
SPLIT_UNITS = ("article", "context", "question")


@dataclass
class PoolSection:
    """Where the data is and how its articles split: what every stage and scoring CLI shares (the CLIs' pool
    flags, `relkt.cli.pool_flags.add_pool_arguments`, take their defaults from here)."""

    data_dir: str | None = None  # the training source (a folder or file); default: $RELKT_DATA_DIR, cache, download
    # Its format, a name of relkt.data.qa_format.QA_FORMATS: squad (SQuAD JSON, with or without sentence breaks), mlqa,
    # jsonl, or one the user registers; auto = told by the files, with an error naming them when it cannot be.
    format: str = "auto"
    # The test source, scored whole (every article); "" = the test split of data_dir, as before. A test article,
    # context or question id that data_dir also holds is refused. Dev always comes from data_dir.
    test_dir: str = ""
    test_format: str = "auto"  # the test source's format, as `format`
    # More test sources beside test_dir (each a QA folder or file, format told by its files), e.g. XQuAD-R and MLQA dev:
    # each kept unseen as test_dir is (refused at a run's start if it shares an article, context or question id with
    # what trains) and scored whole by `relkt evaluate --config RUN --split test`, one result each.
    more_test: list[str] = field(default_factory=list)
    split_fractions: list[float] = field(default_factory=lambda: [0.7, 0.1, 0.2])  # train, dev, test units
    split_seed: int = field(default=0, metadata=within(0, 2**32 - 1))  # seed of the split
    # What the split keeps together: article (no paragraph of a test article is trained on), context (a test question's
    # paragraph is unseen, its article's other paragraphs may train), question (CL-ReLKT's reference code: a
    # question-level cut, a test question's own paragraph is a training positive). A qas_id is on one side in every
    # language whatever the unit. context and question need allow_test_overlap; runs record the measured overlap.
    split_unit: Literal["article", "context", "question"] = "article"
    allow_test_overlap: bool = False  # accept a split_unit that lets test questions' contexts or articles train
    folds: int = 0  # k-fold cross-validation: K > 1 cuts the shuffled articles into K folds (0 = split_fractions alone)
    fold: int = 0  # with folds: the test fold (0 .. K-1); dev is carved from the other folds by the dev:train ratio
    with_context: bool = False  # candidate text = sentence + its paragraph
    max_train_questions: int = 0  # 0 = all; > 0 keeps N (source) questions drawn with the seed (smoke runs)

    def validate(self) -> None:
        if self.split_unit not in SPLIT_UNITS:
            raise ConfigError(f"data.split_unit: {self.split_unit!r} is not a unit; valid: {', '.join(SPLIT_UNITS)}")
        if self.split_unit != "article" and not self.allow_test_overlap:
            what = "paragraph and article" if self.split_unit == "question" else "article"
            raise ConfigError(
                f"data.split_unit: {self.split_unit!r} lets a test question's {what} into training (its test set is "
                "then not unseen); set data.allow_test_overlap: true as well to run it on purpose (every result "
                "states the unit and the measured overlap), or keep split_unit: article"
            )
        if len(self.split_fractions) != 3 or min(self.split_fractions) < 0 or abs(sum(self.split_fractions) - 1) > 1e-6:
            raise ConfigError(f"data.split_fractions: three fractions >= 0 summing to 1, got {self.split_fractions}")
        if (
            self.folds < 0
            or self.folds == 1
            or (self.folds and not 0 <= self.fold < self.folds)
            or (not self.folds and self.fold)
        ):
            raise ConfigError(
                f"data.folds / data.fold: folds is 0 (no k-fold) or >= 2, and 0 <= fold < folds; got "
                f"folds={self.folds}, fold={self.fold}"
            )
        if self.max_train_questions < 0:
            raise ConfigError(f"data.max_train_questions must be >= 0 (0 = all), got {self.max_train_questions}")
        if not isinstance(self.more_test, list) or not all(isinstance(x, str) and x for x in self.more_test):
            raise ConfigError(f"data.more_test: a list of QA folders or files, got {self.more_test!r}")
        if self.more_test and not self.test_dir:
            raise ConfigError("data.more_test: more test sources need a first one, data.test_dir")
        for key in ("format", "test_format"):  # the names themselves are checked against relkt.data's format table
            if not isinstance(getattr(self, key), str) or not getattr(self, key):
                raise ConfigError(f"data.{key}: a format name (auto, squad, ...), got {getattr(self, key)!r}")


@dataclass
class DataSection(PoolSection):
    """The teacher's data: which question and answer languages of the pool it trains on."""

    train_langs: list[str] = field(default_factory=lambda: ["en"])  # question languages trained on
    answer_langs: list[str] = field(default_factory=lambda: ["en"])  # languages of positives/negatives
    answer_unit: Literal["sentence", "passage"] = "sentence"  # answer sentences (LAReQA) or paragraphs (CL-ReLKT)
    # More QA sources (folders or files, format told by the files) whose train_langs questions all train, never dev
    # or test: e.g. an English QA set beside a benchmark's training folds (../shared/data/squad-train). Each is
    # refused at start if it shares an article, context or question id with data_dir or test_dir.
    more_qa: list[str] = field(default_factory=list)

    def validate(self) -> None:
        super().validate()
        if not self.train_langs or not self.answer_langs:
            raise ConfigError("data.train_langs and data.answer_langs must name at least one language")
        if not isinstance(self.more_qa, list) or not all(isinstance(x, str) and x for x in self.more_qa):
            raise ConfigError(f"data.more_qa: a list of QA folders or files, got {self.more_qa!r}")


@dataclass
class EncoderSection:
    """The encoder a stage trains or scores: its spec and the options handed to its constructor."""

    # KIND or KIND:ARG, KIND a name of relkt.encoders.encoder_kind.ENCODER_KINDS: ngram | minilm | bert:PATH | muse |
    # muse:DIR | hub:HANDLE | muse-hub | muse-large-hub, or a kind the user registers
    spec: str = "ngram"
    options: dict[str, Any] = field(default_factory=dict)  # passed to the encoder (dim, max_length ...)


# The English answer units of the XX->EN protocol (relkt.data.english_answer_units.UNITS; config imports no data code).
XX_EN_UNITS = ("article", "paragraph", "sentence", "scored_article", "scored_paragraph")
_UNIT = "|".join(XX_EN_UNITS)
# The keys LareqaEvaluator.flat reports (a language code between the family and the metric, or none for the mean),
# and XxEnUnitEvaluator.flat's xx_en_UNIT/... with eval.xx_en_units.
PRIMARY_METRIC = re.compile(
    r"^(lareqa(/[a-z]{2,3})?/(mAP|mAP@\d+|P@\d+|R@\d+|hit@\d+|MRR)"
    rf"|xx_en(_({_UNIT}))?(/[a-z]{{2,3}})?/(P@(1|5|10)|MRR)|bitext(/[a-z]{{2,3}})?/(P@1|cos)|corpus(/[a-z]{{2,3}})?/P@1|joint/P@1)$"
)


@dataclass
class EvalSection:
    """Dev evaluation during training (the metrics of relkt evaluate on the dev split)."""

    every_steps: int = 100  # evaluate on dev every N training steps
    langs: Names = ALL  # the dev languages, or all: every language found
    # The dev questions scored, among `langs` (their candidates stay every one of `langs`: XX->EN needs English's);
    # all = every language of `langs`. A student group's dev metric reads its own languages this way.
    question_langs: Names = ALL
    primary_metric: str = "xx_en/en/P@1"  # any key relkt evaluate reports, e.g. lareqa/mAP, xx_en/P@1
    max_questions: int = field(default=0, metadata=within(0))  # 0 = all dev questions
    batch_size: int = field(default=128, metadata=within(1, BATCH_MAX))  # texts per encoding batch in dev evaluation
    at_start: bool = False  # also evaluate before the first step: the starting point, best export until beaten
    # Count every_steps within each epoch, evaluating after its first step and every every_steps after that (CL-ReLKT's
    # scripts: `i % eval_step == 0` on the epoch's batch index): the first evaluation is of a model one step in.
    within_epoch: bool = False
    # N > 0: evaluate N times an epoch, within it, every (the epoch's full batches // N) steps from its first, in place
    # of every_steps (CL-ReLKT's teacher script: 4, `eval_step = num_steps // 4`).
    per_epoch: int = 0
    # Also score dev questions with CL-ReLKT's XX->EN protocol at these English units (article, paragraph,
    # sentence: every unit of the data set is a candidate, as relkt evaluate --xx-en-unit); primary_metric may then
    # be e.g. xx_en_article/P@1, selecting on the unit the paper scores.
    xx_en_units: list[str] = field(default_factory=list)
    # More evaluators by their registered name (relkt.metrics.evaluator: a class with `for_pool`), each built on the
    # dev pool; their metrics are `NAME/...`, and primary_metric may be one of them.
    evaluators: list[str] = field(default_factory=list)

    def validate(self) -> None:
        outside = [x for x in named(self.question_langs) or [] if self.langs != ALL and x not in self.langs]
        if outside:
            raise ConfigError(f"eval.question_langs: {', '.join(outside)} not in eval.langs {self.langs}")
        bad = [u for u in self.xx_en_units if u not in XX_EN_UNITS]
        if bad:
            raise ConfigError(f"eval.xx_en_units: {bad} are not units; valid: {', '.join(XX_EN_UNITS)}")
        unit = re.match(rf"^xx_en_({_UNIT})/", self.primary_metric)
        if unit and unit.group(1) not in self.xx_en_units:
            raise ConfigError(
                f"eval.primary_metric {self.primary_metric!r} needs eval.xx_en_units to list {unit.group(1)!r}"
            )
        if self.every_steps < 1:
            raise ConfigError(f"eval.every_steps must be >= 1, got {self.every_steps}")
        if self.per_epoch < 0:
            raise ConfigError(f"eval.per_epoch must be >= 0 (0: every eval.every_steps), got {self.per_epoch}")
        if not PRIMARY_METRIC.match(self.primary_metric) and self.primary_metric.split("/")[0] not in self.evaluators:
            raise ConfigError(
                f"eval.primary_metric {self.primary_metric!r} is not a metric the dev evaluation reports; valid: "
                "lareqa/{mAP,mAP@K,P@K,R@K,hit@K,MRR}, lareqa/LANG/..., xx_en/{P@1,P@5,P@10,MRR}, xx_en/LANG/..., "
                "xx_en_UNIT/... (with eval.xx_en_units), "
                "bitext/{P@1,cos}, bitext/LANG/..., corpus/P@1, corpus/LANG/P@1 (students with data.corpus_dir), "
                "NAME/... of an evaluator in eval.evaluators "
                "(e.g. lareqa/mAP, xx_en/de/P@1)"
            )
        if self.batch_size < 1:
            raise ConfigError(f"eval.batch_size must be >= 1, got {self.batch_size}")


@dataclass
class ScheduleSection:
    """Learning rate halving on plateau and early stopping, both counted in evaluations."""

    learning_rate: float = 1e-5  # Adam's learning rate at the start (after warmup)
    lr_factor: float = 0.5  # the rate is multiplied by this on a plateau
    # evaluations without improvement before the rate is multiplied by lr_factor
    lr_patience: int = field(default=2, metadata=within(0))
    min_learning_rate: float = field(default=1e-8, metadata=within(0))  # a plateau never lowers the rate below this
    # evaluations without improvement before training stops
    early_stop_patience: int = field(default=6, metadata=within(0))
    checkpoint_every: int = field(default=0, metadata=within(0))  # steps; 0 = at every evaluation and epoch end
    max_steps: int = 0  # a step budget: stop (evaluated, cleanly) after this many steps; 0 = none
    # Linear warmup from 0 to the rate over the first N steps of the run: Adam's first steps move every weight
    # by ~the full rate whatever its gradient, which knocks a pretrained encoder off before it has learned anything.
    warmup_steps: int = 0
    # After warmup, the rate falls to 0 by the run's last step (a student: distill.epochs x its batches an epoch),
    # in a line or a half cosine; plateau halvings multiply on top. Why: a student still gaining at its end
    # (docs/results/best_recipe_pieces.md) keeps its full rate to the last step unless a noisy dev plateau halves it.
    # A finished run trained on to more epochs decays over its new length (its rate rises again from where it was).
    decay: Literal["none", "linear", "cosine"] = "none"
    # Embedding tables (muse's token table, BERT's word table): "dense" is Keras's Adam (and the paper's TF1 Adam):
    # every row every step, unread rows moving on their momentum; "lazy" moves only the rows a batch read, and only
    # their moments decay (relkt.stages.sparse_adam): a trainable table then costs about what a frozen one does.
    # Measured (docs/results/scale.md): level on the quickstart student, worse on language rows (rare rows move less).
    sparse_rows: Literal["lazy", "dense"] = "dense"

    def validate(self) -> None:
        if self.sparse_rows not in ("lazy", "dense"):
            raise ConfigError(f"schedule.sparse_rows must be lazy or dense, got {self.sparse_rows!r}")
        if not 0 < self.lr_factor <= 1:
            raise ConfigError(f"schedule.lr_factor must be in (0, 1], got {self.lr_factor}")
        if self.learning_rate <= 0:
            raise ConfigError(f"schedule.learning_rate must be > 0, got {self.learning_rate}")
        if self.decay not in ("none", "linear", "cosine"):
            raise ConfigError(f"schedule.decay must be none, linear or cosine, got {self.decay!r}")
        if self.warmup_steps < 0:
            raise ConfigError(f"schedule.warmup_steps must be >= 0 (0 = no warmup), got {self.warmup_steps}")
        if self.max_steps < 0:
            raise ConfigError(f"schedule.max_steps must be >= 0 (0 = no budget), got {self.max_steps}")


@dataclass
class VocabGrowthSection:
    """Grow an encoder's vocabulary with the pieces its training texts need (see relkt.encoders.vocab_extension and
    relkt.encoders.sentencepiece_extension); `key` is the setting's dotted name in its config, for messages."""

    key: ClassVar[str] = "extend_vocab"
    enabled: bool = False  # grow the vocabulary with what the training texts need
    min_count: int = 1  # a piece must be needed this many times in the training texts
    # New rows: mean row + noise of the old rows' spread, mean row, [UNK]'s row, or (muse only) the mean of the base
    # rows that spell the new piece (`compose`: a learned Greek piece starts where its letters were).
    init: Literal["random", "mean", "unk", "compose"] = "random"
    # Scripts cut by the extended tokenizer's own split (Unicode script names); add "Han" to cut Chinese into
    # learned pieces (with `pieces`) instead of keras-hub's one ideograph per token.
    split_scripts: list[str] = field(
        default_factory=lambda: ["Thai", "Lao", "Khmer", "Myanmar", "Hiragana", "Katakana"]
    )
    # Multi-character pieces to learn; 0 = single characters. bert: BPE pieces of the split_scripts
    # (relkt.encoders.vocab_extension.learn_script_pieces; a Thai character is a letter: pieces carry more meaning and
    # shorten Thai text ~3x). muse: a unigram model of this size, whose pieces holding an unreadable character (or one
    # of piece_scripts) are added.
    pieces: int = 0
    # muse only: also keep the learned pieces (`pieces` > 0) that hold a character of these Unicode scripts, though
    # the base reads them; e.g. [Greek], which mUSE spells letter by letter (~5 pieces a word). Such text then
    # reads new rows from step 0 (start them with init: compose).
    piece_scripts: list[str] = field(default_factory=list)
    # muse only: also keep the learned pieces that hold one of these characters; a language's own letters in a
    # script the base's languages share (Vietnamese's ă đ ơ ư and the tone-marked vowels no other language writes):
    # its words get word-sized rows while text without those letters (English, Spanish) keeps its ids.
    piece_chars: str = ""
    # The new rows' learning rate as a multiple of schedule.learning_rate (relkt.stages.sparse_adam): at a
    # fine-tuning rate (5e-5) Adam moves a row at most ~0.03 in an epoch of 572 steps, half of MiniLM's
    # per-dimension embedding spread (0.055), so untrained rows hardly learn without it.
    new_rows_lr_multiplier: float = 1.0

    def extension_options(self) -> dict[str, Any]:
        """The settings `relkt.encoders.registry.extend_encoder_vocabulary` takes, by name."""
        names = ("min_count", "init", "split_scripts", "pieces", "piece_scripts", "piece_chars")
        return {name: getattr(self, name) for name in names}

    def validate(self) -> None:
        k = self.key
        if self.min_count < 1:
            raise ConfigError(f"{k}.min_count must be >= 1, got {self.min_count}")
        if self.pieces < 0:
            raise ConfigError(f"{k}.pieces must be >= 0 (0 = single characters), got {self.pieces}")
        if self.piece_scripts and self.pieces <= 0:
            raise ConfigError(f"{k}.piece_scripts={self.piece_scripts} keeps learned pieces: set {k}.pieces > 0")
        if self.piece_chars and self.pieces <= 0:
            raise ConfigError(f"{k}.piece_chars={self.piece_chars!r} keeps learned pieces: set {k}.pieces > 0")
        if any(c.isspace() for c in self.piece_chars):
            raise ConfigError(f"{k}.piece_chars={self.piece_chars!r}: list letters only, no spaces")
        if self.new_rows_lr_multiplier <= 0:
            raise ConfigError(f"{k}.new_rows_lr_multiplier must be > 0, got {self.new_rows_lr_multiplier}")


@dataclass
class DistributeSection:
    """Where training runs: TensorFlow's own distribution strategies, and mixed precision."""

    strategy: Literal["default", "mirrored", "multi_worker", "tpu"] = "default"  # tf.distribute strategy
    devices: Names = ALL  # mirrored: the devices, or all: every local GPU (or the CPU)
    tpu_address: str = ""  # tpu: the TPUClusterResolver address ("" = the local/default TPU)
    # Keras mixed policy (embeddings, losses stay float32)
    mixed_precision: Literal["none", "bfloat16", "float16"] = "none"

    def validate(self) -> None:
        """The devices' names and the environment a strategy needs, before anything is written (whether a named
        device exists is checked when the strategy is made: it needs TensorFlow)."""
        bad = [d for d in named(self.devices) or [] if not DEVICE_NAME.match(str(d))]
        if bad:
            raise ConfigError(
                f"distribute.devices: {bad[0]!r} is not a device name (e.g. /gpu:0, /cpu:0, "
                "/job:worker/replica:0/task:0/device:GPU:0)"
            )
        if self.devices != ALL and self.strategy != "mirrored":
            raise ConfigError(f"distribute.devices names devices for strategy mirrored, not {self.strategy}")
        if self.strategy == "multi_worker" and not os.environ.get("TF_CONFIG"):
            raise ConfigError(
                "distribute.strategy: multi_worker needs TF_CONFIG describing the cluster and this task (unset here)"
            )


DEVICE_NAME = re.compile(r"^(/job:[\w-]+(/replica:\d+)?(/task:\d+)?)?/(device:)?(cpu|gpu|tpu|CPU|GPU|TPU):\d+$")


def growable_keys(cls: type, prefix: str = "") -> set[str]:
    """The dotted keys of config class `cls` whose fields carry GROWS_ON_RESUME (e.g. distill.epochs)."""
    keys, hints = set(), typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        if f.metadata.get("grows_on_resume"):
            keys.add(prefix + f.name)
        if dataclasses.is_dataclass(hints[f.name]):
            keys |= growable_keys(hints[f.name], f"{prefix}{f.name}.")
    return keys
