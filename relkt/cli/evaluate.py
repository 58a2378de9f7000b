"""Score an encoder on the LAReQA pool (XQuAD-R) and the CL-ReLKT XX->EN protocol.

    relkt evaluate --encoder minilm --data-dir ../shared/data/xquad-r --split all --output results.json
    python -m relkt.cli.evaluate ...    (the same)

The flags become `relkt.api.score`'s arguments; the table is printed, the results written where --output says.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from relkt.cli.common import Parser, add_trust_flag, run_cli, shown
from relkt.cli.pool_flags import add_pool_arguments, pool_fields
from relkt.cli.types import non_negative_int, positive_int, writable_file, xx_en_units
from relkt.config.student_config import StudentDataSection
from relkt.data.english_answer_units import SCORING_MAX_LENGTH, UNITS
from relkt.io import claim_file, data_paths, model_path
from relkt.jobs.pool import pool_settings
from relkt.jobs.requests import PoolRequest
from relkt.jobs.scoring import (
    adjusted_path,
    best_export,
    card_with_test,
    is_per_question_file,
    is_result_file,
    per_question_path,
    rank_choice_line,
    score_sources,
    write_evaluation,
)
from relkt.reports.tables import evaluation_table

SPECS = (
    "ngram | minilm | bert:PATH | muse (offline mUSE-small v3) | muse:EXPORT_DIR | hub:HANDLE_OR_DIR"
    " | muse-hub | muse-large-hub, or KIND:ARG of a kind registered in relkt.encoders.encoder_kind"
)


def build_parser() -> argparse.ArgumentParser:
    """`relkt evaluate`'s flags."""
    p = Parser(prog="relkt evaluate", description=__doc__.split("\n")[0])
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
        "--evaluator",
        action="append",
        default=[],
        metavar="NAME",
        help="also run this registered evaluator on the pool (its metrics NAME/... printed and in the results JSON); "
        "repeatable (default: none)",
    )
    p.add_argument(
        "--no-answer-context",
        action="store_true",
        help="score candidates as sentences alone even when the model learned to mix each with its paragraph "
        "(in_batch.answer_context; default: mixed as the model was trained)",
    )
    p.add_argument(
        "--xx-en-unit",
        type=xx_en_units,
        default=list(UNITS),
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
    p.add_argument(
        "--language-pairs",
        default=None,
        metavar="DIR",
        help="a folder of {lang}.tsv pair files the encoder's language directions are learned from (pairs holding a "
        "scored text dropped first), for --remove-language-subspace / --remove-language-means (default: none)",
    )
    p.add_argument(
        "--remove-language-subspace",
        type=non_negative_int,
        default=0,
        metavar="RANK",
        help="project that many shared language directions out of every embedding (LSAR; `relkt debias` builds "
        "the same into an export) (default: 0, none)",
    )
    p.add_argument(
        "--remove-language-means",
        action="store_true",
        help="each text less its language's mean embedding over the pair files (scoring only: it needs each text's "
        "language)",
    )
    p.add_argument(
        "--more-test",
        action="append",
        default=None,
        metavar="DIR",
        help="one more test source (repeat for more), scored whole after --test-dir, each its own table and "
        "OUTPUT.NAME.json (default: the --config run's data.more_test)",
    )
    p.add_argument(
        "--rank-adjust",
        default="none",
        metavar="SETTING",
        help="also rank the pool language-aware, a second table and OUTPUT.adjusted.json beside the raw ones: auto "
        "(method and k chosen on the source's dev split when --split test is scored; cross-fitted by article halves "
        "when a pool is scored whole), or center, knn:K, csls:K, margin:K (default: none)",
    )
    p.add_argument("--batch-size", type=positive_int, default=64, help="texts per encoding batch (default: 64)")
    p.add_argument(
        "--output",
        type=writable_file,
        default=None,
        help="write the results as JSON here (and per-question scores beside it, OUTPUT with "
        ".per_question.npz, for trainers/compare.py's significance tests); checked before encoding (default: none)",
    )
    p.add_argument(
        "--card",
        action="store_true",
        help="also write the test scores into the model card (README.md) of the relkt export scored: --encoder's "
        "folder, or the --config run's best/ (which gets them without it); needs --split test and --output",
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_trust_flag(p)
    return p


def parse_args(argv: Sequence[str] | None = None):
    """The flags, with the checks argparse cannot make (an encoder or a run, a card's split and output)."""
    p = build_parser()
    args = p.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # the command line, as the results record it
    if args.encoder is None and args.config is None:
        p.error("--encoder is required (or --config RUN/config.yaml to score the run's best export)")
    if args.card and (args.split != "test" or not args.output):
        p.error("--card writes test scores beside their results file: give --split test and --output")
    if args.card and args.encoder and not export_folder(args.encoder):
        p.error(f"--card: --encoder {args.encoder} names no relkt export folder (one holding relkt.json)")
    return args


def export_folder(spec: str) -> Path | None:
    """The folder of a relkt export named by `spec` (`hub:DIR`, `muse:DIR`, `bert:DIR`), else None."""
    arg = spec.partition(":")[2]
    return Path(arg) if arg and "://" not in arg and (Path(arg) / "relkt.json").is_file() else None


def main(argv: Sequence[str] | None = None) -> int:
    """`relkt evaluate`: flags in, one library call, the exit code out."""
    args = parse_args(argv)
    trusted = vars(args).pop("trust_model")
    return run_cli(
        lambda: run(args), interrupted="interrupted; nothing was written", request=PoolRequest, trusted=trusted
    )


def run(args) -> int:
    """The flags as `relkt.jobs.scoring.score_sources`' arguments: the pool settings (flags, else the --config run's),
    the encoder (else the run's best export), built once for every test source; each table printed, each result
    written where --output says."""
    request = PoolRequest(**pool_fields(args))
    settings = pool_settings(request)  # flags, else the --config run's, else the defaults
    # the split asked for; with more test sources, each one whole after it
    sources = [settings]
    if args.split == "test":
        sources += [replace(settings, test_dir=path, test_format="auto", more_test=[]) for path in settings.more_test]
    outputs = [args.output] + [more_output(args.output, each.test_dir) if args.output else None for each in sources[1:]]
    reads = data_paths(settings) + [path for path in [model_path(args.encoder)] if path is not None]
    for i, output in enumerate(outputs):
        if output:  # every output checked before the first encoding: a new file, or results relkt wrote
            if i:
                writable_file(output)
            claim_file(output, is_result_file, "results JSON", reads=reads)
            claim_file(per_question_path(output), is_per_question_file, "per-question file", reads=reads)
    if args.rank_adjust != "none":
        for output in filter(None, outputs):
            claim_file(adjusted_path(output), is_result_file, "results JSON", reads=reads)
            claim_file(per_question_path(adjusted_path(output)), is_per_question_file, "per-question file", reads=reads)
    encoder = args.encoder or best_export(args.config)
    results = score_sources(
        encoder,
        sources,
        split=args.split,
        langs=args.langs,
        xx_en_units=args.xx_en_unit,
        max_length=args.max_length,
        corpus_dir=args.corpus_dir,
        corpus_dev_pairs=args.corpus_dev_pairs,
        batch_size=args.batch_size,
        progress=not args.no_progress,
        language_pairs=args.language_pairs,
        remove_language_subspace=args.remove_language_subspace,
        remove_language_means=args.remove_language_means,
        answer_context=not args.no_answer_context,
        evaluators=args.evaluator,
        rank_adjust=args.rank_adjust,
    )
    for each, output, result in zip(sources, outputs, results):
        for scored in (result, result.adjusted):
            if scored is not None:
                scored.results["setup"]["config"] = args.config
                scored.results["setup"]["command"] = shlex.join(["relkt", "evaluate", *args.argv])
        if len(sources) > 1:
            print(f"\ntest source {each.test_dir}:")
        print(evaluation_table(result.results))
        if result.adjusted is not None:
            choice = result.adjusted.results["rank_adjust"]
            print(f"\nlanguage-aware ranking ({choice['mode']}: {rank_choice_line(choice)}):")
            print(evaluation_table(result.adjusted.results))
        if output:
            # the card before the results file: a rerun goes by the results file, so a kill between the two leaves
            # no results and the rerun writes both again, never results beside a card without them
            card_of = export_folder(args.encoder) if args.card and args.encoder else None
            if args.config and not args.encoder:
                card_of = Path(args.config).parent / "best"
            if card_of and each is sources[0] and args.split == "test":
                named = ["--config", args.config]
                if args.encoder:  # the data named, whether a flag or RELKT_DATA_DIR gave it
                    named = ["--encoder", args.encoder, "--data-dir", result.results["setup"]["source"], "--card"]
                command = shlex.join(["relkt", "evaluate", *named, "--split", "test", "--output", output])
                card = card_with_test(card_of, result, command)
                print(f"wrote {shown(card)} (the model card, with these test scores)")
            write_evaluation(result, output)
            print(f"wrote {shown(output)} and {shown(per_question_path(output))}")
            if result.adjusted is not None:
                print(f"wrote {shown(adjusted_path(output))} and its per-question file (language-aware ranking)")
    return 0


def more_output(output: str, source: str) -> str:
    """Where a further test source's results go: OUTPUT with the source's name before `.json` (`r.json` and
    `../shared/data/mlqa/dev` give `r.mlqa-dev.json`; a folder named for a split takes its parent's name too)."""
    parts = [p for p in Path(source).parts if p not in ("..", ".", "/")]
    name = "-".join(parts[-2:]) if parts and parts[-1] in ("dev", "test", "train") else (parts[-1] if parts else "more")
    out = Path(output)
    stem = out.name[: -len(".json")] if out.name.endswith(".json") else out.name
    return str(out.with_name(f"{stem}.{Path(name).stem}.json"))


if __name__ == "__main__":
    sys.exit(main())
