"""Score an encoder on the LAReQA pool (XQuAD-R) and the CL-ReLKT XX->EN protocol.

    python -m relkt.evaluate --encoder minilm --data-dir ../shared/data/xquad-r --split all \
        --output results.json
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from relkt.cli import add_pool_arguments, load_pool, pool_settings, run_cli
from relkt.cli_types import positive_int, writable_file
from relkt.io import atomic_write_json, atomic_write_npz
from relkt.metrics.lareqa_evaluator import LareqaEvaluator
from relkt.reports.tables import evaluation_table

log = logging.getLogger("relkt.evaluate")

SPECS = "ngram | minilm | bert:PATH | muse (offline mUSE-small v3) | muse:EXPORT_DIR | hub:HANDLE_OR_DIR | muse-hub | muse-large-hub"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m relkt.evaluate", description=__doc__.split("\n")[0])
    p.add_argument("--encoder", default=None, help=f"{SPECS} (default with --config: hub:RUN/best, the run's best export)")
    add_pool_arguments(p)
    p.add_argument("--with-context", action="store_true", help="encode candidates as sentence + context (default: off, "
                   "or the --config run's)")
    p.add_argument("--batch-size", type=positive_int, default=64, help="texts per encoding batch (default: 64)")
    p.add_argument("--output", type=writable_file, default=None,
                   help="write the results as JSON here (and per-question scores beside it, OUTPUT with "
                   ".per_question.npz, for trainers/compare.py's significance tests); checked before encoding (default: none)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = build_parser()
    args = p.parse_args(argv)
    if args.encoder is None and args.config is None:
        p.error("--encoder is required (or --config RUN/config.yaml to score the run's best export)")
    return args


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(lambda: evaluate(parse_args(argv)))


def evaluate(args: argparse.Namespace) -> int:
    from relkt.encoders import QuietEncoder, build_encoder  # deferred: heavy (TensorFlow); --help answers without it

    spec = args.encoder or f"hub:{Path(args.config).parent / 'best'}"
    settings = pool_settings(args)  # read once: flags, else the --config run's, else the defaults
    pool = load_pool(args, settings)
    log.info("pool: %d questions, %d candidates, %s", len(pool.questions), len(pool.candidates), ",".join(pool.langs))
    encoder = build_encoder(spec, trainable=False)
    evaluator = LareqaEvaluator(pool, with_context=settings.with_context, batch_size=args.batch_size)
    t0 = time.perf_counter()
    q, c = evaluator.encode(QuietEncoder(encoder) if args.no_progress else encoder)
    t1 = time.perf_counter()
    results = evaluator.compute(q, c)
    t2 = time.perf_counter()
    results["setup"] = {
        "encoder": spec, "split": args.split, "split_fractions": list(settings.split_fractions),
        "split_seed": settings.split_seed, "langs": pool.langs, "with_context": settings.with_context,
        "config": args.config, "encode_seconds": round(t1 - t0, 2), "score_seconds": round(t2 - t1, 2),
    }
    print(evaluation_table(results))
    if args.output:
        atomic_write_json(args.output, results)
        npz = write_per_question(per_question_path(args.output), evaluator)
        print(f"wrote {args.output} and {npz}")
    return 0


def per_question_path(output: str | Path) -> Path:
    """Where `--output` results keep their per-question scores: `x.json` -> `x.per_question.npz`."""
    output = Path(output)
    return output.with_name(output.stem + ".per_question.npz")


def write_per_question(path: Path, evaluator) -> Path:
    """Per-question LAReQA AP, XX->EN and bitext hit@1 with each question's qas_id and language (atomically), so two
    runs over the same split can be compared question by question without encoding again."""
    pool, per_q = evaluator.pool, evaluator.per_question
    arrays = {"qas_id": np.array([q.qas_id for q in pool.questions]), "lang": np.asarray(pool.question_langs, dtype=str),
              "AP": per_q["lareqa"]["AP"]}
    if "xx_en" in per_q:
        arrays["xx_en_hit1"] = per_q["xx_en"]["hit@1"]
    if "bitext" in per_q:
        arrays["bitext_hit1"] = per_q["bitext"]["hit@1"]  # NaN for English and questions with no English twin
    atomic_write_npz(path, **arrays)
    return path


if __name__ == "__main__":
    sys.exit(main())
