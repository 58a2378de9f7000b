"""Score an encoder on the LAReQA pool (XQuAD-R) and the CL-ReLKT XX->EN protocol.

    python -m relkt.evaluate --encoder minilm --data-dir ../shared/data/xquad-r --split all \
        --output results.json
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from relkt.cli import add_pool_arguments, load_pool, pool_settings, run_cli, xx_en_units
from relkt.cli_types import positive_int, writable_file
from relkt.config.config_io import read_config_file
from relkt.config.student_config import StudentDataSection
from relkt.data.english_answer_units import SCORING_MAX_LENGTH, UNITS, EnglishAnswerUnits, english_units
from relkt.data.parallel_corpus import pair_languages, read_pairs
from relkt.data.selection import measured_split, scored_source
from relkt.errors import ConfigError
from relkt.io import atomic_files, json_text
from relkt.metrics.corpus_bitext_evaluator import CorpusBitextEvaluator
from relkt.metrics.lareqa_evaluator import LareqaEvaluator
from relkt.metrics.xx_en_unit_evaluator import XxEnUnitEvaluator
from relkt.reports.tables import evaluation_table

log = logging.getLogger("relkt.evaluate")

SPECS = (
    "ngram | minilm | bert:PATH | muse (offline mUSE-small v3) | muse:EXPORT_DIR | hub:HANDLE_OR_DIR"
    " | muse-hub | muse-large-hub, or KIND:ARG of a kind registered in relkt.encoders.encoder_kind"
)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m relkt.evaluate", description=__doc__.split("\n")[0])
    p.add_argument(
        "--encoder",
        default=None,
        help=f"{SPECS} (default with --config: the run's best export, muse:RUN/best for a muse run, else hub:RUN/best)",
    )
    add_pool_arguments(p)
    p.add_argument(
        "--with-context",
        action="store_true",
        help="encode candidates as sentence + context (default: off, or the --config run's)",
    )
    p.add_argument(
        "--xx-en-unit",
        type=xx_en_units,
        default=UNITS,
        metavar="UNIT[,UNIT...]",
        help="CL-ReLKT's XX->EN protocol at these English answer units, each scored against every English unit "
        "of the whole data set (all articles, whichever split is scored): article (the paper's document), "
        "paragraph, sentence; scored_article and scored_paragraph: the reference code's pool, only the scored "
        f"questions' own documents; or none (default: {','.join(UNITS)})",
    )
    p.add_argument(
        "--max-length",
        type=positive_int,
        default=None,
        help="tokens per text for the encoder built here (muse, bert:, minilm; a hub: export keeps its own; "
        "texts cut are counted in a warning; default: muse and muse:DIR "
        f"{SCORING_MAX_LENGTH}, whole XQuAD articles, others the encoder's own)",
    )
    p.add_argument(
        "--corpus-dir",
        default=None,
        help="also score translation retrieval (corpus/LANG/P@1, the corpus "
        "students' dev metric) on the held-out slice of each {lang}.tsv parallel corpus here (default: none)",
    )
    p.add_argument(
        "--corpus-dev-pairs",
        type=positive_int,
        default=StudentDataSection.corpus_dev_pairs,
        help="pairs per language in that held-out slice: each source's last rows, the same whole documents a "
        f"student with this data.corpus_dev_pairs never trained on (default: {StudentDataSection.corpus_dev_pairs})",
    )
    p.add_argument("--batch-size", type=positive_int, default=64, help="texts per encoding batch (default: 64)")
    p.add_argument(
        "--output",
        type=writable_file,
        default=None,
        help="write the results as JSON here (and per-question scores beside it, OUTPUT with "
        ".per_question.npz, for trainers/compare.py's significance tests); checked before encoding (default: none)",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = build_parser()
    args = p.parse_args(argv)
    if args.encoder is None and args.config is None:
        p.error("--encoder is required (or --config RUN/config.yaml to score the run's best export)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(lambda: evaluate(parse_args(argv)), interrupted="interrupted; nothing was written")


def evaluate(args: argparse.Namespace) -> int:
    from relkt.encoders import QuietEncoder, build_encoder  # deferred: heavy (TensorFlow); --help answers without it

    spec = args.encoder or best_export(args.config)
    settings = pool_settings(args)  # read once: flags, else the --config run's, else the defaults
    pool = load_pool(args, settings)
    log.info("pool: %d questions, %d candidates, %s", len(pool.questions), len(pool.candidates), ",".join(pool.langs))
    source, within = scored_source(settings, args.split)
    units = english_units(source, args.xx_en_unit, scored=[q.qas_id for q in pool.questions])
    kind = spec.split(":", 1)[0]
    max_length = args.max_length or (SCORING_MAX_LENGTH if kind == "muse" else None)
    options = {} if max_length is None else {"max_length": max_length}
    if options and kind in ("hub", "muse-hub", "muse-large-hub"):
        raise ConfigError(
            f"--max-length: {spec} is a hub export, whose tokenizer length was fixed when it was exported; "
            "rebuild it as muse:DIR or bert:DIR to choose one"
        )
    if options and kind not in ("muse", "bert", "minilm"):
        raise ConfigError(f"--max-length: {spec} takes no max_length (muse, bert: and minilm do)")
    encoder = build_encoder(spec, trainable=False, **options)
    warn_cut_units(encoder, units)
    evaluator = LareqaEvaluator(pool, with_context=settings.with_context, batch_size=args.batch_size)
    unit_evaluator = XxEnUnitEvaluator(pool.questions, units, batch_size=args.batch_size)
    quiet = QuietEncoder(encoder) if args.no_progress else encoder
    t0 = time.perf_counter()
    q, c = evaluator.encode(quiet)
    u = unit_evaluator.encode_units(quiet)
    t1 = time.perf_counter()
    results = evaluator.compute(q, c)
    results.update({f"xx_en_{unit}": block for unit, block in unit_evaluator.compute(q, u).items()})
    if args.corpus_dir:
        results["corpus"] = corpus_bitext(args.corpus_dir, args.corpus_dev_pairs, pool.langs, quiet, args.batch_size)
    t2 = time.perf_counter()
    results["setup"] = {
        "encoder": spec,
        "source": str(source.path),
        "format": source.format,
        "split": args.split,
        "scored_whole": within == "all",
        "split_unit": settings.split_unit,
        # the unit and the measured share of test questions whose context / article trains (relkt.data.splits)
        "split_cut": measured_split(settings, pool.langs) if within != "all" else {"unit": "article", "overlap": None},
        "split_fractions": list(settings.split_fractions),
        "split_seed": settings.split_seed,
        "folds": settings.folds,
        "fold": settings.fold,
        "langs": pool.langs,
        "with_context": settings.with_context,
        "config": args.config,
        "max_length": getattr(encoder, "max_length", None),
        "xx_en_units": {unit: len(x.texts) for unit, x in units.items()},
        "corpus_dir": args.corpus_dir,
        "corpus_dev_pairs": args.corpus_dev_pairs if args.corpus_dir else None,
        "encode_seconds": round(t1 - t0, 2),
        "score_seconds": round(t2 - t1, 2),
    }
    print(evaluation_table(results))
    if args.output:  # one unit: the per-question scores and the JSON are both written, or neither
        npz = per_question_path(args.output)
        with atomic_files([npz, args.output]) as (per_question_file, json_file):
            np.savez(per_question_file, **per_question_arrays(evaluator, unit_evaluator))
            json_file.write(json_text(results).encode("utf-8"))
        print(f"wrote {args.output} and {npz}")
    return 0


def best_export(config: str) -> str:
    """A run's best model as an encoder spec: `muse:RUN/best` for a muse run (read whole, as XX->EN articles need:
    the hub export keeps its 512-piece training length), else `hub:RUN/best`."""
    run = read_config_file(config)

    def section(name):
        return run.get(name) if isinstance(run.get(name), dict) else {}

    spec = section("encoder").get("spec") or section("student").get("spec") or section("teacher").get("spec") or ""
    kind = "muse" if str(spec).split(":", 1)[0] == "muse" else "hub"
    return f"{kind}:{Path(config).parent / 'best'}"


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
        raise ConfigError(f"--corpus-dir {folder}: no {{lang}}.tsv for any of {', '.join(langs)}")
    flat = CorpusBitextEvaluator(dev, batch_size)(encoder)
    return {lang: {"P@1": flat[f"corpus/{lang}/P@1"], "n_pairs": len(dev[lang])} for lang in sorted(dev)}


def per_question_path(output: str | Path) -> Path:
    """Where `--output` results keep their per-question scores: `x.json` -> `x.per_question.npz`."""
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


if __name__ == "__main__":
    sys.exit(main())
