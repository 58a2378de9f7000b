"""Score an encoder: LAReQA over a split's pool, CL-ReLKT's XX->EN protocol at its answer units, and translation
retrieval on held-out pairs, as one `Evaluation` (what `relkt evaluate` prints and writes).

    from relkt import api
    from relkt.config import PoolSection

    result = api.score("muse", PoolSection(data_dir="../shared/data/xquad-r"), split="test")
    result.metric("xx_en_article/el/P@1"), result.results["lareqa"]["mAP"]
"""

from __future__ import annotations

import dataclasses
import logging
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from relkt.analysis.scoring_encoder import scoring_encoder
from relkt.config import PoolSection
from relkt.config.config_io import from_dict, read_config_file
from relkt.data.english_answer_units import UNITS
from relkt.data.scored_pool import read_scored_pool
from relkt.data.text import is_lang_code
from relkt.errors import ConfigError
from relkt.io import RUN_MARKER, atomic_write_text, claim_file, data_paths, live_run_holding, model_path, read_json
from relkt.metrics.evaluation import Evaluation, per_question_arrays, rank_choice_line
from relkt.metrics.evaluator import TextEncoder, named_evaluators
from relkt.metrics.result_files import (
    PAIR_KEY,
    adjusted_path,
    is_per_question_file,
    is_result_file,
    per_question_path,
    read_per_question,
    read_results_file,
    write_evaluation,
    write_result_pair,
)

# the results files' helpers and the Evaluation live below scoring; their names stay importable from here
__all__ = [
    "PAIR_KEY",
    "Evaluation",
    "adjusted_path",
    "best_export",
    "card_with_test",
    "is_per_question_file",
    "is_result_file",
    "per_question_arrays",
    "per_question_path",
    "rank_choice_line",
    "read_per_question",
    "read_results_file",
    "score",
    "score_sources",
    "write_evaluation",
    "write_result_pair",
]

log = logging.getLogger("relkt.evaluate")

CORPUS_DEV_PAIRS = 500  # the held-out pairs a language (StudentDataSection.corpus_dev_pairs's default)


def score(
    encoder: str | TextEncoder,
    data: PoolSection | None = None,
    split: str = "test",
    langs: Sequence[str] | None = None,
    xx_en_units: Sequence[str] = UNITS,
    max_length: int | None = None,
    corpus_dir: str | None = None,
    corpus_dev_pairs: int = CORPUS_DEV_PAIRS,
    batch_size: int = 64,
    progress: bool = True,
    output: str | Path | None = None,
    language_pairs: str | None = None,
    remove_language_subspace: int = 0,
    remove_language_means: bool = False,
    answer_context: bool = True,
    evaluators: Sequence[str] = (),
    rank_adjust: str = "none",
) -> Evaluation:
    """Score an encoder on one split of a QA source: LAReQA's pool and CL-ReLKT's XX->EN protocol.

    Args:
        encoder: a spec (`muse`, `muse:RUN/best`, `hub:DIR`, ...) or a built encoder.
        data: the source and its split (`PoolSection`: data_dir, format, split fractions, unit, seed, folds, test
            source); default: `PoolSection()`'s defaults.
        split: `train`, `dev`, `test` or `all`.
        langs: the languages scored (None: every one the source has).
        xx_en_units: CL-ReLKT's XX->EN at these English units (every unit of the source; `scored_*`: the scored
            questions' own documents); () for none.
        max_length: tokens a text, for a spec built here (default: whole texts for a kind that reads them whole,
            e.g. muse).
        corpus_dir: also translation retrieval on each language's held-out pairs there.
        corpus_dev_pairs: pairs a language held out there, as a student holds them out.
        batch_size: texts per encoding batch.
        progress: progress bars while encoding.
        output: write the results JSON here and its `.per_question.npz` beside it, both or neither.
        language_pairs: a folder of `{lang}.tsv` pair files the language directions are learned from with this
            encoder (relkt.jobs.language_bias; pairs holding a text of the pool are dropped first), for:
        remove_language_subspace: that many shared language directions projected out of every embedding (LSAR).
        remove_language_means: each text less its language's mean embedding.
        answer_context: a model that learned to mix each candidate with its paragraph (relkt.metrics.answer_context)
            is scored mixed; False scores its candidates as sentences alone.
        evaluators: more evaluators by their registered name (relkt.metrics.evaluator), each built on the pool;
            their metrics (`NAME/...`) are the results' `more_metrics`.
        rank_adjust: `none`; or the pool also ranked language-aware (relkt.metrics.language_aware_ranking), the
            result's `adjusted`: `auto` chooses the method and k on the same source's dev split when the test split
            is scored (never on the test pool), and cross-fits them by article halves when a pool is scored whole
            (each half's setting chosen on the other half); `center`, `csls:K`, `margin:K` fix one.

    Returns:
        An `Evaluation`: `results` (relkt evaluate's JSON layout), `per_question` (each question's scores, for
        significance tests), `metric(key)` for one flat metric.

    Example:
        >>> from relkt.config import PoolSection
        >>> result = score("ngram", PoolSection(data_dir="tiny-xquad-r"), split="all")  # doctest: +SKIP
        >>> result.metric("lareqa/mAP")  # doctest: +SKIP
    """
    from relkt.analysis.pool_scores import PoolScoreOptions, score_pool  # deferred: TensorFlow

    if not isinstance(encoder, str) and not callable(getattr(encoder, "encode", None)):
        raise ConfigError(f"encoder: expected a spec (e.g. 'muse') or a built encoder, got {type(encoder).__name__}")
    if data is not None and not isinstance(data, PoolSection):
        raise ConfigError(f"data: expected a PoolSection (or a stage config's data), got {type(data).__name__}")
    check_score_arguments(langs, xx_en_units, max_length, corpus_dir, corpus_dev_pairs, batch_size, progress, output)
    check_bias_arguments(language_pairs, remove_language_subspace, remove_language_means)
    if not isinstance(answer_context, bool):
        raise ConfigError(f"answer_context: True or False, got {answer_context!r}")
    if isinstance(evaluators, str) or not all(isinstance(x, str) for x in evaluators):
        raise ConfigError(f"evaluators: expected a list of evaluator names, got {evaluators!r}")
    unknown = [x for x in evaluators if x not in named_evaluators()]
    if unknown:
        raise ConfigError(
            f"evaluators: {unknown[0]!r} is not an evaluator that can be asked for by name; valid: "
            f"{', '.join(named_evaluators()) or 'none registered'}"
        )
    check_rank_adjust(rank_adjust)
    # a PoolSection made in code passes the checks a config file's `data:` does (types, finite numbers, ranges)
    settings = from_dict(type(data), dataclasses.asdict(data), "data") if data is not None else PoolSection()
    settings.validate()
    # one pass: every input read (before a model loads), the output claimed (before the encoding), scored, written
    scored = read_scored_pool(
        settings,
        split,
        langs,
        xx_en_units,
        choose_on_dev=rank_adjust == "auto",
        corpus_dir=corpus_dir and str(corpus_dir),
        corpus_dev_pairs=corpus_dev_pairs,
        language_pairs_dir=language_pairs and str(language_pairs),
        with_context=settings.with_context,
    )
    log.info("pool: %s", scored.described)
    if output is not None:  # the name as given ('x/' is a folder's)
        reads = data_paths(settings) + [path for path in [model_path(encoder)] if path is not None]
        for path in [output] + ([adjusted_path(output)] if rank_adjust != "none" else []):
            claim_file(path, is_result_file, "results JSON", reads=reads)
            claim_file(per_question_path(path), is_per_question_file, "per-question file", reads=reads)
    options = PoolScoreOptions(
        settings=settings,
        max_length=max_length,
        batch_size=batch_size,
        progress=progress,
        language_pairs=language_pairs and str(language_pairs),
        remove_language_subspace=remove_language_subspace,
        remove_language_means=remove_language_means,
        answer_context=answer_context,
        evaluators=tuple(evaluators),
        rank_adjust=rank_adjust,
        corpus_dir=corpus_dir and str(corpus_dir),
        corpus_dev_pairs=corpus_dev_pairs,
    )
    result = score_pool(encoder, scored, options)
    if output is not None:
        result.output = write_evaluation(result, output)
    return result


def check_score_arguments(
    langs: object,
    xx_en_units: object,
    max_length: object,
    corpus_dir: object,
    corpus_dev_pairs: object,
    batch_size: object,
    progress: object,
    output: object,
) -> None:
    """One ConfigError naming the first of `score`'s arguments whose type or range cannot mean anything."""

    def whole(value: object, low: int) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and value >= low

    def codes(value: object) -> bool:
        return not isinstance(value, str) and isinstance(value, Sequence) and all(isinstance(x, str) for x in value)

    checks = [
        ("langs", langs, langs is None or (codes(langs) and all(map(is_lang_code, langs))), "a list of codes or None"),
        ("xx_en_units", xx_en_units, codes(xx_en_units), f"a list of units ({', '.join(UNITS)} or scored_*)"),
        ("max_length", max_length, max_length is None or whole(max_length, 1), "a whole number >= 1 or None"),
        ("corpus_dir", corpus_dir, corpus_dir is None or isinstance(corpus_dir, (str, Path)), "a folder or None"),
        ("corpus_dev_pairs", corpus_dev_pairs, whole(corpus_dev_pairs, 1), "a whole number >= 1"),
        ("batch_size", batch_size, whole(batch_size, 1), "a whole number >= 1"),
        ("progress", progress, isinstance(progress, bool), "True or False"),
        ("output", output, output is None or isinstance(output, (str, Path)), "a file's path or None"),
    ]
    for name, value, ok, what in checks:
        if not ok:
            raise ConfigError(f"{name}: expected {what}, got {type(value).__name__} {value!r:.200}")
    if langs is not None and len(set(langs)) != len(langs):
        twice = sorted(x for x, n in Counter(langs).items() if n > 1)[:5]
        raise ConfigError(f"langs: names {', '.join(twice)} more than once; name each language once")


def check_bias_arguments(language_pairs: object, rank: object, means: object) -> None:
    """One ConfigError naming the first language-bias argument that cannot mean anything."""
    if language_pairs is not None and not isinstance(language_pairs, (str, Path)):
        raise ConfigError(f"language_pairs: expected a folder of pair files or None, got {language_pairs!r}")
    if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
        raise ConfigError(f"remove_language_subspace: directions projected out, a whole number >= 0, got {rank!r}")
    if not isinstance(means, bool):
        raise ConfigError(f"remove_language_means: True or False, got {means!r}")
    if language_pairs and not (rank or means):
        raise ConfigError("language_pairs: say what to remove (remove_language_subspace >= 1 or remove_language_means)")
    if (rank or means) and not language_pairs:
        raise ConfigError("remove_language_subspace / remove_language_means: name the pair files (language_pairs)")


def score_sources(encoder: str | TextEncoder, sources: Sequence[PoolSection], max_length: int | None = None, **options):
    """`score` on each of `sources` in turn (an Evaluation each, yielded as it is done), the encoder built once:
    `options` are `score`'s (split, langs, xx_en_units ...); each result names the spec it was built from."""
    built, spec = scoring_encoder(encoder, max_length)
    for data in sources:
        result = score(built, data, **options)
        for scored in (result, result.adjusted):
            if scored is not None:
                scored.results["setup"]["encoder"] = spec
        yield result


CARD_METRICS = re.compile(r"^(lareqa/mAP|xx_en/P@1|xx_en_article/P@1|xx_en_article/[a-z]{2,3}/P@1)$")


def card_with_test(best: Path, result: Evaluation, command: str) -> Path:
    """The model card of the export `best` written again with its test scores (`result`) and the command that made
    them; the card is relkt's own file in relkt's own export."""
    from relkt.encoders.export import read_metadata  # deferred: the export module loads TensorFlow
    from relkt.encoders.model_card import CARD_FILE, model_card  # deferred: beside it

    metrics = {k: v for k, v in sorted(result.flat().items()) if CARD_METRICS.match(k)}
    card = model_card(read_metadata(best), best, test={"metrics": metrics, "command": command})
    return atomic_write_text(best / CARD_FILE, card)


def check_rank_adjust(rank_adjust: object) -> None:
    """A ConfigError unless `rank_adjust` is none, auto or a setting (center, knn:K, csls:K, margin:K)."""
    from relkt.metrics.language_aware_ranking import RankSetting  # deferred: only when a setting is named

    if rank_adjust in ("none", "auto"):
        return
    if not isinstance(rank_adjust, str):
        raise ConfigError(
            f"rank_adjust: none, auto or a setting (center, knn:K, csls:K, margin:K), got {rank_adjust!r}"
        )
    try:
        RankSetting.parse(rank_adjust)
    except ValueError as e:
        raise ConfigError(f"rank_adjust: none, auto or a setting ({e})") from None


def read_best_step(best: Path) -> str:
    """The training step an export was taken at, as its relkt.json records it ("?" when it does not)."""
    try:
        training = read_json(best / "relkt.json", "relkt.json").get("training") or {}
    except (OSError, ValueError):
        return "?"
    step = training.get("step", training.get("global_step"))
    return str(step) if step is not None else "?"


def best_export(config: str | Path) -> str:
    """A run's best model as an encoder spec its kind reads it by (`muse:RUN/best` for a muse run: read whole, as
    XX->EN articles need; `bert:RUN/best`; else `hub:RUN/best`)."""
    from relkt.encoders.encoder_kind import kind_of  # deferred: TensorFlow

    run = read_config_file(config)
    folder = Path(config).parent
    older_run = any((folder / name).exists() for name in ("checkpoint", "train.log", "summary.json"))
    if not (folder / RUN_MARKER).is_file() and not older_run:
        named = run.get("output_dir") if isinstance(run.get("output_dir"), str) else "RUN"
        raise ConfigError(
            f"{config}: a setup's config, not a run's: give --config {named}/config.yaml, the config a run saved in "
            "its folder (or --encoder SPEC to score a model)"
        )
    if not (folder / "best").is_dir():
        raise ConfigError(f"{folder}: this run has no export yet (no best/: it has not reached its first evaluation)")
    live = live_run_holding(folder)
    if live is not None:
        raise ConfigError(
            f"{folder}: this run is still training; its best/ is the best so far (step "
            f"{read_best_step(folder / 'best')}). To score that export as it is now, pass --encoder SPEC naming it "
            "(e.g. muse:RUN/best)"
        )

    def section(name):
        return run.get(name) if isinstance(run.get(name), dict) else {}

    spec = section("encoder").get("spec") or section("student").get("spec") or section("teacher").get("spec") or ""
    best = str(Path(config).parent / "best")
    kind = kind_of(str(spec)) if spec else None
    return kind.rebuild_spec(best) if kind is not None and kind.reads_whole else f"hub:{best}"
