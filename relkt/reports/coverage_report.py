"""The coverage report's Markdown (relkt coverage): retrieval, language bias, embedding views, significance and a
new language's row and column, with the figures of relkt.reports.plots."""

from __future__ import annotations

import numpy as np

from relkt.reports import plots
from relkt.reports.tables import markdown_table as _table
from relkt.reports.tables import pct as _pct


def bias_markdown(reports: dict[str, dict], pool, split: str, top_k: int) -> tuple[str, dict[str, bytes]]:
    """report.md: tables and figures (each encoder's named in its `figures`); every number also in report.json. With
    the figure it draws itself: {"heatmap_delta.png": PNG} with two encoders or more, else {}."""
    names = list(reports)
    first, last = reports[names[0]], reports[names[-1]]
    langs = first["langs"]
    per_lang = lambda r, lang, k: r["results"]["lareqa"]["per_language"][lang][k]  # noqa: E731
    drawn: dict[str, bytes] = {}
    md = [
        "# relkt coverage report",
        "",
        f"Pool: XQuAD-R split `{split}`, {len(pool.questions)} questions x {len(pool.candidates)} candidates, "
        f"languages {', '.join(langs)}. Encoders: "
        + ", ".join(f"**{n}** (`{reports[n]['spec']}`)" for n in names)
        + ".",
        "Scores in %. Deltas are against the first encoder.",
        "",
    ]
    md += ["## Retrieval per question language", ""]
    for metric in ("mAP", "P@1", "P@5", "P@10"):
        rows = []
        for lang in langs + ["all"]:
            vals = [
                r["results"]["lareqa"][metric] if lang == "all" else per_lang(r, lang, metric) for r in reports.values()
            ]
            rows.append([lang] + [_pct(vals[0])] + [f"{_pct(v)} ({100 * (v - vals[0]):+.2f})" for v in vals[1:]])
        md += [f"LAReQA {metric}:", "", _table(["lang"] + names, rows), ""]
    if first["results"].get("xx_en"):
        rows = [[lang] + [_pct(r["results"]["xx_en"][lang]["P@1"]) for r in reports.values()] for lang in langs]
        md += ["XX->EN P@1 (English candidates only, CL-ReLKT protocol):", "", _table(["lang"] + names, rows), ""]

    md += [
        "## Limit to one target (LAReQA Fig. 4)",
        "",
        "mAP (= MRR) for each (question language, answer language) with the other targets removed from the pool.",
        "",
    ]
    md += [f"![{n}](./{r['figures']['heatmap']})" for n, r in reports.items()] + [""]
    if len(names) > 1:
        delta = last["limit_to_one_target"] - first["limit_to_one_target"]
        bound = float(np.nanmax(np.abs(delta))) or 1.0
        drawn["heatmap_delta.png"] = plots.heatmap(delta, langs, f"{names[-1]} minus {names[0]}", -bound, bound, "RdBu")
        md += ["![delta](./heatmap_delta.png)", ""]

    md += [
        "## Same-language bias: remove one target (LAReQA Table 3)",
        "",
        "mAP with the same-language target removed vs a random other-language target removed; relative delta "
        "(same - other) / other. Negative: the encoder prefers answers in the question's language.",
        "",
    ]
    rows = [
        [lang]
        + [
            f"{_pct(r['remove_one_target'].get(lang, {}).get('mAP_without_same_language', np.nan))} / "
            f"{_pct(r['remove_one_target'].get(lang, {}).get('mAP_without_other_language', np.nan))} / "
            f"{_pct(r['remove_one_target'].get(lang, {}).get('relative_delta', np.nan))}"
            for r in reports.values()
        ]
        for lang in langs + ["all"]
    ]
    md += [_table(["lang"] + [f"{n}: w/o same / w/o other / rel. delta" for n in names], rows), ""]

    md += [
        "## Monolingual pool (LAReQA Table 4)",
        "",
        "mAP when questions only see candidates of their own language.",
        "",
    ]
    rows = [[lang] + [_pct(r["monolingual_pool"].get(lang, np.nan)) for r in reports.values()] for lang in langs]
    md += [_table(["lang"] + names, rows), ""]

    md += [f"## Languages of the top {top_k} (LAReQA Fig. 6)", ""]
    md += [f"![{n}](./{r['figures']['top_k']})" for n, r in reports.items()] + [""]
    rows = [[lang] + [_pct(r["top_k_distribution"][i, i]) for r in reports.values()] for i, lang in enumerate(langs)]
    md += ["Share of same-language candidates in the top k:", "", _table(["lang"] + names, rows), ""]

    md += [
        "## Embedding views",
        "",
        "Held-out accuracy of a linear language-ID probe on candidate embeddings "
        f"(chance: {100 / len(langs):.1f}%; lower = more language-neutral):",
        "",
        _table(["encoder", "probe accuracy"], [[n, _pct(r["language_id_probe"])] for n, r in reports.items()]),
        "",
    ]
    md += [f"![{n}](./{r['figures']['pca']})" for n, r in reports.items() if "pca" in r["figures"]] + [""]

    return "\n".join(md), drawn


def significance_markdown(sig: dict) -> str:
    """The significance section: each pair of encoders' mAP difference with its bootstrap CI and McNemar on XX->EN
    P@1."""
    if not sig:
        return ""
    md = [
        "## Significance",
        "",
        "Paired bootstrap 95% CI of the LAReQA mAP difference (second minus first), and "
        "McNemar's test on XX->EN P@1; * marks p < 0.05 / a CI excluding 0.",
        "",
    ]
    for pair, by_lang in sig.items():
        rows = []
        for lang, e in by_lang.items():
            b = e["mAP"]
            row = [
                lang,
                f"{100 * b['delta']:+.2f} [{100 * b['low']:+.2f}, "
                f"{100 * b['high']:+.2f}]{' *' if b['significant'] else ''}",
            ]
            if "xx_en_P@1" in e:
                m = e["xx_en_P@1"]
                row.append(
                    f"{m['only_a']} / {m['only_b']}, p = {m['p_value']:.3g}{' *' if m['p_value'] < 0.05 else ''}"
                )
            rows.append(row)
        md += [
            f"**{pair}**",
            "",
            _table(["lang", "mAP delta [95% CI]", "XX->EN P@1: only first / only second right, p"], rows),
            "",
        ]
    return "\n".join(md)


def new_language_markdown(lang: str, reports: dict) -> str:
    """A new language's section: its row and column of the limit-to-one-target heatmap, every language's mAP before
    and after, and the tokenizer on its questions."""
    names = list(reports)
    first, last = reports[names[0]], reports[names[-1]]
    langs = first["langs"]
    i = langs.index(lang)
    md = [
        f"## New language: {lang}",
        "",
        f"Row (questions in {lang}) and column (answers in {lang}) of the limit-to-one-target "
        f"heatmap, {names[0]} -> {names[-1]}:",
        "",
    ]
    rows = [
        [
            other,
            f"{_pct(first['limit_to_one_target'][i, j])} -> {_pct(last['limit_to_one_target'][i, j])}",
            f"{_pct(first['limit_to_one_target'][j, i])} -> {_pct(last['limit_to_one_target'][j, i])}",
        ]
        for j, other in enumerate(langs)
    ]
    md += [
        _table(["other language", f"{lang} questions -> other answers", f"other questions -> {lang} answers"], rows),
        "",
    ]
    per_lang = lambda r, x: r["results"]["lareqa"]["per_language"][x]["mAP"]  # noqa: E731
    rows = [
        [x, _pct(per_lang(first, x)), _pct(per_lang(last, x)), f"{100 * (per_lang(last, x) - per_lang(first, x)):+.2f}"]
        for x in langs
    ]
    md += [
        f"LAReQA mAP per question language (forgetting shows as a drop outside {lang}):",
        "",
        _table(["lang", names[0], names[-1], "delta"], rows),
        "",
    ]
    rows = []
    for n, r in reports.items():
        t = (r.get("tokenizer") or {}).get(lang)
        rows.append(
            [
                n,
                "n/a (no tokenizer exposed)" if t is None else _pct(t["unk_rate"]),
                "" if t is None else _pct(t["texts_with_unk"]),
                "" if t is None else f"{t['pieces_per_word']:.2f}",
            ]
        )
    md += [
        f"Tokenizer on the {lang} questions:",
        "",
        _table(["encoder", "unknown-token rate", "questions with an unknown token", "pieces per word"], rows),
        "",
    ]
    return "\n".join(md)
