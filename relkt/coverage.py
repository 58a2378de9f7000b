"""Coverage and language-bias report for one or more encoders on the LAReQA pool.

    python -m relkt.coverage --encoder zero-shot=minilm --encoder teacher=hub:runs/x/teacher/best \
        --encoder student=hub:runs/x/student/best --split test --new-lang th --output reports/x

Writes OUTPUT/report.md (tables; renders in any Markdown viewer), OUTPUT/*.png and OUTPUT/report.json.
"""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path
from typing import Sequence

import numpy as np

from relkt.cli_types import positive_int, split_fractions
from relkt.data.splits import SPLITS
from relkt.errors import ConfigError, RelktError

log = logging.getLogger("relkt.coverage")


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m relkt.coverage", description=__doc__.split("\n")[0])
    p.add_argument("--encoder", action="append", required=True, metavar="NAME=SPEC",
                   help="an encoder to report on (repeat; the first is the baseline), e.g. teacher=hub:runs/t/best")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--split", default="test", choices=SPLITS)
    p.add_argument("--split-fractions", type=split_fractions, default="0.7,0.1,0.2")
    p.add_argument("--split-seed", type=int, default=0)
    p.add_argument("--langs", default=None, help="comma-separated languages (default: all)")
    p.add_argument("--new-lang", default=None, help="a language to report coverage for (row/column, forgetting, tokenizer)")
    p.add_argument("--pca-langs", default="en,de", help="two languages for the PCA view")
    p.add_argument("--top-k", type=int, default=100)
    p.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples for the mAP confidence intervals")
    p.add_argument("--batch-size", type=positive_int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--output", default="reports/coverage")
    return p.parse_args(argv)


def _pct(x: float) -> str:
    return "n/a" if x is None or not np.isfinite(x) else f"{100 * x:.2f}"


def _table(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows])


def analyse(name: str, encoder, pool, evaluator, args, out: Path) -> dict:
    """Every per-encoder analysis from one encoding of the pool."""
    from relkt.analysis import (audit_tokenizer, language_id_probe, limit_to_one_target, monolingual_pool, pca_2d,
                                remove_one_target, tokenizer_of, top_k_language_distribution)
    from relkt.analysis import report_plots as plots

    q, c = evaluator.encode(encoder)
    results = evaluator.compute(q, c)
    langs, heat = limit_to_one_target(q, c, pool)
    _, dist = top_k_language_distribution(q, c, pool, k=args.top_k)
    pca_langs = [x for x in args.pca_langs.split(",") if x in langs][:2]
    r = {
        "results": results,
        "per_question": {"AP": evaluator.per_question["lareqa"]["AP"], "xx_en_hit1": evaluator.per_question.get("xx_en", {}).get("hit@1")},
        "limit_to_one_target": heat, "remove_one_target": remove_one_target(q, c, pool, seed=args.seed),
        "monolingual_pool": monolingual_pool(q, c, pool), "top_k_distribution": dist,
        "language_id_probe": language_id_probe(c, pool.candidate_langs, seed=args.seed), "langs": langs,
    }
    slug = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    r["figures"] = {
        "heatmap": plots.heatmap(heat, langs, f"{name}: limit to one target, mAP (%)", out / f"heatmap_{slug}.png").name,
        "top_k": plots.language_distribution(dist, langs, f"{name}: languages of the top {args.top_k}", out / f"top{args.top_k}_{slug}.png").name,
    }
    if len(pca_langs) == 2:
        qm = np.isin(pool.question_langs, pca_langs)
        cm = np.isin(pool.candidate_langs, pca_langs)
        points = pca_2d(np.vstack([q[qm], c[cm]]))
        lang_lab = np.concatenate([pool.question_langs[qm], pool.candidate_langs[cm]])
        kinds = np.array(["question"] * int(qm.sum()) + ["candidate"] * int(cm.sum()))
        r["figures"]["pca"] = plots.pca_scatter(points, lang_lab, kinds, f"{name}: PCA of {' and '.join(pca_langs)}", out / f"pca_{slug}.png").name
    tokenizer = tokenizer_of(encoder)
    r["tokenizer"] = None if tokenizer is None else {
        lang: audit_tokenizer(tokenizer, [x.text for x in pool.questions if x.lang == lang]) for lang in langs}
    return r


def significance(a: dict, b: dict, pool, n_boot: int, seed: int) -> dict:
    from relkt.analysis import mcnemar, paired_bootstrap

    out = {}
    q_langs = pool.question_langs
    for lang in ["all"] + sorted(set(q_langs)):
        m = np.ones(len(q_langs), bool) if lang == "all" else q_langs == lang
        ap_ok = np.isfinite(a["per_question"]["AP"]) & np.isfinite(b["per_question"]["AP"]) & m
        entry = {"mAP": paired_bootstrap(a["per_question"]["AP"][ap_ok], b["per_question"]["AP"][ap_ok], n_boot, seed=seed)}
        if a["per_question"]["xx_en_hit1"] is not None:
            entry["xx_en_P@1"] = mcnemar(a["per_question"]["xx_en_hit1"][m] > 0, b["per_question"]["xx_en_hit1"][m] > 0)
        out[lang] = entry
    return out


def write_report(reports: dict[str, dict], pool, args, out: Path) -> str:
    """report.md: tables and figures; every number also in report.json."""
    from relkt.analysis import report_plots as plots

    names = list(reports)
    first, last = reports[names[0]], reports[names[-1]]
    langs = first["langs"]
    per_lang = lambda r, lang, k: r["results"]["lareqa"]["per_language"][lang][k]  # noqa: E731
    md = ["# relkt coverage report", "",
          f"Pool: XQuAD-R split `{args.split}`, {len(pool.questions)} questions x {len(pool.candidates)} candidates, "
          f"languages {', '.join(langs)}. Encoders: " + ", ".join(f"**{n}** (`{reports[n]['spec']}`)" for n in names) + ".",
          "Scores in %. Deltas are against the first encoder.", ""]
    md += ["## Retrieval per question language", ""]
    for metric in ("mAP", "P@1", "P@5", "P@10"):
        rows = []
        for lang in langs + ["all"]:
            vals = [r["results"]["lareqa"][metric] if lang == "all" else per_lang(r, lang, metric) for r in reports.values()]
            rows.append([lang] + [_pct(vals[0])] + [f"{_pct(v)} ({100 * (v - vals[0]):+.2f})" for v in vals[1:]])
        md += [f"LAReQA {metric}:", "", _table(["lang"] + names, rows), ""]
    if first["results"].get("xx_en"):
        rows = [[lang] + [_pct(r["results"]["xx_en"][lang]["P@1"]) for r in reports.values()] for lang in langs]
        md += ["XX->EN P@1 (English candidates only, CL-ReLKT protocol):", "", _table(["lang"] + names, rows), ""]

    md += ["## Limit to one target (LAReQA Fig. 4)", "",
           "mAP (= MRR) for each (question language, answer language) with the other targets removed from the pool.", ""]
    md += [f"![{n}](./{r['figures']['heatmap']})" for n, r in reports.items()] + [""]
    if len(names) > 1:
        delta = last["limit_to_one_target"] - first["limit_to_one_target"]
        bound = float(np.nanmax(np.abs(delta))) or 1.0
        name = plots.heatmap(delta, langs, f"{names[-1]} minus {names[0]}", out / "heatmap_delta.png", -bound, bound, "RdBu").name
        md += [f"![delta](./{name})", ""]

    md += ["## Same-language bias: remove one target (LAReQA Table 3)", "",
           "mAP with the same-language target removed vs a random other-language target removed; relative delta "
           "(same - other) / other. Negative: the encoder prefers answers in the question's language.", ""]
    rows = [[lang] + [f"{_pct(r['remove_one_target'].get(lang, {}).get('mAP_without_same_language', np.nan))} / "
                      f"{_pct(r['remove_one_target'].get(lang, {}).get('mAP_without_other_language', np.nan))} / "
                      f"{_pct(r['remove_one_target'].get(lang, {}).get('relative_delta', np.nan))}" for r in reports.values()]
            for lang in langs + ["all"]]
    md += [_table(["lang"] + [f"{n}: w/o same / w/o other / rel. delta" for n in names], rows), ""]

    md += ["## Monolingual pool (LAReQA Table 4)", "", "mAP when questions only see candidates of their own language.", ""]
    rows = [[lang] + [_pct(r["monolingual_pool"].get(lang, np.nan)) for r in reports.values()] for lang in langs]
    md += [_table(["lang"] + names, rows), ""]

    md += [f"## Languages of the top {args.top_k} (LAReQA Fig. 6)", ""]
    md += [f"![{n}](./{r['figures']['top_k']})" for n, r in reports.items()] + [""]
    rows = [[lang] + [_pct(r["top_k_distribution"][i, i]) for r in reports.values()] for i, lang in enumerate(langs)]
    md += ["Share of same-language candidates in the top k:", "", _table(["lang"] + names, rows), ""]

    md += ["## Embedding views", "", "Held-out accuracy of a linear language-ID probe on candidate embeddings "
           f"(chance: {100 / len(langs):.1f}%; lower = more language-neutral):", "",
           _table(["encoder", "probe accuracy"], [[n, _pct(r["language_id_probe"])] for n, r in reports.items()]), ""]
    md += [f"![{n}](./{r['figures']['pca']})" for n, r in reports.items() if "pca" in r["figures"]] + [""]

    return "\n".join(md)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("relkt").setLevel(logging.INFO)
    try:
        return run(args)
    except RelktError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


def run(args) -> int:
    from relkt.data.lareqa_pool import LareqaPool
    from relkt.encoders import build_encoder
    from relkt.encoders.registry import named_specs
    from relkt.io import atomic_write_json, atomic_write_text
    from relkt.metrics import LareqaEvaluator

    specs = named_specs(args.encoder)
    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    fractions = args.split_fractions
    langs = [x.strip() for x in args.langs.split(",")] if args.langs else None
    pool = LareqaPool.load(args.data_dir, langs=langs, split=args.split, fractions=fractions, seed=args.split_seed)
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
    md = write_report(reports, pool, args, out)
    md += "\n" + significance_markdown(sig)
    if args.new_lang:
        md += "\n" + new_language_markdown(args.new_lang, reports)
    atomic_write_text(out / "report.md", md + "\n")
    atomic_write_json(out / "report.json", _jsonable({"setup": vars(args), "encoders": {
        n: {k: v for k, v in r.items() if k != "per_question"} for n, r in reports.items()}, "significance": sig}))
    print(f"wrote {out / 'report.md'}, {out / 'report.json'} and {len(list(out.glob('*.png')))} figures")
    return 0


def significance_markdown(sig: dict) -> str:
    if not sig:
        return ""
    md = ["## Significance", "", "Paired bootstrap 95% CI of the LAReQA mAP difference (second minus first), and "
          "McNemar's test on XX->EN P@1; * marks p < 0.05 / a CI excluding 0.", ""]
    for pair, by_lang in sig.items():
        rows = []
        for lang, e in by_lang.items():
            b = e["mAP"]
            row = [lang, f"{100 * b['delta']:+.2f} [{100 * b['low']:+.2f}, {100 * b['high']:+.2f}]{' *' if b['significant'] else ''}"]
            if "xx_en_P@1" in e:
                m = e["xx_en_P@1"]
                row.append(f"{m['only_a']} / {m['only_b']}, p = {m['p_value']:.3g}{' *' if m['p_value'] < 0.05 else ''}")
            rows.append(row)
        md += [f"**{pair}**", "", _table(["lang", "mAP delta [95% CI]", "XX->EN P@1: only first / only second right, p"], rows), ""]
    return "\n".join(md)


def new_language_markdown(lang: str, reports: dict) -> str:
    names = list(reports)
    first, last = reports[names[0]], reports[names[-1]]
    langs = first["langs"]
    i = langs.index(lang)
    md = [f"## New language: {lang}", "",
          f"Row (questions in {lang}) and column (answers in {lang}) of the limit-to-one-target heatmap, {names[0]} -> {names[-1]}:", ""]
    rows = [[other, f"{_pct(first['limit_to_one_target'][i, j])} -> {_pct(last['limit_to_one_target'][i, j])}",
             f"{_pct(first['limit_to_one_target'][j, i])} -> {_pct(last['limit_to_one_target'][j, i])}"] for j, other in enumerate(langs)]
    md += [_table(["other language", f"{lang} questions -> other answers", f"other questions -> {lang} answers"], rows), ""]
    per_lang = lambda r, x: r["results"]["lareqa"]["per_language"][x]["mAP"]  # noqa: E731
    rows = [[x, _pct(per_lang(first, x)), _pct(per_lang(last, x)), f"{100 * (per_lang(last, x) - per_lang(first, x)):+.2f}"] for x in langs]
    md += [f"LAReQA mAP per question language (forgetting shows as a drop outside {lang}):", "",
           _table(["lang", names[0], names[-1], "delta"], rows), ""]
    rows = []
    for n, r in reports.items():
        t = (r.get("tokenizer") or {}).get(lang)
        rows.append([n, "n/a (no tokenizer exposed)" if t is None else _pct(t["unk_rate"]),
                     "" if t is None else _pct(t["texts_with_unk"]), "" if t is None else f"{t['pieces_per_word']:.2f}"])
    md += [f"Tokenizer on the {lang} questions:", "", _table(["encoder", "unknown-token rate", "questions with an unknown token", "pieces per word"], rows), ""]
    return "\n".join(md)


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
