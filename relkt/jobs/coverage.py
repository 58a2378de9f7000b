"""Does an encoder serve language X? The coverage job: languages from pair files, and LAReQA's language bias.

    from relkt import api
    from relkt.jobs.requests import CoverageRequest
from relkt.jobs.results import CoverageResult

    # languages from pair files: tokenizer, held-out pairs and questions both ways, a test source whole
    api.coverage(CoverageRequest(encoders={"zero-shot": "muse", "student": "muse:runs/s/best"}, langs=["bn", "fi"],
                                 pairs_dir="../shared/data/parallel", output="reports/new_languages"))
    # LAReQA's language-bias analyses on a QA pool (the default without pairs_dir; bias=True adds them to the above)
    api.coverage(CoverageRequest(encoders={"zero-shot": "minilm"}, split="test", new_lang="th", output="reports/x"))

With `pairs_dir`, per language and encoder (relkt.jobs.pair_coverage): how the tokenizer reads it, translation
retrieval on the held-out pairs both ways, XOR-TyDi-style question retrieval (`questions_dir`, the rows not marked
`train`), and with `test_dir` the test source whole; each encoder's difference from the first with McNemar's p.
Without it, or with `bias`: LAReQA's analyses on the pool (limit/remove one target, monolingual pool, top-k
languages, PCA, language-ID probe, each encoder's tokenizer on the pool's questions), with paired bootstrap and
McNemar between encoders. Writes one OUTPUT/report.md and OUTPUT/report.json (the bias analyses under `bias` when
both ran), with figures beside them, and returns them as a `CoverageResult`.
"""

from __future__ import annotations

import dataclasses
import logging
import re
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
from relkt.data.pair_items import PairItems
from relkt.errors import ConfigError
from relkt.io import atomic_files, claim_dir, json_text
from relkt.jobs.audit import audit_pool, encoder_specs
from relkt.jobs.pair_coverage import run_languages
from relkt.jobs.pool import load_pool
from relkt.jobs.requests import CoverageRequest
from relkt.jobs.results import CoverageResult
from relkt.metrics import LareqaEvaluator
from relkt.metrics.evaluator import EncodingCache
from relkt.reports import plots
from relkt.reports.coverage_report import bias_markdown, new_language_markdown, significance_markdown

log = logging.getLogger("relkt.coverage")


def analyse(name: str, encoder, pool, evaluator, args, out: Path) -> dict:
    """Every per-encoder analysis from one encoding of the pool."""
    from relkt.analysis.tokenizer_audit import audit_tokenizer, tokenizer_of  # deferred: heavy (TensorFlow)

    cached = EncodingCache(encoder)
    evaluator(cached)  # the protocol; the bias analyses below read the same embeddings from the cache
    results = evaluator.last_results
    q, c = evaluator.encode(cached)  # the embeddings the evaluator scored (candidates mixed if the model mixes them)
    langs, heat = limit_to_one_target(q, c, pool)
    _, dist = top_k_language_distribution(q, c, pool, k=args.top_k)
    pca_langs = [x for x in args.pca_langs if x in langs][:2]
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


def run(args: CoverageRequest, items: PairItems | None = None) -> CoverageResult:
    """Languages from pair files (`pairs_dir`), the bias analyses (without it, or with `bias`), or both as one
    report: the languages' report.md with the bias sections after it, their figures in OUTPUT/bias/. With
    `tokenizers_only`, the tokenizer audit of the pool alone. `items`: the pair files already read
    (`relkt.jobs.pair_coverage.read_items`), so a caller that checked them hands them on instead of a second read."""
    if args.pairs_dir and not args.tokenizers_only and not args.langs:
        raise ConfigError("CoverageRequest.langs: name the languages to report on with pairs_dir (e.g. bn, fi)")
    claim_dir(args.output, "coverage")  # before anything is read: a place relkt may not write fails at once
    if args.tokenizers_only:
        table, report = audit_pool(args)
        out = Path(args.output)
        md = f"# Tokenizer coverage: {args.split} split, {args.texts}\n\n```\n{table}\n```\n"
        with atomic_files([out / "report.json", out / "report.md"]) as (js, md_file):
            js.write(json_text(report).encode("utf-8"))
            md_file.write(md.encode())
        return CoverageResult(out, report, md, table)
    if not args.pairs_dir:
        return run_bias(args, Path(args.output))
    languages = run_languages(args, items)
    if not args.bias:
        return languages
    out = Path(args.output)
    bias = run_bias(dataclasses.replace(args, langs=None), out / "bias")  # langs: the pair files' languages
    md = re.sub(r"\]\(\./([^)]+\.png)\)", r"](./bias/\1)", bias.markdown)  # its figures, seen from OUTPUT
    md = re.sub(r"^(#+) ", r"#\1 ", md, flags=re.M)  # its sections under one heading
    report = {**languages.report, "bias": bias.report}
    markdown = f"{languages.markdown.rstrip()}\n\n## Language bias on the QA pool\n\n{md}"
    with atomic_files([out / "report.json", out / "report.md"]) as (js, report_md):
        js.write(json_text(report).encode("utf-8"))
        report_md.write(markdown.encode())
    return CoverageResult(out, report, markdown)


def run_bias(args: CoverageRequest, out: Path) -> CoverageResult:
    """LAReQA's language-bias analyses of every encoder on the pool, written to `out`."""
    specs = encoder_specs(args)  # a bad encoder fails before TensorFlow loads
    from relkt.encoders import build_encoder  # deferred: heavy (TensorFlow); --help answers without it

    claim_dir(out, "coverage")
    pool = load_pool(args)
    if args.new_lang and args.new_lang not in pool.langs:
        raise ConfigError(
            f"CoverageRequest.new_lang {args.new_lang!r} is not in the pool; valid: {', '.join(pool.langs)}"
        )
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
    report = _jsonable(
        {
            "setup": dataclasses.asdict(args),
            "encoders": {n: {k: v for k, v in r.items() if k != "per_question"} for n, r in reports.items()},
            "significance": sig,
        }
    )
    with atomic_files([out / "report.json", out / "report.md"]) as (js, md_file):
        js.write(json_text(report).encode("utf-8"))
        md_file.write((md + "\n").encode("utf-8"))
    return CoverageResult(out, report, md + "\n")


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
