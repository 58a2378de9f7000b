"""Does an encoder serve language X, and did distillation fix it? The pair-file half of relkt.coverage, the one
coverage command (`python -m relkt.language_coverage`, its older name, runs it too).

    python -m relkt.coverage --encoder zero-shot=muse --encoder student=muse:runs/new_languages/student/best \
        --langs bn,te,fi,ja --pairs-dir ../shared/data/parallel --questions-dir ../shared/data/xor-questions \
        --test-dir ../shared/data/xquad-r --learned bn,te,fi,ja --output reports/new_languages

Per language and encoder: how the tokenizer reads it (unknown pieces, pieces per word, the scripts it cannot read),
translation retrieval on the held-out pairs (whole sources with `--held-out-sources`, as `data.corpus_held_out_sources`
keeps them out of a student's training; else each source's last rows, `data.corpus_dev_pairs` of them, as a student
holds them out: whole documents but the one cut at each source's edge; never hashed lines; the report says which),
both directions, and, where `--questions-dir` has the language, XOR-TyDi question retrieval (each question not marked
`split = train` against the English translations of every such question in the file, and back). With two or more
encoders, each one's difference from the first with McNemar's p; with `--test-dir`, the XQuAD-R figures of every
language (did the student forget?).
Writes OUTPUT/report.md, OUTPUT/report.json, OUTPUT/per_item.npz (every item's hit, from which the tables are
recomputed) and OUTPUT/coverage.png.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

import numpy as np

from relkt.analysis.significance import mcnemar
from relkt.cli import named_specs
from relkt.cli_types import positive_int
from relkt.config.student_config import StudentDataSection
from relkt.data.english_answer_units import SCORING_MAX_LENGTH, english_units
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.parallel_corpus import ParallelCorpus, pair_languages, read_pairs
from relkt.data.qa_source import QaSource
from relkt.errors import ConfigError, DataError
from relkt.io import atomic_files, json_text
from relkt.metrics import LareqaEvaluator
from relkt.metrics.evaluator import EncodingCache, run_evaluators
from relkt.metrics.pair_retrieval import centered, hub_share, pair_retrieval
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator
from relkt.reports.language_coverage_report import coverage_figure, languages_markdown
from relkt.requests import CoverageRequest

log = logging.getLogger("relkt.coverage")

TASKS = ("pairs", "questions", "questions_centered")  # held-out parallel text, XOR-TyDi questions (--center)
DIRECTIONS = ("xx>en", "en>xx")


def add_language_arguments(p: argparse.ArgumentParser) -> None:
    """The pair-file flags of relkt.coverage: --pairs-dir, --dev-pairs, --held-out-sources, --questions-dir,
    --learned (--langs, --test-dir, --batch-size and --output are the command's own)."""
    p.add_argument(
        "--pairs-dir",
        default=None,
        help="folder of {lang}.tsv pair files (source, en, xx), e.g. ../shared/data/parallel: report on the --langs "
        "languages from them (default: none)",
    )
    p.add_argument(
        "--dev-pairs",
        type=positive_int,
        default=StudentDataSection.corpus_dev_pairs,
        help="held-out pairs per language: each source's last rows in its share, whole documents, the ones a "
        "student with this data.corpus_dev_pairs never trained on "
        f"(default: {StudentDataSection.corpus_dev_pairs})",
    )
    p.add_argument(
        "--held-out-sources",
        default="",
        help="comma-separated sources (the `source` column, e.g. tico19) held out whole: every pair of them is scored, "
        "none of another; what a student with data.corpus_held_out_sources never trained on (default: none: "
        "--dev-pairs of each file's last rows)",
    )
    p.add_argument(
        "--questions-dir",
        default=None,
        help="folder of {lang}.tsv question files with English translations "
        "(id, split, xx, en), e.g. ../shared/data/xor-questions (default: none)",
    )
    p.add_argument(
        "--center",
        action="store_true",
        help="also score the questions with each side less its language's mean embedding over the file's "
        "`split = train` rows (language-mean removal): whether a student's questions crowd onto a few English hubs "
        "(the report gives each language's hub share); needs the query's language, so a diagnosis beside the plain "
        "figures, not a replacement",
    )
    p.add_argument(
        "--learned",
        default="",
        help="comma-separated languages the later encoders were taught; the "
        "--test-dir table marks the others, where a change is forgetting (default: none)",
    )


def read_items(args: CoverageRequest) -> tuple[list[str], dict[str, dict[str, ParallelCorpus]]]:
    """{task: {lang: pairs}}, every file read strictly (a broken line is an error naming it: a coverage figure must
    count every item it was given) before any model loads."""
    langs = [x.strip() for x in args.langs.split(",") if x.strip()]
    if not langs:
        raise ConfigError("--langs: name at least one language")
    have = pair_languages(args.pairs_dir)
    missing = [x for x in langs if x not in have]
    if missing:
        raise DataError(
            f"--pairs-dir {args.pairs_dir}: no pairs for {', '.join(missing)}; it holds {', '.join(have) or 'none'}"
        )
    sources = held_out_sources(args)
    items = {
        "pairs": {
            lang: read_pairs(args.pairs_dir, lang, max_bad_share=0.0).split(0 if sources else args.dev_pairs, sources)[
                1
            ]
            for lang in langs
        }
    }
    if args.questions_dir:
        asked = pair_languages(args.questions_dir)
        # The rows not marked `split = train` (all rows of a file without the column): what no student may train on
        items["questions"] = {
            lang: read_pairs(args.questions_dir, lang, max_bad_share=0.0).held_out() for lang in langs if lang in asked
        }
        if not items["questions"]:
            raise DataError(
                f"--questions-dir {args.questions_dir}: no question file for any of {', '.join(langs)} (it "
                f"holds {', '.join(asked) or 'none'})"
            )
        if getattr(args, "center", False):
            items["centers"] = {lang: train_rows(args.questions_dir, lang) for lang in items["questions"]}
    elif getattr(args, "center", False):
        raise ConfigError("--center centres question files: give --questions-dir")
    return langs, items


def train_rows(folder: str, lang: str) -> ParallelCorpus:
    """A question file's `split = train` rows, whose mean embeddings centre its scored rows (--center)."""
    pairs = read_pairs(folder, lang, max_bad_share=0.0)
    if pairs.splits is None:
        raise DataError(f"{pairs.path}: --center needs a `split` column to take the means from `train` rows")
    train = pairs.trainable()
    if not len(train):
        raise DataError(f"{pairs.path}: no `split = train` row to centre its questions with (--center)")
    return train


def held_out_sources(args: CoverageRequest) -> list[str]:
    return [x.strip() for x in getattr(args, "held_out_sources", "").split(",") if x.strip()]


def held_out_how(args: CoverageRequest) -> str:
    """What the report calls held out: whole sources, or each source's last rows (whole documents but one a source)."""
    sources = held_out_sources(args)
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
            if task == "pairs" and tokenizer is not None:
                entry["tokenizer"] = {
                    **audit_tokenizer(tokenizer, pairs.xx),
                    "unreadable_scripts": unreadable_scripts(tokenizer, pairs.xx),
                }
    return figures, hits


def score_test_source(encoder, quiet, test_dir: str, batch_size: int) -> tuple[dict, dict[str, np.ndarray]]:
    """{lang: {"mAP", "article P@1"}} on the whole test source, and per-question article hits (for McNemar); articles
    are read whole (`reading_whole`), as relkt.evaluate reads them."""
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


def run_languages(args: CoverageRequest) -> int:
    """The languages' report: every encoder on every --langs language's items, written to --output."""
    specs = named_specs(args.encoder)
    langs, items = read_items(args)  # bad input fails before TensorFlow loads
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
    names = list(specs)
    report = {
        "setup": {
            "encoders": specs,
            "langs": langs,
            "pairs_dir": args.pairs_dir,
            "dev_pairs": args.dev_pairs,
            "held_out": held_out_how(args),
            "questions_dir": args.questions_dir,
            "questions_scored": {lang: len(q) for lang, q in items.get("questions", {}).items()},  # not `train` rows
            "test_dir": args.test_dir,
            "learned": [x for x in args.learned.split(",") if x],
        },
        "figures": figures,
        "comparisons": compare(hits, names),
    }
    out.mkdir(parents=True, exist_ok=True)
    with atomic_files([out / "per_item.npz", out / "report.json", out / "report.md"]) as (npz, js, md):
        np.savez(npz, **{f"{name}|{key}": value for name, by in hits.items() for key, value in by.items()})
        js.write(json_text(report).encode("utf-8"))
        md.write(languages_markdown(report).encode("utf-8"))
    coverage_figure(report, out / "coverage.png")
    print(f"wrote {out / 'report.md'}, {out / 'report.json'}, {out / 'per_item.npz'} and {out / 'coverage.png'}")
    return 0
