"""Does an encoder serve language X? The one coverage command: languages from pair files, and LAReQA's language bias.

    # languages from pair files: tokenizer, held-out pairs and questions both ways, a test source whole
    python -m relkt.coverage --encoder zero-shot=muse --encoder student=muse:runs/new_languages/student/best \
        --langs bn,te,fi,ja --pairs-dir ../shared/data/parallel --questions-dir ../shared/data/xor-questions \
        --test-dir ../shared/data/xquad-r --learned bn,te,fi,ja --output reports/new_languages
    # LAReQA's language-bias analyses on a QA pool (the default without --pairs-dir; --bias adds them to the above)
    python -m relkt.coverage --encoder zero-shot=minilm --encoder student=hub:runs/x/student/best \
        --split test --new-lang th --output reports/x

With `--pairs-dir`, per language and encoder (relkt.pair_coverage): how the tokenizer reads it, translation
retrieval on the held-out pairs both ways, XOR-TyDi-style question retrieval (`--questions-dir`, the rows not marked
`train`), and with `--test-dir` the test source whole; each encoder's difference from the first with McNemar's p.
Without it, or with `--bias`: LAReQA's analyses on the pool (limit/remove one target, monolingual pool, top-k
languages, PCA, language-ID probe, each encoder's tokenizer on the pool's questions), with paired bootstrap and
McNemar between encoders. Writes one OUTPUT/report.md and OUTPUT/report.json (the bias analyses under `bias` when
both ran), with figures beside them.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import re
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from relkt.analysis import (
    language_id_probe,
    limit_to_one_target,
    mcnemar,
    monolingual_pool,
    paired_bootstrap,
    pca_2d,
    remove_one_target,
    top_k_language_distribution,
)
from relkt.audit import TEXTS, audit_pool
from relkt.cli import add_pool_arguments, load_pool, named_specs, run_cli
from relkt.cli_types import positive_int
from relkt.errors import ConfigError
from relkt.io import atomic_files, atomic_write_json, atomic_write_text, json_text
from relkt.metrics import LareqaEvaluator
from relkt.metrics.evaluator import EncodingCache
from relkt.pair_coverage import add_language_arguments, run_languages
from relkt.reports import plots
from relkt.reports.coverage_report import bias_markdown, new_language_markdown, significance_markdown
from relkt.requests import CoverageRequest

log = logging.getLogger("relkt.coverage")


def build_parser(prog: str = "python -m relkt.coverage") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog, description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "--encoder",
        action="append",
        required=True,
        metavar="NAME=SPEC",
        help="an encoder to report on (repeat; the first is the baseline), e.g. teacher=hub:runs/t/best",
    )
    add_pool_arguments(p)
    add_language_arguments(p)
    p.add_argument(
        "--tokenizers-only",
        action="store_true",
        help="each encoder's tokenizer on the pool's --texts alone, nothing encoded (relkt.audit's table; "
        "default: off)",
    )
    p.add_argument("--texts", default="questions", choices=TEXTS, help="with --tokenizers-only (default: questions)")
    p.add_argument(
        "--bias",
        action="store_true",
        help="with --pairs-dir, also LAReQA's language-bias analyses on the QA pool (without --pairs-dir they run "
        "anyway; default: off)",
    )
    p.add_argument(
        "--new-lang",
        default=None,
        help="a language to report coverage for: its row and column, forgetting "
        "elsewhere, its tokenizer (default: none)",
    )
    p.add_argument("--pca-langs", default="en,de", help="two languages for the PCA view (default: en,de)")
    p.add_argument(
        "--top-k", type=positive_int, default=100, help="depth of the top-k language distribution (default: 100)"
    )
    p.add_argument(
        "--bootstrap",
        type=positive_int,
        default=1000,
        help="bootstrap resamples for the mAP confidence intervals (default: 1000)",
    )
    p.add_argument("--batch-size", type=positive_int, default=128, help="texts per encoding batch (default: 128)")
    p.add_argument(
        "--seed", type=int, default=0, help="seed of the bootstrap, probe and remove-one-target draws (default: 0)"
    )
    p.add_argument("--output", default="reports/coverage", help="report folder (default: reports/coverage)")
    return p


def parse_args(argv: Sequence[str] | None = None):
    return build_parser().parse_args(argv)


def analyse(name: str, encoder, pool, evaluator, args, out: Path) -> dict:
    """Every per-encoder analysis from one encoding of the pool."""
    from relkt.analysis.tokenizer_audit import audit_tokenizer, tokenizer_of  # deferred: heavy (TensorFlow)

    cached = EncodingCache(encoder)
    evaluator(cached)  # the protocol; the bias analyses below read the same embeddings from the cache
    results = evaluator.last_results
    q = cached.encode(pool.question_texts(), batch_size=evaluator.batch_size)
    c = cached.encode(pool.candidate_texts(evaluator.with_context), batch_size=evaluator.batch_size)
    langs, heat = limit_to_one_target(q, c, pool)
    _, dist = top_k_language_distribution(q, c, pool, k=args.top_k)
    pca_langs = [x for x in args.pca_langs.split(",") if x in langs][:2]
    r = {
        "results": results,
        "per_question": {
            "AP": evaluator.per_question["lareqa"]["AP"],
            "xx_en_hit1": evaluator.per_question.get("xx_en", {}).get("hit@1"),
        },
        "limit_to_one_target": heat,
        "remove_one_target": remove_one_target(q, c, pool, seed=args.seed),
        "monolingual_pool": monolingual_pool(q, c, pool),
        "top_k_distribution": dist,
        "language_id_probe": language_id_probe(c, pool.candidate_langs, seed=args.seed),
        "langs": langs,
    }
    slug = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    r["figures"] = {
        "heatmap": plots.heatmap(
            heat, langs, f"{name}: limit to one target, mAP (%)", out / f"heatmap_{slug}.png"
        ).name,
        "top_k": plots.language_distribution(
            dist, langs, f"{name}: languages of the top {args.top_k}", out / f"top{args.top_k}_{slug}.png"
        ).name,
    }
    if len(pca_langs) == 2:
        qm = np.isin(pool.question_langs, pca_langs)
        cm = np.isin(pool.candidate_langs, pca_langs)
        points = pca_2d(np.vstack([q[qm], c[cm]]))
        lang_lab = np.concatenate([pool.question_langs[qm], pool.candidate_langs[cm]])
        kinds = np.array(["question"] * int(qm.sum()) + ["candidate"] * int(cm.sum()))
        r["figures"]["pca"] = plots.pca_scatter(
            points, lang_lab, kinds, f"{name}: PCA of {' and '.join(pca_langs)}", out / f"pca_{slug}.png"
        ).name
    tokenizer = tokenizer_of(encoder)
    r["tokenizer"] = (
        None
        if tokenizer is None
        else {lang: audit_tokenizer(tokenizer, [x.text for x in pool.questions if x.lang == lang]) for lang in langs}
    )
    return r


def significance(a: dict, b: dict, pool, n_boot: int, seed: int) -> dict:
    out = {}
    q_langs = pool.question_langs
    for lang in ["all"] + sorted(set(q_langs)):
        m = np.ones(len(q_langs), bool) if lang == "all" else q_langs == lang
        ap_ok = np.isfinite(a["per_question"]["AP"]) & np.isfinite(b["per_question"]["AP"]) & m
        entry = {
            "mAP": paired_bootstrap(a["per_question"]["AP"][ap_ok], b["per_question"]["AP"][ap_ok], n_boot, seed=seed)
        }
        if a["per_question"]["xx_en_hit1"] is not None:
            entry["xx_en_P@1"] = mcnemar(a["per_question"]["xx_en_hit1"][m] > 0, b["per_question"]["xx_en_hit1"][m] > 0)
        out[lang] = entry
    return out


def main(argv: Sequence[str] | None = None) -> int:
    return run_cli(lambda: run(CoverageRequest(**vars(parse_args(argv)))))


def run(args: CoverageRequest) -> int:
    """Languages from pair files (`--pairs-dir`), the bias analyses (without it, or with `--bias`), or both as one
    report: the languages' report.md with the bias sections after it, their figures in OUTPUT/bias/. With
    `--tokenizers-only`, the tokenizer audit of the pool alone."""
    if args.tokenizers_only:
        table, report = audit_pool(args)
        out = Path(args.output)
        out.mkdir(parents=True, exist_ok=True)
        title = f"# Tokenizer coverage: {args.split} split, {args.texts}\n\n"
        with atomic_files([out / "report.json", out / "report.md"]) as (js, md):
            js.write(json_text(report).encode("utf-8"))
            md.write(f"{title}```\n{table}\n```\n".encode())
        print(table)
        print(f"wrote {out / 'report.md'} and {out / 'report.json'}")
        return 0
    if not args.pairs_dir:
        return run_bias(args, Path(args.output))
    if not args.langs:
        raise ConfigError("--pairs-dir: name the languages to report on with --langs (e.g. --langs bn,fi)")
    if not args.bias:
        return run_languages(args)
    run_languages(args)
    out = Path(args.output)
    run_bias(dataclasses.replace(args, langs=None), out / "bias")  # --langs: the pair files' languages
    md = (out / "bias" / "report.md").read_text(encoding="utf-8")
    md = re.sub(r"\]\(\./([^)]+\.png)\)", r"](./bias/\1)", md)  # its figures, seen from OUTPUT
    md = re.sub(r"^(#+) ", r"#\1 ", md, flags=re.M)  # its sections under one heading
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    report["bias"] = json.loads((out / "bias" / "report.json").read_text(encoding="utf-8"))
    with atomic_files([out / "report.json", out / "report.md"]) as (js, report_md):
        js.write(json_text(report).encode("utf-8"))
        body = (out / "report.md").read_text(encoding="utf-8")
        report_md.write(f"{body.rstrip()}\n\n## Language bias on the QA pool\n\n{md}".encode())
    print(f"wrote {out / 'report.md'} and {out / 'report.json'} (languages, and the bias analyses: {out / 'bias'})")
    return 0


def run_bias(args: CoverageRequest, out: Path) -> int:
    """LAReQA's language-bias analyses of every encoder on the pool, written to `out`."""
    specs = named_specs(args.encoder)  # a bad --encoder fails before TensorFlow loads
    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow); --help answers without it

    out.mkdir(parents=True, exist_ok=True)
    pool = load_pool(args)
    if args.new_lang and args.new_lang not in pool.langs:
        raise ConfigError(f"--new-lang {args.new_lang!r} is not in the pool; valid: {', '.join(pool.langs)}")
    evaluator = LareqaEvaluator(pool, batch_size=args.batch_size)
    reports = {}
    for name, spec in specs.items():
        log.info("encoding the pool with %s (%s)", name, spec)
        reports[name] = analyse(name, build_encoder(spec, trainable=False), pool, evaluator, args, out)
        reports[name]["spec"] = spec
    names = list(reports)
    pairs = list(zip(names, names[1:])) + ([(names[0], names[-1])] if len(names) > 2 else [])
    sig = {f"{a} -> {b}": significance(reports[a], reports[b], pool, args.bootstrap, args.seed) for a, b in pairs}
    md = bias_markdown(reports, pool, args.split, args.top_k, out)
    md += "\n" + significance_markdown(sig)
    if args.new_lang:
        md += "\n" + new_language_markdown(args.new_lang, reports)
    atomic_write_text(out / "report.md", md + "\n")
    atomic_write_json(
        out / "report.json",
        _jsonable(
            {
                "setup": dataclasses.asdict(args),
                "encoders": {n: {k: v for k, v in r.items() if k != "per_question"} for n, r in reports.items()},
                "significance": sig,
            }
        ),
    )
    print(f"wrote {out / 'report.md'}, {out / 'report.json'} and {len(list(out.glob('*.png')))} figures")
    return 0


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, np.ndarray):
        return _jsonable(x.tolist())
    if isinstance(x, (np.floating, float)):
        return None if not np.isfinite(x) else float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


if __name__ == "__main__":
    sys.exit(main())
