"""Text and Markdown tables of relkt's results: what the CLIs print and the reports hold (rendering only;
the numbers come from relkt.metrics and relkt.analysis). TensorFlow-free."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np


def pct(x: float | None) -> str:
    """A share as a percentage with two decimals; "n/a" for None and non-finite values."""
    return "n/a" if x is None or not np.isfinite(x) else f"{100 * x:.2f}"


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table of `header` and `rows` (cells already formatted)."""
    return "\n".join(
        ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in rows]
    )


def evaluation_table(results: dict) -> str:
    """A readable per-language table: LAReQA mAP/P@k/MRR and XX->EN P@1/P@10, as fractions (0-1): the unit of the
    results JSON and `relkt.api`, so a number read here is the number a script reads."""
    lareqa, xx, bitext = results["lareqa"], results.get("xx_en", {}), results.get("bitext", {})
    head = f"{'lang':<6}{'n_q':>6}{'mAP':>8}{'mAP@20':>8}{'P@1':>8}{'P@5':>8}{'P@10':>8}{'MRR':>8}"
    head += f"{'XX>EN P@1':>11}{'P@10':>7}" + (f"{'Q>Qen P@1':>11}" if bitext else "")
    lines = [
        "LAReQA (all candidates, all languages)  |  XX->EN (English candidates only)"
        + ("  |  Q>Qen (the English question among English questions)" if bitext else ""),
        head,
        "-" * len(head),
    ]

    def row(name: str, m: dict, x: dict | None, b: dict | None) -> str:
        s = f"{name:<6}{m['n_questions']:>6}" + "".join(
            f"{m[k]:>8.4f}" for k in ("mAP", "mAP@20", "P@1", "P@5", "P@10", "MRR")
        )
        s += f"{x['P@1']:>11.4f}{x['P@10']:>7.4f}" if x else ""
        return s + (f"{b['P@1']:>11.4f}" if b else (f"{'-':>11}" if bitext else ""))

    for lang, m in lareqa["per_language"].items():
        lines.append(row(lang, m, xx.get(lang), bitext.get(lang)))
    lines.append("-" * len(head))
    mean_xx = {k: sum(v[k] for v in xx.values()) / len(xx) for k in ("P@1", "P@10")} if xx else None
    mean_bitext = {"P@1": sum(v["P@1"] for v in bitext.values()) / len(bitext)} if bitext else None
    lines.append(row("all", lareqa, mean_xx, mean_bitext))
    splitter = results.get("setup", {}).get("sentence_splitter")
    lines.append(
        f"{lareqa['n_candidates']} candidates; scores are fractions (0-1), as in the results JSON and relkt.api."
        + (f" Sentences: {splitter}." if splitter else "")
    )
    units = [k for k in ("xx_en_article", "xx_en_paragraph", "xx_en_sentence") if results.get(k)]
    if units:
        n_units = results.get("setup", {}).get("xx_en_units", {})
        lines += [
            "",
            "XX->EN by answer unit (CL-ReLKT's protocol: every English unit of the data set is a candidate)",
            f"{'lang':<6}" + "".join(f"{u[6:] + ' P@1':>16}{'P@10':>7}" for u in units),
        ]
        for lang in results[units[0]]:
            lines.append(
                f"{lang:<6}"
                + "".join(f"{results[u][lang]['P@1']:>16.4f}{results[u][lang]['P@10']:>7.4f}" for u in units)
            )
        lines.append(
            f"{'mean':<6}"
            + "".join(
                f"{np.mean([v['P@1'] for v in results[u].values()]):>16.4f}"
                f"{np.mean([v['P@10'] for v in results[u].values()]):>7.4f}"
                for u in units
            )
        )
        if n_units:
            lines.append("candidates: " + ", ".join(f"{n} {u}s" for u, n in n_units.items()) + "; fractions.")
    if results.get("corpus"):
        corpus = results["corpus"]
        lines += [
            "",
            "Held-out parallel text: X sentence -> its English translation among the slice's (P@1)",
            "  ".join(f"{lang} {v['P@1']:.4f}" for lang, v in corpus.items())
            + f"  | mean {np.mean([v['P@1'] for v in corpus.values()]):.4f}",
        ]
    if results.get("more_metrics"):
        more = results["more_metrics"]
        width = max(len(k) for k in more) + 2
        lines += ["", "More evaluators (asked for by name)", *(f"{k:<{width}}{v:>10.4f}" for k, v in more.items())]
    return "\n".join(lines)


def audit_table(audits: dict[str, dict | None], langs: Sequence[str]) -> str:
    """Markdown: one row per language, [UNK] rate / texts with [UNK] / pieces per word / texts cut at max_length
    for each encoder ("-" where it records no max_length)."""
    names = [n for n, a in audits.items() if a is not None]
    head = (
        "| lang | "
        + " | ".join(f"{n}: [UNK] % / texts with [UNK] % / pieces per word / texts cut %" for n in names)
        + " |"
    )
    lines = [head, "|---" * (1 + len(names)) + "|"]
    for lang in langs:
        cells = [
            f"{100 * a[lang]['unk_rate']:.1f} / {100 * a[lang]['texts_with_unk']:.1f} / "
            f"{a[lang]['pieces_per_word']:.2f} / "
            + (f"{100 * a[lang]['texts_cut']:.1f}" if "texts_cut" in a[lang] else "-")
            for a in (audits[n] for n in names)
        ]
        lines.append(f"| {lang} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
