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

from relkt.cli_types import positive_int, split_fractions, writable_file
from relkt.data.sources import ENV_VAR
from relkt.data.splits import SPLITS
from relkt.errors import RelktError

log = logging.getLogger("relkt.evaluate")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m relkt.evaluate", description=__doc__.split("\n")[0])
    p.add_argument("--encoder", required=True, help="ngram | minilm | bert:PATH | muse (offline mUSE-small v3) | muse:EXPORT_DIR | hub:HANDLE_OR_DIR | muse-hub | muse-large-hub")
    p.add_argument("--data-dir", default=None, help=f"folder of XQuAD-R {{lang}}.json files (default: ${ENV_VAR}, cache, download)")
    p.add_argument("--split", default="test", choices=SPLITS, help="article-level split to score (default: test)")
    p.add_argument("--split-fractions", type=split_fractions, default="0.7,0.1,0.2",
                   help="train,dev,test article fractions (default: 0.7,0.1,0.2)")
    p.add_argument("--split-seed", type=int, default=0, help="seed of the article split (default: 0)")
    p.add_argument("--langs", default=None, help="comma-separated language codes (default: all found)")
    p.add_argument("--with-context", action="store_true", help="encode candidates as sentence + context")
    p.add_argument("--batch-size", type=positive_int, default=64, help="texts per encoding batch (default: 64)")
    p.add_argument("--output", type=writable_file, default=None,
                   help="write the results as JSON here (and per-question scores beside it, OUTPUT with "
                   ".per_question.npz, for trainers/compare.py's significance tests); checked before encoding")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    return p.parse_args(argv)


def format_table(results: dict) -> str:
    """A readable per-language table: LAReQA mAP/P@k/MRR and XX->EN P@1/P@10."""
    lareqa, xx, bitext = results["lareqa"], results.get("xx_en", {}), results.get("bitext", {})
    head = f"{'lang':<6}{'n_q':>6}{'mAP':>8}{'mAP@20':>8}{'P@1':>8}{'P@5':>8}{'P@10':>8}{'MRR':>8}"
    head += f"{'XX>EN P@1':>11}{'P@10':>7}" + (f"{'Q>Qen P@1':>11}" if bitext else "")
    lines = ["LAReQA (all candidates, all languages)  |  XX->EN (English candidates only)"
             + ("  |  Q>Qen (the English question among English questions)" if bitext else ""), head, "-" * len(head)]

    def row(name: str, m: dict, x: dict | None, b: dict | None) -> str:
        s = f"{name:<6}{m['n_questions']:>6}" + "".join(f"{100 * m[k]:>8.2f}" for k in ("mAP", "mAP@20", "P@1", "P@5", "P@10", "MRR"))
        s += f"{100 * x['P@1']:>11.2f}{100 * x['P@10']:>7.2f}" if x else ""
        return s + (f"{100 * b['P@1']:>11.2f}" if b else (f"{'-':>11}" if bitext else ""))

    for lang, m in lareqa["per_language"].items():
        lines.append(row(lang, m, xx.get(lang), bitext.get(lang)))
    lines.append("-" * len(head))
    mean_xx = {k: sum(v[k] for v in xx.values()) / len(xx) for k in ("P@1", "P@10")} if xx else None
    mean_bitext = {"P@1": sum(v["P@1"] for v in bitext.values()) / len(bitext)} if bitext else None
    lines.append(row("all", lareqa, mean_xx, mean_bitext))
    lines.append(f"{lareqa['n_candidates']} candidates; scores in %.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("relkt").setLevel(logging.INFO)
    try:
        from relkt.data.lareqa_pool import LareqaPool
        from relkt.encoders import build_encoder
        from relkt.io import atomic_write_json
        from relkt.metrics.lareqa_evaluator import LareqaEvaluator

        fractions = args.split_fractions
        langs = [x.strip() for x in args.langs.split(",")] if args.langs else None
        pool = LareqaPool.load(args.data_dir, langs=langs, split=args.split, fractions=fractions, seed=args.split_seed)
        log.info("pool: %d questions, %d candidates, %s", len(pool.questions), len(pool.candidates), ",".join(pool.langs))
        encoder = build_encoder(args.encoder, trainable=False)
        evaluator = LareqaEvaluator(pool, with_context=args.with_context, batch_size=args.batch_size)
        t0 = time.perf_counter()
        q, c = evaluator.encode(_Quiet(encoder) if args.no_progress else encoder)
        t1 = time.perf_counter()
        results = evaluator.compute(q, c)
        t2 = time.perf_counter()
        results["setup"] = {
            "encoder": args.encoder, "split": args.split, "split_fractions": list(fractions),
            "split_seed": args.split_seed, "langs": pool.langs, "with_context": args.with_context,
            "encode_seconds": round(t1 - t0, 2), "score_seconds": round(t2 - t1, 2),
        }
    except RelktError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(format_table(results))
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
    import numpy as np

    pool, per_q = evaluator.pool, evaluator.per_question
    arrays = {"qas_id": np.array([q.qas_id for q in pool.questions]), "lang": np.asarray(pool.question_langs, dtype=str),
              "AP": per_q["lareqa"]["AP"]}
    if "xx_en" in per_q:
        arrays["xx_en_hit1"] = per_q["xx_en"]["hit@1"]
    if "bitext" in per_q:
        arrays["bitext_hit1"] = per_q["bitext"]["hit@1"]  # NaN for English and questions with no English twin
    tmp = path.with_name(f".{path.name}.tmp")
    with open(tmp, "wb") as f:
        np.savez(f, **arrays)
    tmp.replace(path)
    return path


class _Quiet:
    """Wraps an encoder to switch its progress bar off."""

    def __init__(self, encoder):
        self.encoder = encoder

    def encode(self, texts, batch_size=64, progress=False):
        return self.encoder.encode(texts, batch_size=batch_size, progress=False)


if __name__ == "__main__":
    sys.exit(main())
