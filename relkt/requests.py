"""The typed arguments of the scoring and report functions that have a command line (`relkt.coverage`,
`relkt.audit`, `relkt.interpolate`, `relkt.teach`): a Python user builds one of these instead of faking argv, and the
CLIs turn their flags into the same objects at the edge (`Request(**vars(flags))`). Pool fields left None take the
`config` run's, else PoolSection's defaults (`relkt.cli.pool_settings`)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PoolRequest:
    """Which pool: the source, its split and the languages (None: the --config run's, else the defaults)."""

    data_dir: str | None = None
    format: str | None = None
    test_dir: str | None = None
    test_format: str | None = None
    split: str = "test"
    split_fractions: tuple[float, float, float] | None = None
    split_seed: int | None = None
    split_unit: str | None = None
    allow_test_overlap: bool | None = None
    folds: int | None = None
    fold: int | None = None
    langs: str | None = None  # comma-separated codes (None: all)
    config: str | None = None  # a run's config.yaml: its pool settings


@dataclass
class AuditRequest(PoolRequest):
    """`relkt.audit`: every encoder's tokenizer on the pool's texts."""

    encoder: list[str] = field(default_factory=list)  # NAME=SPEC or SPEC
    texts: str = "questions"  # questions | candidates | both
    output: str | None = None  # JSON report


@dataclass
class CoverageRequest(AuditRequest):
    """`relkt.coverage`: languages from pair files, LAReQA's bias analyses on the pool, or both as one report."""

    pairs_dir: str | None = None
    dev_pairs: int = 500
    held_out_sources: str = ""
    questions_dir: str | None = None
    center: bool = False
    learned: str = ""
    tokenizers_only: bool = False
    bias: bool = False
    new_lang: str | None = None
    pca_langs: str = "en,de"
    top_k: int = 100
    bootstrap: int = 1000
    batch_size: int = 128
    seed: int = 0
    output: str = "reports/coverage"


@dataclass
class InterpolateRequest(PoolRequest):
    """`relkt.interpolate`: WiSE-FT mixes of a teacher and its student, alpha chosen on dev."""

    teacher: str = ""
    student: str = ""
    alphas: str = "0,0.25,0.5,0.75,1"
    output: str | None = None
    primary_metric: str = "xx_en/P@1"
    xx_en_unit: tuple[str, ...] = ()
    split: str = "dev"
    max_questions: int = 0
    seed: int = 0
    batch_size: int = 128


@dataclass
class TeachRequest:
    """`relkt.teach`: teach languages from pair files and report what changed (coverage before and after)."""

    langs: str = ""  # comma-separated codes taught (their own token rows train)
    pairs_dir: str = ""  # folder of {lang}.tsv pair files (source, en, xx)
    output: str = "runs/teach"  # OUTPUT/student (the run), OUTPUT/coverage, OUTPUT/report.md, OUTPUT/teach.json
    questions_dir: str | None = None  # question files (id, split, xx, en): `train` rows train, the others are scored
    controls: str = ""  # comma-separated languages the base reads: trained beside (their rows frozen) and scored
    watch: str = ""  # comma-separated languages the base reads, scored before and after, never trained on: forgetting
    qa_dir: str | None = None  # the English QA source whose documents the d and dq terms read (default: data.data_dir)
    test_dir: str | None = None  # a QA test source scored whole before and after (forgetting); kept unseen
    teacher: str | None = None  # the base encoder spec (default: the recipe's, muse)
    config: str | None = None  # the recipe (default: relkt/recipes/teach_student.yaml)
    set: list[str] = field(default_factory=list)  # KEY=VALUE overrides of the recipe, applied last
    smoke: bool = False  # shrink the run for a quick check
    batch_size: int = 128  # texts per encoding batch in the report
