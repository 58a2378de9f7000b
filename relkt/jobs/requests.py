"""The typed arguments of the library's jobs that are not a stage (`relkt.api.coverage`, `audit`, `interpolate`,
`teach`): a Python caller builds one of these; the command lines (`relkt.cli`) parse their flags into the same
objects. Lists are lists, encoders a mapping of name to spec; every field is checked against its annotation when the
request is made, so a wrong type is one ConfigError naming the field. Pool fields left None take the `config`
run's, else `PoolSection`'s defaults (`relkt.jobs.pool.pool_settings`: the one place they are filled in)."""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field

from relkt.config.sections import BATCH_MAX, within
from relkt.errors import ConfigError


def _matches(value, hint) -> bool:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is typing.Any:
        return True
    if origin in (typing.Union, types.UnionType):
        return any(_matches(value, a) for a in args)
    if hint is type(None):
        return value is None
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if origin is list:
        return isinstance(value, list) and all(_matches(v, args[0]) for v in value)
    if origin is tuple:
        if not isinstance(value, tuple):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(_matches(v, args[0]) for v in value)
        return len(value) == len(args) and all(_matches(v, a) for v, a in zip(value, args))
    if origin is dict:
        return isinstance(value, dict) and all(_matches(k, args[0]) and _matches(v, args[1]) for k, v in value.items())
    return isinstance(value, hint)


def _name(hint) -> str:
    return str(hint).replace("typing.", "").replace("NoneType", "None")


class Checked:
    """Checks every field against its annotation and its declared range (`within`, as a config's sections declare
    them) after construction (a dataclass mixin): a request made in code is refused as a command line's would be."""

    def __post_init__(self) -> None:
        hints = typing.get_type_hints(type(self))
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if not _matches(value, hints[f.name]):
                raise ConfigError(
                    f"{type(self).__name__}.{f.name}: expected {_name(hints[f.name])}, got {type(value).__name__} "
                    f"{value!r}"
                )
            lo, hi, _ = f.metadata.get("range", (None, None, None))
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            if number and ((lo is not None and value < lo) or (hi is not None and value > hi)):
                span = f"{lo if lo is not None else '-inf'} .. {hi if hi is not None else 'inf'}"
                raise ConfigError(f"{type(self).__name__}.{f.name}: {value!r} is out of range; valid: {span}")


@dataclass
class PoolRequest(Checked):
    """Which pool: the source, its split and the languages (None: the `config` run's, else the defaults)."""

    data_dir: str | None = None
    format: str | None = None
    test_dir: str | None = None
    test_format: str | None = None
    more_test: list[str] | None = None  # more test sources, each scored whole as its own result (split test)
    split: str = "test"
    split_fractions: tuple[float, float, float] | None = None
    split_seed: int | None = field(default=None, metadata=within(0, 2**32 - 1))
    split_unit: str | None = None
    allow_test_overlap: bool | None = None
    folds: int | None = field(default=None, metadata=within(0))
    fold: int | None = field(default=None, metadata=within(0))
    langs: list[str] | None = None  # None: every language found
    config: str | None = None  # a run's config.yaml: its pool settings
    with_context: bool = False  # candidate text = sentence + its paragraph


@dataclass
class AuditRequest(PoolRequest):
    """Every encoder's tokenizer on the pool's texts."""

    encoders: dict[str, str] = field(default_factory=dict)  # name -> spec, the first the baseline
    texts: str = "questions"  # questions | candidates | both (api.audit returns its report; it writes nothing)


@dataclass
class CoverageRequest(AuditRequest):
    """Languages from pair files, LAReQA's bias analyses on the pool, or both as one report."""

    pairs_dir: str | None = None
    dev_pairs: int = field(default=500, metadata=within(0))  # 0: none held out (a report then says so per file)
    held_out_sources: list[str] = field(default_factory=list)
    other_domain: dict[str, str] = field(default_factory=dict)  # lang -> a source scored whole as another domain
    questions_dir: str | None = None
    qa_test_dir: str | None = None  # a QA source scored whole: each language's answer retrieval, in it and XX->EN
    center: bool = False
    learned: list[str] = field(default_factory=list)
    tokenizers_only: bool = False
    bias: bool = False
    new_lang: str | None = None
    pca_langs: list[str] = field(default_factory=lambda: ["en", "de"])
    top_k: int = field(default=100, metadata=within(1))
    bootstrap: int = field(default=1000, metadata=within(1))
    batch_size: int = field(default=128, metadata=within(1, BATCH_MAX))
    seed: int = field(default=0, metadata=within(0, 2**32 - 1))
    output: str = "reports/coverage"


@dataclass
class InterpolateRequest(PoolRequest):
    """WiSE-FT mixes of a teacher and its student, alpha chosen on dev."""

    teacher: str = ""
    student: str = ""
    alphas: list[float] = field(default_factory=lambda: [0.0, 0.25, 0.5, 0.75, 1.0])
    output: str | None = None
    primary_metric: str = "xx_en/P@1"
    xx_en_units: list[str] = field(default_factory=list)
    split: str = "dev"
    max_questions: int = field(default=0, metadata=within(0))  # 0 = all
    seed: int = field(default=0, metadata=within(0, 2**32 - 1))
    batch_size: int = field(default=128, metadata=within(1, BATCH_MAX))


@dataclass
class TeachRequest(Checked):
    """Teach languages from pair files and report what changed (coverage before and after)."""

    langs: list[str] = field(default_factory=list)  # the languages taught (their own token rows train)
    pairs_dir: str = ""  # folder of {lang}.tsv pair files (source, en, xx)
    output: str = "runs/teach"  # OUTPUT/student (the run), OUTPUT/coverage, OUTPUT/report.md, OUTPUT/teach.json
    questions_dir: str | None = None  # question files (id, split, xx, en): `train` rows train, the others are scored
    # lang -> a source of its pair file held out whole, the report's bitext of another domain; None: one chosen for
    # each taught language (relkt.jobs.teach.choose_other_domain); {}: none
    other_domain: dict[str, str] | None = None
    controls: list[str] = field(default_factory=list)  # languages the base reads: trained beside and scored
    watch: list[str] = field(default_factory=list)  # languages the base reads, scored, never trained on
    qa_dir: str | None = None  # the English QA source whose documents the d and dq terms read (default: data.data_dir)
    test_dir: str | None = None  # a QA test source scored whole before and after (forgetting); kept unseen
    # a QA source in the taught languages (any format relkt reads, e.g. MLQA dev), scored whole before and after:
    # answer retrieval in each language (its questions against its own passages) and XX->EN; kept unseen
    qa_test_dir: str | None = None
    teacher: str | None = None  # the base encoder spec (default: the recipe's, muse)
    config: str | None = None  # the recipe (default: relkt/recipes/teach_student.yaml)
    set: list[str] = field(default_factory=list)  # KEY=VALUE overrides of the recipe, applied last
    smoke: bool = False  # shrink the run for a quick check
    batch_size: int = field(default=128, metadata=within(1, BATCH_MAX))  # texts per encoding batch in the report
