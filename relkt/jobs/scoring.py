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
import time
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from relkt.config import PoolSection
from relkt.config.config_io import from_dict, read_config_file
from relkt.data.english_answer_units import UNITS, EnglishAnswerUnits, english_units
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.parallel_corpus import pair_languages, read_pairs
from relkt.data.selection import load_split, measured_split, scored_source
from relkt.data.text import is_lang_code, normal_text
from relkt.errors import ConfigError, DataError
from relkt.io import (
    RUN_MARKER,
    atomic_files,
    atomic_write_text,
    claim_file,
    data_paths,
    json_keys,
    json_text,
    live_run_holding,
    read_json,
)
from relkt.jobs.scoring_encoder import scoring_encoder
from relkt.metrics.answer_context import context_weight
from relkt.metrics.corpus_bitext_evaluator import CorpusBitextEvaluator
from relkt.metrics.evaluator import EncodingCache, TextEncoder, named_evaluators, pool_evaluators, run_evaluators
from relkt.metrics.lareqa_evaluator import LareqaEvaluator
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator

log = logging.getLogger("relkt.evaluate")
SPLITTER = "relkt.data.sentence_splitter (the source has no sentence breaks)"

CORPUS_DEV_PAIRS = 500  # the held-out pairs a language (StudentDataSection.corpus_dev_pairs's default)


@dataclass
class Evaluation:
    """What scoring one encoder on one split gives: `results` in relkt evaluate's JSON layout (LAReQA per language,
    `xx_en`, `xx_en_UNIT`, `bitext`, `corpus`, `setup`), `per_question` the arrays McNemar and the bootstrap compare
    (qas_id, lang, AP, xx_en_hit1, xx_en_UNIT_hit1 ...), and `output` where both were written, if they were."""

    results: dict[str, Any]
    per_question: dict[str, np.ndarray] = field(default_factory=dict)
    output: Path | None = None
    # the same pool ranked language-aware (`score(rank_adjust=...)`): always beside the raw scores, never instead
    adjusted: Evaluation | None = None

    def flat(self) -> dict[str, float]:
        """Every metric under one flat key: `lareqa/mAP`, `lareqa/de/P@1`, `xx_en/de/P@1`, `xx_en_article/el/P@1`."""
        out = LareqaEvaluator.flat(self.results)
        out.update(XxEnUnitEvaluator.flat({k[6:]: v for k, v in self.results.items() if k.startswith("xx_en_")}))
        out.update(self.results.get("more_metrics", {}))
        return out

    def metric(self, key: str) -> float:
        """One flat metric; a KeyError lists a few of the keys there are."""
        flat = self.flat()
        if key not in flat:
            raise KeyError(f"no metric {key!r}; e.g. {', '.join(sorted(flat)[:6])} ({len(flat)} in all)")
        return flat[key]


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
    from relkt.encoders import QuietEncoder  # deferred: heavy (TensorFlow)

    if not isinstance(encoder, str) and not callable(getattr(encoder, "encode", None)):
        raise ConfigError(f"encoder: expected a spec (e.g. 'muse') or a built encoder, got {type(encoder).__name__}")
    if data is not None and not isinstance(data, PoolSection):
        raise ConfigError(f"data: expected a PoolSection (or a stage config's data), got {type(data).__name__}")
    # a PoolSection made in code passes the checks a config file's `data:` does (types, finite numbers, ranges)
    settings = from_dict(type(data), dataclasses.asdict(data), "data") if data is not None else PoolSection()
    settings.validate()
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
    if output is not None:  # refused before the encoding, not after it; the name as given ('x/' is a folder's)
        for path in [output] + ([adjusted_path(output)] if rank_adjust != "none" else []):
            claim_file(path, is_result_file, "results JSON", reads=data_paths(settings))
            claim_file(per_question_path(path), is_per_question_file, "per-question file", reads=data_paths(settings))
    pool = load_split(settings, split, langs=list(langs) if langs else None)
    source, within = scored_source(settings, split)
    log.info("pool: %s", pool_line(pool, source, split, within, langs))
    units = english_units(source, xx_en_units, scored=[q.qas_id for q in pool.questions])
    encoder, spec = scoring_encoder(encoder, max_length)
    warn_cut_units(encoder, units)
    evaluator = LareqaEvaluator(
        pool, with_context=settings.with_context, batch_size=batch_size, answer_context=answer_context
    )
    unit_evaluator = XxEnUnitEvaluator(pool.questions, units, batch_size=batch_size)
    more = pool_evaluators(list(evaluators), pool, batch_size)
    bias = None
    if language_pairs:
        encoder, bias = without_language_bias(
            encoder,
            pool,
            units,
            settings.with_context,
            language_pairs,
            remove_language_subspace,
            remove_language_means,
            batch_size,
        )
    cached = EncodingCache(encoder if progress else QuietEncoder(encoder))
    t0 = time.perf_counter()
    flat = run_evaluators([evaluator, unit_evaluator, *more], cached)  # the questions are encoded once for all
    results = dict(evaluator.last_results)
    if more:
        results["more_metrics"] = {k: v for k, v in flat.items() if k.split("/")[0] in {e.name for e in more}}
    results.update({f"xx_en_{unit}": block for unit, block in unit_evaluator.last_results.items()})
    if corpus_dir:
        results["corpus"] = corpus_bitext(corpus_dir, corpus_dev_pairs, pool.langs, cached, batch_size)
    t2 = time.perf_counter()
    t1 = t0 + cached.seconds  # encoding, then ranking and counting
    results["setup"] = {
        "encoder": spec,
        "source": str(source.path),
        "format": source.format,
        "split": split,
        "scored_whole": within == "all",
        "split_unit": settings.split_unit,
        # the unit and the measured share of test questions whose context / article trains (relkt.data.splits)
        "split_cut": measured_split(settings, pool.langs) if within != "all" else {"unit": "article", "overlap": None},
        "split_fractions": list(settings.split_fractions),
        "split_seed": settings.split_seed,
        "folds": settings.folds,
        "fold": settings.fold,
        "langs": pool.langs,
        # where the candidate sentences come from: the files' own sentence breaks, or relkt's splitter
        "sentence_splitter": SPLITTER if pool.split_by_relkt else "the source's sentence_breaks",
        "with_context": settings.with_context,
        # the learned weight each candidate's paragraph was mixed in with (None: candidates as sentences alone)
        "answer_context": context_weight(encoder) if answer_context else None,
        "max_length": getattr(encoder, "max_length", None),
        "xx_en_units": {unit: len(x.texts) for unit, x in units.items()},
        "corpus_dir": corpus_dir,
        "corpus_dev_pairs": corpus_dev_pairs if corpus_dir else None,
        "language_bias_removed": bias,
        "encode_seconds": round(t1 - t0, 2),
        "score_seconds": round(t2 - t1, 2),
    }
    result = Evaluation(results, per_question_arrays(evaluator, unit_evaluator))
    if rank_adjust != "none":
        dev = within == "test" and split == "test"  # a dev split of the same source: else cross-fitted
        result.adjusted = adjusted_evaluation(result, evaluator, unit_evaluator, cached, settings, dev, rank_adjust)
    if output is not None:
        result.output = write_evaluation(result, output)
    return result


def pool_line(pool: LareqaPool, source, split: str, within: str, langs: Sequence[str] | None) -> str:
    """What was scored, said once: the split and, for a cut of a source, how many of its questions it holds (a user's
    own file scored without `--split all` is its test split alone, and this line says so)."""
    what = f"{len(pool.questions)} questions, {len(pool.candidates)} candidates, {','.join(pool.langs)}"
    if split == "all" or within != split:
        return f"{what} ({'every question of ' if split == 'all' else 'the test source, whole: '}{source.path})"
    total = sum(len(data.questions) for data in source.read(list(langs) if langs else None))
    return f"{what}: the {split} split of {source.path}, {len(pool.questions)} of its {total} (--split all: every one)"


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


def without_language_bias(
    encoder: TextEncoder,
    pool: LareqaPool,
    units: dict[str, EnglishAnswerUnits],
    with_context: bool,
    pairs: str,
    rank: int,
    means: bool,
    batch_size: int,
) -> tuple[TextEncoder, dict]:
    """`encoder` wrapped to remove the language bias learned from `pairs` (never the pool's texts), and the record
    the results' setup keeps of it."""
    from relkt.jobs.language_bias import LanguageBiasRemoved, fit_language_subspace  # deferred: beside scoring

    texts = {normal_text(q.text): q.lang for q in pool.questions}
    for c, text in zip(pool.candidates, pool.candidate_texts(with_context)):
        texts.setdefault(normal_text(text), c.lang)
        texts.setdefault(normal_text(c.sentence), c.lang)
        texts.setdefault(normal_text(c.context), c.lang)  # a paragraph is a scored text when candidates are mixed
    for unit in units.values():
        texts.update({normal_text(t): "en" for t in unit.texts})
    space, learned = fit_language_subspace(encoder, str(pairs), pool.langs, rank, texts.keys(), batch_size=batch_size)
    missing = sorted(set(pool.langs) - set(space.means))
    if means and missing:
        log.warning("no pair file for %s: their texts keep their own mean", ", ".join(missing))
    record = {"pairs": str(pairs), "rank": rank, "means": means, "unmatched": missing, **learned}
    return LanguageBiasRemoved(encoder, space, texts, means, rank > 0), record


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


def write_evaluation(result: Evaluation, output: str | Path) -> Path:
    """The results JSON at `output` and its per-question scores beside it (`per_question_path`), as one unit; the
    language-aware ranking's, when scored, at `adjusted_path(output)` the same way."""
    if result.adjusted is not None:
        write_result_pair(result.adjusted.results, result.adjusted.per_question, adjusted_path(output))
    return write_result_pair(result.results, result.per_question, output)


def adjusted_path(output: str | Path) -> Path:
    """Where the language-aware ranking's results go beside the raw ones: `x.json` -> `x.adjusted.json`."""
    output = Path(output)
    return output.with_name(output.stem + ".adjusted.json")


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


def adjusted_evaluation(
    raw: Evaluation, evaluator, unit_evaluator, cached, settings: PoolSection, dev: bool, rank_adjust: str
) -> Evaluation:
    """The raw evaluation's pool ranked language-aware: the setting fixed, chosen on the same source's dev split
    (`dev`), or cross-fitted by article halves (a pool scored whole). The embeddings are the raw scoring's (the
    cache encodes nothing again); the answer-unit XX->EN blocks rank English units alone and stay the raw ones."""
    from relkt.metrics import language_aware_ranking as lar  # deferred: only when asked for

    pool = evaluator.pool
    q, c = evaluator.encode(cached)
    if rank_adjust != "auto":
        chosen: Any = lar.RankSetting.parse(rank_adjust)
        record: dict[str, Any] = {"mode": "fixed", "chosen": chosen.name}
    elif dev:
        dev_pool = load_split(settings, "dev", langs=pool.langs)
        if sorted(dev_pool.langs) != sorted(pool.langs):
            raise ConfigError(
                f"rank_adjust auto: the dev split holds {', '.join(dev_pool.langs)}, the scored pool "
                f"{', '.join(pool.langs)}: not a pool of the same kind to choose on; score the pool whole (split all, "
                "cross-fitted) or fix a setting (center, knn:K, csls:K, margin:K)"
            )
        dev_eval = LareqaEvaluator(
            dev_pool, settings.with_context, evaluator.batch_size, answer_context=evaluator.answer_context
        )
        qd, cd = dev_eval.encode(cached)
        chosen, maps = lar.choose_setting(qd, cd, dev_pool.gold, dev_pool.candidate_langs)
        record = {"mode": "dev", "chosen": chosen.name, "dev_questions": len(dev_pool.questions), "chosen_on": maps}
    else:
        halves = lar.article_halves([x.qas_id for x in pool.questions], [x.article for x in pool.questions])
        chosen, choice = lar.crossfit_settings(q, c, pool.gold, pool.candidate_langs, halves)
        record = {"mode": "crossfit", "folds": 2, **choice}
    ranking = lar.LanguageAwareRanking(q, c, pool.candidate_langs, chosen)
    context = evaluator.answer_context
    adjusted = LareqaEvaluator(pool, evaluator.with_context, evaluator.batch_size, answer_context=context)
    results = adjusted.compute(q, c, ranking)
    results.update({k: v for k, v in raw.results.items() if k.startswith("xx_en_") or k == "corpus"})
    results["setup"] = dict(raw.results["setup"])
    results["rank_adjust"] = record
    log.info("language-aware ranking (%s): %s", record["mode"], rank_choice_line(record))
    return Evaluation(results, per_question_arrays(adjusted, unit_evaluator))


def rank_choice_line(record: dict) -> str:
    """The setting(s) a language-aware ranking used, in a few words."""
    if record["mode"] == "crossfit":
        halves = [(k, v) for k, v in record.items() if k.startswith("half")]
        return ", ".join(f"{k} {v['chosen']} ({v['questions']} questions)" for k, v in halves)
    return record["chosen"]


PAIR_KEY = "per_question_key"  # one random key in the results JSON and its .per_question.npz: the two belong together


def write_result_pair(results: dict, per_question: dict, output: str | Path) -> Path:
    """`results` as JSON at `output` and `per_question` beside it, both or neither, sharing a new key, so that a JSON
    left beside another run's arrays (a write interrupted between its two renames) is told apart."""
    output = Path(output)
    npz = per_question_path(output)
    claim_file(output, is_result_file, "results JSON")
    claim_file(npz, is_per_question_file, "per-question file")
    key = uuid.uuid4().hex
    arrays = {k: v for k, v in per_question.items() if k != PAIR_KEY}
    with atomic_files([npz, output]) as (per_question_file, json_file):
        np.savez(per_question_file, **arrays, **{PAIR_KEY: np.array(key)})
        json_file.write(json_text({**results, PAIR_KEY: key}).encode("utf-8"))
    return output


def is_result_file(path: Path) -> bool:
    """Whether `path` holds results relkt wrote (a JSON object carrying its pair key)."""
    return PAIR_KEY in json_keys(path)


def is_per_question_file(path: Path) -> bool:
    """Whether `path` holds per-question scores relkt wrote (an npz carrying the pair key)."""
    try:
        with np.load(path, allow_pickle=False) as z:
            return PAIR_KEY in z.files
    except (OSError, ValueError, EOFError):
        return False


def read_per_question(output: str | Path) -> dict[str, np.ndarray]:
    """The per-question arrays beside the results JSON at `output`; a DataError when the two do not carry the same
    key (files of two runs), naming both. Files written before the key existed are read as they are."""
    output = Path(output)
    npz = per_question_path(output)
    with np.load(npz) as z:
        arrays = {k: z[k] for k in z.files}
    theirs = str(arrays.pop(PAIR_KEY)) if PAIR_KEY in arrays else None
    try:
        ours = read_json(output, "results JSON").get(PAIR_KEY) if output.exists() else None
    except (DataError, AttributeError):
        ours = None
    if ours is not None and theirs is not None and ours != theirs:
        raise DataError(
            f"{output} and {npz} are not one pair (keys {ours[:8]} and {theirs[:8]}): the scoring that wrote them was "
            "interrupted between its two files; score again"
        )
    if (ours is None) != (theirs is None) and output.exists():
        raise DataError(f"{output} and {npz} are not one pair (only one of them carries {PAIR_KEY}); score again")
    return arrays


def warn_cut_units(encoder, units: dict[str, EnglishAnswerUnits]) -> None:
    """Log how many unit texts the encoder's max_length cuts (a cut article is scored on its first paragraphs):
    a BERT reads at most 512 positions, and a hub export keeps the length it was exported with."""
    from relkt.analysis.tokenizer_audit import audit_tokenizer, max_length_of, tokenizer_of  # deferred: TensorFlow

    max_length, tokenizer = max_length_of(encoder), tokenizer_of(encoder)
    if max_length is None or tokenizer is None:
        return
    for unit, u in units.items():
        cut = round(audit_tokenizer(tokenizer, list(u.texts), max_length=max_length)["texts_cut"] * len(u.texts))
        if cut:
            log.warning(
                "XX->EN %s unit: %d of %d English %ss are longer than max_length %d and are cut (a muse "
                "export scores them whole as muse:DIR; a BERT cannot)",
                unit,
                cut,
                len(u.texts),
                unit,
                max_length,
            )


def corpus_bitext(folder: str, dev_pairs: int, langs: Sequence[str], encoder, batch_size: int) -> dict:
    """{lang: {"P@1", "n_pairs"}} on each pool language's held-out corpus slice (languages without a file: skipped)."""
    have = pair_languages(folder)
    dev = {lang: read_pairs(folder, lang).split(dev_pairs)[1] for lang in langs if lang != "en" and lang in have}
    if not dev:
        raise ConfigError(f"corpus_dir {folder}: no {{lang}}.tsv for any of {', '.join(langs)}")
    flat = CorpusBitextEvaluator(dev, batch_size)(encoder)
    return {lang: {"P@1": flat[f"corpus/{lang}/P@1"], "n_pairs": len(dev[lang])} for lang in sorted(dev)}


def read_results_file(path: str | Path) -> dict:
    """One results JSON of relkt evaluate; a DataError naming it when it is missing, not JSON, or not scores (no
    `lareqa` block)."""
    if not Path(path).exists():
        raise DataError(f"{path}: no such results file (write it with python -m relkt.cli.evaluate --output {path})")
    try:
        results = read_json(path, "results JSON")
    except DataError as e:
        raise DataError(f"{path}: not a results JSON ({str(e).removeprefix(f'{path}: ')})") from None
    if not isinstance(results, dict) or not isinstance(results.get("lareqa"), dict):
        raise DataError(f"{path}: not a results JSON of relkt evaluate (no 'lareqa' block of scores)")
    return results


def per_question_path(output: str | Path) -> Path:
    """Where results keep their per-question scores: `x.json` -> `x.per_question.npz`."""
    output = Path(output)
    return output.with_name(output.stem + ".per_question.npz")


def per_question_arrays(evaluator, unit_evaluator=None) -> dict[str, np.ndarray]:
    """Per-question LAReQA AP, XX->EN (per unit) and bitext hit@1 with each question's qas_id and language, so two
    runs over the same split can be compared question by question without encoding again."""
    pool, per_q = evaluator.pool, evaluator.per_question
    arrays = {
        "qas_id": np.array([q.qas_id for q in pool.questions]),
        "lang": np.asarray(pool.question_langs, dtype=str),
        "AP": per_q["lareqa"]["AP"],
    }
    if "xx_en" in per_q:
        arrays["xx_en_hit1"] = per_q["xx_en"]["hit@1"]
    if "bitext" in per_q:
        arrays["bitext_hit1"] = per_q["bitext"]["hit@1"]  # NaN for English and questions with no English twin
    for unit, hit in (unit_evaluator.per_question if unit_evaluator else {}).items():
        arrays[f"xx_en_{unit}_hit1"] = hit
    return arrays


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
