"""The language coverage report (relkt.language_coverage) as Markdown and one PNG, from its JSON alone."""

from __future__ import annotations

import numpy as np

from relkt.reports import plots

TASK_TITLES = {
    "pairs_other_domain": "pairs of another domain (a whole source never trained on)",
    "pairs": "held-out pairs",
    "questions": "XOR-TyDi questions",
    "questions_centered": "XOR-TyDi questions, each side less its language's mean over the `train` rows (--center)",
}


def _pct(x: float | None) -> str:
    return "-" if x is None or not np.isfinite(x) else f"{100 * x:.1f}"


def _share(x: float) -> str:
    """A share of letters: whole percents, two decimals below 1% (a few unreadable letters are not 0%)."""
    return f"{100 * x:.0f}%" if x >= 0.01 else f"{100 * x:.2f}%"


def _p(entry: dict | None) -> str:
    if entry is None:
        return "-"
    star = "*" if entry["p_value"] < 0.05 else ""
    return f"{100 * entry['difference']:+.1f} (p={entry['p_value']:.3g}{star})"


def languages_markdown(report: dict) -> str:
    """Tables: tokenizer, each task's retrieval both directions (with each encoder's hub share: the share of XX>EN
    queries whose nearest English text is one of the ten nearest most often), the test source; differences with
    McNemar's p."""
    setup, figures, comparisons = report["setup"], report["figures"], report["comparisons"]
    names, langs = list(figures), setup["langs"]
    lines = [
        f"# Language coverage: {', '.join(names)}",
        "",
        f"Languages: {', '.join(langs)}. Held-out pairs from {setup['pairs_dir']}: "
        + setup.get("held_out", f"{setup['dev_pairs']} a language")
        + (f"; questions from {setup['questions_dir']}" if setup["questions_dir"] else "")
        + ". P@1 and MRR in %; "
        "a difference is against the first encoder, with McNemar's p on the same items (* < 0.05).",
        "",
    ]
    lines += [
        "## How the tokenizer reads each language",
        "",
        "| lang | " + " | ".join(f"{n}: unknown pieces / pieces a word / scripts it cannot read" for n in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for lang in langs:
        cells = []
        for n in names:
            t = figures[n].get(lang, {}).get("tokenizer")
            scripts = ", ".join(f"{s.title()} {_share(v)}" for s, v in (t or {}).get("unreadable_scripts", {}).items())
            cells.append(
                "-" if t is None else f"{100 * t['unk_rate']:.1f}% / {t['pieces_per_word']:.2f} / {scripts or 'none'}"
            )
        lines.append(f"| {lang} | " + " | ".join(cells) + " |")
    for task, title in TASK_TITLES.items():
        rows = [lang for lang in langs if task in figures[names[0]].get(lang, {})]
        if not rows:
            continue
        hubs = all("hub_share" in figures[n][lang][task] for n in names for lang in rows)
        margins = all("margin P@1" in figures[n][lang][task]["xx>en"] for n in names for lang in rows)
        head = ["lang", "n"] + [f"{n} {d}" for n in names for d in ("XX>EN P@1 / MRR", "EN>XX P@1 / MRR")]
        head += [f"{n} {d} P@1 raw / margin" for n in names for d in ("XX>EN", "EN>XX")] if margins else []
        head += [f"{n} XX>EN hub share" for n in names] if hubs else []
        head += [f"{c} {d}" for c in comparisons for d in ("XX>EN", "EN>XX")]
        lines += ["", f"## Retrieval on {title}", "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for lang in rows:
            cells = [lang, str(figures[names[0]][lang][task]["xx>en"]["n"])]
            for n in names:
                for d in ("xx>en", "en>xx"):
                    r = figures[n][lang][task][d]
                    cells.append(f"{_pct(r['P@1'])} / {_pct(r['MRR'])}")
            for n in names if margins else ():
                for d in ("xx>en", "en>xx"):
                    r = figures[n][lang][task][d]
                    cells.append(f"{_pct(r['P@1'])} / {_pct(r['margin P@1'])}")
            cells += [_pct(figures[n][lang][task]["hub_share"]) for n in names] if hubs else []
            for c in comparisons.values():
                cells += [_p(c.get(f"{task}/{lang}/{d}")) for d in ("xx>en", "en>xx")]
            lines.append("| " + " | ".join(cells) + " |")
    if "test" in figures[names[0]]:
        learned = set(setup["learned"])
        test_langs = sorted(figures[names[0]]["test"])
        head = (
            ["lang", "taught"] + [f"{n} mAP / article P@1" for n in names] + [f"{c} article P@1" for c in comparisons]
        )
        lines += [
            "",
            f"## The test source whole ({setup['test_dir']}): did the others forget?",
            "",
            "| " + " | ".join(head) + " |",
            "|" + "---|" * len(head),
        ]
        for lang in test_langs:
            cells = [lang, "yes" if lang in learned else "no"]
            cells += [
                f"{_pct(figures[n]['test'][lang]['mAP'])} / {_pct(figures[n]['test'][lang]['article P@1'])}"
                for n in names
            ]
            cells += [_p(c.get(f"test/{lang}")) for c in comparisons.values()]
            lines.append("| " + " | ".join(cells) + " |")
        for n in names:
            rest = [figures[n]["test"][x] for x in test_langs if x != "en"]
            lines.append(
                f"\n{n}: mean of the non-English languages: mAP {_pct(np.mean([r['mAP'] for r in rest]))}, "
                f"article P@1 {_pct(np.mean([r['article P@1'] for r in rest]))}"
            )
    if "qa" in figures[names[0]]:
        lines += qa_markdown(setup, figures, comparisons, names)
    return "\n".join(lines) + "\n"


def qa_markdown(setup: dict, figures: dict, comparisons: dict, names: list[str]) -> list[str]:
    """Answer retrieval on the QA test source: each question language in it (its own paragraphs / articles) and
    XX->EN, every encoder, McNemar against the first; then each encoder's in-language mean over the untaught
    languages other than English, the level a taught language is read against."""
    learned = set(setup["learned"])
    qa = {n: figures[n]["qa"] for n in names}
    langs = sorted(qa[names[0]])

    def pair(n: str, lang: str, kind: str) -> str:
        f = qa[n][lang]
        return f"{_pct(f.get(f'{kind} paragraph P@1'))} / {_pct(f.get(f'{kind} article P@1'))}"

    head = ["lang", "taught", "n"]
    head += [f"{n} {kind} paragraph / article P@1" for kind in ("in-language", "XX->EN") for n in names]
    head += [f"{c}: {kind} article" for c in comparisons for kind in ("in-language", "XX->EN")]
    lines = [
        "",
        f"## Answer retrieval in each language ({setup['qa_test_dir']}, whole)",
        "",
        "In-language: a question in L against every paragraph (article) in L; XX->EN: against every English one. "
        "P@1 in %; a difference with McNemar's p on the same questions (* < 0.05).",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
    ]
    for lang in langs:
        cells = [lang, "yes" if lang in learned else "no", str(qa[names[0]][lang]["n"])]
        cells += [pair(n, lang, kind) for kind in ("in-language", "XX->EN") for n in names]
        cells += [_p(c.get(f"qa/{lang}/{kind}_article")) for c in comparisons.values() for kind in ("in", "en")]
        lines.append("| " + " | ".join(cells) + " |")
    reference = [x for x in langs if x not in learned and x != "en"]
    if reference:
        lines.append("")
        for n in names:
            means = {
                u: np.mean([qa[n][x].get(f"in-language {u} P@1", np.nan) for x in reference])
                for u in ("paragraph", "article")
            }
            lines.append(
                f"{n}: in-language mean of {', '.join(reference)} (untaught, not English): paragraph "
                f"{_pct(means['paragraph'])}, article {_pct(means['article'])}"
            )
    return lines


def coverage_figure(report: dict) -> bytes:
    """Languages on one axis, one bar per encoder, as PNG: XX>EN P@1 on held-out pairs, and on questions where
    measured."""
    figures, langs = report["figures"], report["setup"]["langs"]
    panels = {}
    for task, title in TASK_TITLES.items():
        series = {
            n: [f.get(lang, {}).get(task, {}).get("xx>en", {}).get("P@1", np.nan) for lang in langs]
            for n, f in figures.items()
        }
        if any(np.isfinite(v) for values in series.values() for v in values):
            panels[f"XX>EN P@1 on {title}"] = series
    return plots.before_after_bars(panels, langs, "Language coverage")
