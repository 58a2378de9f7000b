"""Does an encoder serve language X, and did distillation fix it? The pair-file half of the coverage job
(relkt.jobs.coverage; `relkt coverage --pairs-dir ...`).

Per language and encoder: how the tokenizer reads it (unknown pieces, pieces per word, the scripts it cannot read),
translation retrieval on the held-out pairs (whole sources with `held_out_sources`, as `data.corpus_held_out_sources`
keeps them out of a student's training; else each source's last rows, `data.corpus_dev_pairs` of them, as a student
holds them out: whole documents but the one cut at each source's edge; never hashed lines; the report says which),
both directions, and, where `questions_dir` has the language, XOR-TyDi question retrieval (each question not marked
`split = train` against the English translations of every such question in the file, and back). With two or more
encoders, each one's difference from the first with McNemar's p; with `test_dir`, the test source's figures of every
language (did the student forget?); with `qa_test_dir`, answer retrieval in each of its question languages, in the
language and against English (what a language is taught for).
Writes OUTPUT/report.md, OUTPUT/report.json, OUTPUT/per_item.npz (every item's hit, from which the tables are
recomputed) and OUTPUT/coverage.png.
"""

from __future__ import annotations

import json
import logging
import uuid
from pathlib import Path

import numpy as np

from relkt.analysis.significance import mcnemar
from relkt.data.english_answer_units import SCORING_MAX_LENGTH, EnglishAnswerUnits, english_units
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.pair_items import PairItems, read_pair_items
from relkt.data.parallel_corpus import PairFiles
from relkt.data.qa_source import QaSource
from relkt.errors import DataError
from relkt.io import atomic_files, claim_dir, json_text
from relkt.jobs.audit import encoder_specs
from relkt.jobs.requests import CoverageRequest
from relkt.jobs.results import CoverageResult
from relkt.metrics import LareqaEvaluator
from relkt.metrics.evaluator import EncodingCache, run_evaluators
from relkt.metrics.pair_retrieval import centered, hub_share, pair_retrieval
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator
from relkt.reports.language_coverage_report import coverage_figure, languages_markdown

# one random key in report.json and per_item.npz: the two (and report.md) were written together
SET_KEY = "set_key"

log = logging.getLogger("relkt.coverage")

# a whole source held out as another domain, held-out parallel text, XOR-TyDi questions (--center)
TASKS = ("pairs_other_domain", "pairs", "questions", "questions_centered")
DIRECTIONS = ("xx>en", "en>xx")


def read_items(args: CoverageRequest, pair_files: PairFiles | None = None) -> PairItems:
    """The request's items (relkt.data.pair_items.read_pair_items), every file read strictly before any model
    loads; through `pair_files` when given (files read once)."""
    return read_pair_items(
        args.langs or [],
        args.pairs_dir,
        args.dev_pairs,
        args.held_out_sources,
        args.questions_dir,
        args.center,
        pair_files,
        where="CoverageRequest.",
        other_domain=args.other_domain,
    )


def held_out_sources(args: CoverageRequest) -> list[str]:
    return list(args.held_out_sources)


def held_out_how(args: CoverageRequest) -> str:
    """What the report calls held out: whole sources, or each source's last rows (whole documents but one a source)."""
    sources, other = held_out_sources(args), args.other_domain
    if other:
        apart = ", ".join(f"{lang} {source}" for lang, source in other.items())
        return (
            f"{args.dev_pairs} pairs a language, each source's last rows in its share (the same sources a student "
            f"trained on); and another domain, a whole source no pair of which trained: {apart}"
        )
    if sources:
        return f"every pair of {', '.join(sources)} (whole sources: no document shared with a pair trained on)"
    return (
        f"{args.dev_pairs} pairs a language, each source's last rows in its share (data.corpus_dev_pairs): whole "
        "documents, but for the one cut at each source's edge, and another domain only where --held-out-sources "
        "holds out a whole source"
    )


def score_encoder(encoder, quiet, items: dict, batch_size: int) -> tuple[dict, dict[str, np.ndarray]]:
    """(figures, per-item hits) of one encoder (`quiet`: it without progress bars): tokenizer, and each task's
    retrieval in both directions."""
    from relkt.analysis.tokenizer_audit import audit_tokenizer, tokenizer_of, unreadable_scripts  # deferred: TensorFlow

    tokenizer, figures, hits = tokenizer_of(encoder), {}, {}
    centers = items.get("centers", {})
    for task, by_lang in items.items():
        if task == "centers":
            continue
        for lang, pairs in by_lang.items():
            xx = quiet.encode(pairs.xx, batch_size=batch_size)
            en = quiet.encode(pairs.en, batch_size=batch_size)
            entry = figures.setdefault(lang, {})
            tasks = {task: (xx, en)}
            if task == "questions" and lang in centers:
                train = centers[lang]
                means = [np.mean(quiet.encode(side, batch_size=batch_size), axis=0) for side in (train.xx, train.en)]
                tasks["questions_centered"] = (centered(xx, means[0]), centered(en, means[1]))
            for name, (a, b) in tasks.items():
                result = pair_retrieval(a, b, pairs.xx, pairs.en, f"{name} {lang}")
                entry[name] = {d: {"P@1": r["P@1"], "MRR": r["MRR"], "n": len(pairs)} for d, r in result.items()}
                entry[name]["hub_share"] = hub_share(a, b)
                hits.update({f"{name}/{lang}/{d}": r["hit1"] for d, r in result.items()})
            if task == "pairs" and tokenizer is not None:  # the tokenizer audit reads the same-source rows
                entry["tokenizer"] = {
                    **audit_tokenizer(tokenizer, pairs.xx),
                    "unreadable_scripts": unreadable_scripts(tokenizer, pairs.xx),
                }
    return figures, hits


def score_test_source(encoder, quiet, test_dir: str, batch_size: int) -> tuple[dict, dict[str, np.ndarray]]:
    """{lang: {"mAP", "article P@1"}} on the whole test source, and per-question article hits (for McNemar); articles
    are read whole (`reading_whole`), as relkt evaluate reads them."""
    from relkt.encoders.reading_whole_evaluator import ReadingWholeEvaluator  # deferred: TensorFlow

    source = QaSource.open(test_dir)
    pool = LareqaPool.from_source(source)
    evaluator = LareqaEvaluator(pool, batch_size=batch_size)
    units = XxEnUnitEvaluator(pool.questions, english_units(source, ["article"]), batch_size=batch_size)
    whole = ReadingWholeEvaluator(units, encoder, SCORING_MAX_LENGTH)  # questions from the cache, articles whole
    run_evaluators([evaluator, whole], EncodingCache(quiet))
    results, article = evaluator.last_results, units.last_results["article"]
    langs = np.asarray(pool.question_langs)
    hit = units.per_question["article"]
    figures = {
        lang: {
            "mAP": results["lareqa"]["per_language"][lang]["mAP"],
            "article P@1": article[lang]["P@1"],
            "n": int((langs == lang).sum()),
        }
        for lang in sorted(set(langs))
    }
    return figures, {f"test/{lang}": hit[langs == lang] > 0 for lang in figures}


QA_UNITS = ("paragraph", "article")  # the units of answer retrieval in a QA test source, the paper's last


def score_qa_test_source(encoder, quiet, qa_test_dir: str, batch_size: int) -> tuple[dict, dict[str, np.ndarray]]:
    """Answer retrieval on a QA test source whole, each question language L both ways the paper ranks documents:
    in-language (L's questions against every paragraph / article in L) and XX->EN (against every English one, where
    the source has English). {lang: {"in-language paragraph P@1", ..., "XX->EN article P@1", "n"}} and per-question
    hits `qa/L/in_UNIT`, `qa/L/en_UNIT` (for McNemar). Units are read whole, as relkt evaluate reads them."""
    from relkt.encoders.reading_whole_evaluator import ReadingWholeEvaluator  # deferred: TensorFlow

    source = QaSource.open(qa_test_dir)
    whole = LareqaPool.from_source(source)
    langs = sorted(set(whole.question_langs))
    evaluators = {}
    for lang in langs:
        own = whole.subset(question_langs=[lang], candidate_langs=[lang])
        if len(own.questions):
            units = {u: EnglishAnswerUnits.from_pool(own, u, lang=lang) for u in QA_UNITS}
            evaluators[("in", lang)] = XxEnUnitEvaluator(own.questions, units, batch_size=batch_size)
    asked = [q for q in whole.questions if q.lang != "en"]
    if "en" in source.languages() and asked:
        evaluators[("en", "")] = XxEnUnitEvaluator(asked, english_units(source, QA_UNITS), batch_size=batch_size)
    cache = EncodingCache(quiet)  # each language's blocks name the same metrics: run one by one on one cache
    for evaluator in evaluators.values():
        ReadingWholeEvaluator(evaluator, encoder, SCORING_MAX_LENGTH)(cache)
    figures: dict[str, dict] = {lang: {"n": int(np.sum(whole.question_langs == lang))} for lang in langs}
    hits: dict[str, np.ndarray] = {}
    for (kind, _), evaluator in evaluators.items():
        asked_langs = np.array([q.lang for q in evaluator.questions])
        for unit in QA_UNITS:
            for x, block in evaluator.last_results[unit].items():
                name = "in-language" if kind == "in" else "XX->EN"
                figures[x][f"{name} {unit} P@1"] = block["P@1"]
                hits[f"qa/{x}/{kind}_{unit}"] = evaluator.per_question[unit][asked_langs == x] > 0
    return figures, hits


def compare(hits: dict[str, dict[str, np.ndarray]], names: list[str]) -> dict:
    """{"later vs first": {item key: {"difference", "p_value", "only_first", "only_later"}}}: McNemar on paired hits."""
    base, out = names[0], {}
    for name in names[1:]:
        out[f"{name} vs {base}"] = {
            key: {"difference": float(np.mean(hits[name][key]) - np.mean(a)), **_mcnemar(a, hits[name][key])}
            for key, a in hits[base].items()
        }
    return out


def _mcnemar(a: np.ndarray, b: np.ndarray) -> dict:
    test = mcnemar(a, b)
    return {"p_value": test["p_value"], "only_first": test["only_a"], "only_later": test["only_b"]}


def run_languages(args: CoverageRequest, read: PairItems | None = None) -> CoverageResult:
    """The languages' report: every encoder on every language's items (`read`: those items, when the caller read
    them already), written to `output`."""
    specs = encoder_specs(args)
    read = read or read_items(args)  # bad input fails before TensorFlow loads
    langs, items = read.langs, read.items
    from relkt.encoders import QuietEncoder, build_encoder  # deferred: heavy (TensorFlow); --help answers without it

    out = Path(args.output)
    figures, hits = {}, {}
    for name, spec in specs.items():
        log.info("scoring %s (%s) on %s", name, spec, ", ".join(langs))
        encoder = build_encoder(spec, trainable=False)
        quiet = QuietEncoder(encoder, args.batch_size)
        figures[name], hits[name] = score_encoder(encoder, quiet, items, args.batch_size)
        if args.test_dir:
            test, test_hits = score_test_source(encoder, quiet, args.test_dir, args.batch_size)
            figures[name]["test"] = test
            hits[name].update(test_hits)
        if args.qa_test_dir:
            qa, qa_hits = score_qa_test_source(encoder, quiet, args.qa_test_dir, args.batch_size)
            figures[name]["qa"] = qa
            hits[name].update(qa_hits)
    names = list(specs)
    report = {
        "setup": {
            "encoders": specs,
            "langs": langs,
            "pairs_dir": args.pairs_dir,
            "dev_pairs": args.dev_pairs,
            "held_out": held_out_how(args),
            "other_domain": dict(args.other_domain),
            "questions_dir": args.questions_dir,
            "questions_scored": {lang: len(q) for lang, q in items.get("questions", {}).items()},  # not `train` rows
            "test_dir": args.test_dir,
            "qa_test_dir": args.qa_test_dir,
            "learned": list(args.learned),
        },
        "figures": figures,
        "comparisons": compare(hits, names),
    }
    claim_dir(out, "coverage")
    markdown = languages_markdown(report)
    key = uuid.uuid4().hex  # the three files are one set: a reader checks the npz's key against the report's
    report[SET_KEY] = key
    with atomic_files([out / "per_item.npz", out / "report.json", out / "report.md"]) as (npz, js, md):
        arrays = {f"{name}|{k}": value for name, by in hits.items() for k, value in by.items()}
        np.savez(npz, **arrays, **{SET_KEY: np.array(key)})
        js.write(json_text(report).encode("utf-8"))
        md.write(markdown.encode("utf-8"))
    coverage_figure(report, out / "coverage.png")
    return CoverageResult(out, json.loads(json_text(report)), markdown)


def read_per_item(folder: str | Path) -> dict[str, np.ndarray]:
    """A coverage report's per-item hits (`per_item.npz`), read only as the set it was written with: a DataError when
    its key is not its `report.json`'s (a write killed between the files' renames), naming both."""
    folder = Path(folder)
    path, report_path = folder / "per_item.npz", folder / "report.json"
    if not path.is_file():
        raise DataError(f"{path}: no per-item hits (a relkt coverage report folder has per_item.npz)")
    with np.load(path, allow_pickle=False) as z:
        arrays = {k: z[k] for k in z.files}
    theirs = str(arrays.pop(SET_KEY)) if SET_KEY in arrays else None
    try:
        ours = json.loads(report_path.read_text(encoding="utf-8")).get(SET_KEY)
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, AttributeError):
        ours = None
    if ours is None or theirs is None or ours != theirs:
        raise DataError(
            f"{path} and {report_path} are not one set (keys {str(theirs)[:8]} and {str(ours)[:8]}): the coverage run "
            "that wrote them was interrupted between its files, or one was replaced; run relkt coverage again"
        )
    return arrays
