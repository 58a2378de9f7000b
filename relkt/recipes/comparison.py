"""Results side by side and whether they differ: per language LAReQA mAP and XX->EN P@1 of several
`relkt.jobs.scoring` results, a
paired bootstrap CI of each mAP difference and McNemar's test on XX->EN P@1 (and on Q>Qen
translation retrieval) over the questions both scored, matched by qas_id and language; optionally each language
beside its questions' English originals (the most stage 2's question term can reach). `trainers/compare.py` is its
command line; crossval writes its pooled tables with it.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from relkt.analysis import gap_to_english, mcnemar, paired_bootstrap
from relkt.errors import DataError
from relkt.io import atomic_write_text, claim_file, read_text
from relkt.jobs.pair_coverage import read_per_item
from relkt.jobs.record import is_record_file, load_record, read_record
from relkt.jobs.scoring import per_question_path, read_per_question, read_results_file

UNITS = ("pool", "article", "paragraph", "sentence", "scored_article", "scored_paragraph")


def name_of(path: Path) -> str:
    """runs/x/student/test.json -> student; runs/x/student/test_last.json -> student:last; a record ->
    SETUP:MODEL:POOL (its pool names language-aware ranking: `xquad-r-adjusted`, so raw and adjusted never share a
    name); other files: their stem."""
    if is_record_file(path):
        record = load_record(path)
        return f"{record['setup']}:{record['model']}:{record['pool']}"
    if path.name == "test.json":
        return path.parent.name
    return f"{path.parent.name}:{path.stem[5:]}" if path.stem.startswith("test_") else path.stem


def split_lines(names: list[str], results: list[dict]) -> list[str]:
    """What each result's split let into training (`setup.split_cut`, relkt evaluate's measure); nothing when every
    result was cut by article, or scored on a source apart."""
    lines = []
    for name, result in zip(names, results):
        cut = result.get("setup", {}).get("split_cut") or {}
        overlap = cut.get("overlap")
        if cut.get("unit", "article") != "article" and overlap:
            lines.append(
                f"- `{name}`: split by {cut['unit']}: {100 * overlap['context']:.1f}% of its test questions' contexts "
                f"and {100 * overlap['article']:.1f}% of their articles are in training (not unseen text)"
            )
    return ["", "Split:", *lines] if lines else []


def language_lines(names: list[str], results: list[dict]) -> list[str]:
    """A warning when the results score different languages: their pools hold other candidates, so mAP is not like
    for like (significance is still computed on the questions both scored)."""
    langs = [sorted(r["lareqa"].get("per_language", {})) for r in results]
    if all(x == langs[0] for x in langs):
        return []
    held = "; ".join(f"`{n}`: {', '.join(x)}" for n, x in zip(names, langs))
    return [
        "",
        f"**Not like for like**: the files score different languages ({held}); each pool holds other "
        "candidates, so a language's mAP and the pool's are not comparable across them.",
    ]


def xx_en_key(unit: str) -> str:
    """The results/per-question key of an XX->EN variant: `xx_en` (the split's pool) or `xx_en_article` ..."""
    return "xx_en" if unit == "pool" else f"xx_en_{unit}"


def side_by_side(names: list[str], results: list[dict], unit: str = "pool") -> list[str]:
    """Each language's mAP and XX->EN P@1 in every result ("-" where a result lacks the language), then the pools."""
    langs = sorted({lang for r in results for lang in r["lareqa"].get("per_language", {})})
    key, label = xx_en_key(unit), "XX->EN P@1" if unit == "pool" else f"XX->EN {unit} P@1"
    lines = [
        "| lang | " + " | ".join(f"{n} mAP" for n in names) + " | " + " | ".join(f"{n} {label}" for n in names) + " |",
        "|---" * (1 + 2 * len(names)) + "|",
    ]
    for lang in langs:
        per_language = [r["lareqa"].get("per_language", {}) for r in results]
        maps = [f"{100 * p[lang]['mAP']:.2f}" if lang in p else "-" for p in per_language]
        p1 = [f"{100 * r[key][lang]['P@1']:.2f}" if lang in r.get(key, {}) else "-" for r in results]
        lines.append(f"| {lang} | " + " | ".join(maps) + " | " + " | ".join(p1) + " |")
    maps = [f"**{100 * r['lareqa']['mAP']:.2f}**" for r in results]
    p1 = [f"{100 * np.mean([v['P@1'] for v in r[key].values()]):.2f} (mean)" if r.get(key) else "-" for r in results]
    lines.append("| all | " + " | ".join(maps) + " | " + " | ".join(p1) + " |")
    if all(r.get("bitext") for r in results):  # translation retrieval: files written before it lack it
        lines += [
            "",
            "| lang | "
            + " | ".join(f"{n} Q>Qen P@1" for n in names)
            + " | "
            + " | ".join(f"{n} cos" for n in names)
            + " |",
            "|---" * (1 + 2 * len(names)) + "|",
        ]
        for lang in sorted(results[0]["bitext"]):
            p1 = [f"{100 * r['bitext'][lang]['P@1']:.2f}" if lang in r["bitext"] else "-" for r in results]
            cos = [f"{r['bitext'][lang]['cos']:.3f}" if lang in r["bitext"] else "-" for r in results]
            lines.append(f"| {lang} | " + " | ".join(p1) + " | " + " | ".join(cos) + " |")
    return lines


def load_per_question(path: Path) -> dict[str, np.ndarray]:
    """The per-question scores written beside a results file (or packed in a record), keyed by question."""
    if is_record_file(path):
        return read_record(path)[1]
    npz = per_question_path(path)
    if not npz.exists():
        raise FileNotFoundError(
            f"{npz}: no per-question scores beside {path}; re-run relkt evaluate with --output {path}"
        )
    return read_per_question(path)


class NotComparable(DataError):
    """A test the files cannot support (no shared question, a unit not scored, no English originals): noted in the
    comparison, not fatal; a damaged or missing-key file is a DataError that stops it."""


def align(a: dict, b: dict, a_path: Path, b_path: Path) -> tuple[dict, dict]:
    """The two runs' per-question arrays restricted to their common (qas_id, lang) questions, same order."""
    key_a = np.char.add(np.char.add(a["qas_id"].astype(str), "\x00"), a["lang"].astype(str))
    key_b = np.char.add(np.char.add(b["qas_id"].astype(str), "\x00"), b["lang"].astype(str))
    common, ia, ib = np.intersect1d(key_a, key_b, return_indices=True)
    if not len(common):
        raise NotComparable(f"{a_path} and {b_path} share no question: were they scored on the same split?")
    return {k: v[ia] for k, v in a.items()}, {k: v[ib] for k, v in b.items()}


def significance_rows(a: dict, b: dict, n_boot: int, seed: int, unit: str = "pool") -> list[dict]:
    """Per language and overall: mAP delta (b - a) with its paired-bootstrap CI, and McNemar on XX->EN P@1."""
    hits = f"{xx_en_key(unit)}_hit1"

    rows = []
    for lang in sorted(set(a["lang"].tolist())) + ["all"]:
        m = np.ones(len(a["lang"]), bool) if lang == "all" else a["lang"] == lang
        ok = m & np.isfinite(a["AP"]) & np.isfinite(b["AP"])
        row = {"lang": lang, "mAP": paired_bootstrap(a["AP"][ok], b["AP"][ok], n_boot, seed=seed)}
        if hits in a and hits in b:
            sel = m & (a["lang"] != "en") if lang == "all" else m  # "all": the non-English question languages
            row["xx_en_P@1"] = mcnemar(a[hits][sel] > 0, b[hits][sel] > 0)
        if "bitext_hit1" in a and "bitext_hit1" in b:
            sel = m & np.isfinite(a["bitext_hit1"]) & np.isfinite(b["bitext_hit1"])
            if sel.any():
                row["bitext_P@1"] = mcnemar(a["bitext_hit1"][sel] > 0, b["bitext_hit1"][sel] > 0)
        rows.append(row)
    return rows


def significance_lines(a_name: str, b_name: str, rows: list[dict], unit: str = "pool") -> list[str]:
    """The Markdown table of one comparison's per-language differences and their significance."""
    with_bitext = any("bitext_P@1" in r for r in rows)
    label = "XX->EN" if unit == "pool" else f"XX->EN ({unit})"
    lines = [
        f"{b_name} vs {a_name}: mAP difference (points, 95% paired-bootstrap CI) and {label} P@1 McNemar "
        f"(questions only {a_name} / only {b_name} got right, p)"
        + (", the same for Q>Qen (bitext) P@1" if with_bitext else "")
        + "; * = significant at 0.05",
        "| lang | mAP delta | 95% CI | XX->EN P@1 only a / only b | McNemar p |"
        + (" Q>Qen P@1 only a / only b | McNemar p |" if with_bitext else ""),
        "|---|---|---|---|---|" + ("---|---|" if with_bitext else ""),
    ]

    def mcnemar_cells(x: dict | None) -> str:
        if not x:
            return " - | - |"
        return f" {x['only_a']} / {x['only_b']} | {x['p_value']:.3f}{'*' if x['p_value'] < 0.05 else ''} |"

    for r in rows:
        m = r["mAP"]
        ci = f"[{100 * m['low']:+.2f}, {100 * m['high']:+.2f}]"
        delta = f"{100 * m['delta']:+.2f}{'*' if m['significant'] else ''}"
        lang = "all (XX->EN: non-English)" if r["lang"] == "all" else r["lang"]
        line = f"| {lang} | {delta} | {ci} |" + mcnemar_cells(r.get("xx_en_P@1"))
        lines.append(line + (mcnemar_cells(r.get("bitext_P@1")) if with_bitext else ""))
    return lines


def english_gap_lines(name: str, per_question: dict, unit: str = "pool") -> list[str]:
    """One run's XX->EN P@1 per language beside that of the same questions asked in English (`gap_to_english`)."""
    label, key = "XX->EN" if unit == "pool" else f"XX->EN ({unit})", f"{xx_en_key(unit)}_hit1"
    if key not in per_question:
        raise NotComparable(f"its per-question scores have no {key} (score it with relkt evaluate --xx-en-unit {unit})")
    try:
        rows = gap_to_english(per_question["lang"], per_question["qas_id"], per_question[key])
    except ValueError as e:  # no English questions in the file
        raise NotComparable(str(e)) from None
    lines = [
        f"{name}: {label} P@1 of each language beside its questions' English originals, same model (questions "
        "only English / only X got right, McNemar p); * = significant at 0.05",
        "| lang | P@1 | English originals' P@1 | gap (points) | only English / only X | McNemar p | questions |",
        "|---|---|---|---|---|---|---|",
    ]
    for lang, r in rows.items():
        lines.append(
            f"| {lang} | {100 * r['P@1']:.2f} | {100 * r['english_P@1']:.2f} | {100 * r['gap']:+.2f} | "
            f"{r['only_english']} / {r['only_x']} | {r['p_value']:.3f}{'*' if r['p_value'] < 0.05 else ''} | "
            f"{r['n_questions']} |"
        )
    return lines


def read_results(path: Path) -> dict:
    """One results JSON (or a committed record's results); a DataError naming it when it is missing, not JSON, or not
    scores (no `lareqa` block)."""
    if is_record_file(Path(path)):
        return read_record(path)[0]
    return read_results_file(path)


def comparison(
    paths: Sequence[str | Path],
    against: str = "previous",
    unit: str = "pool",
    bootstrap: int = 1000,
    seed: int = 0,
    english_gap: bool = False,
) -> str:
    """The Markdown comparison of the results at `paths`: side by side, then each against the one before it
    (`against="previous"`) or against the first (`"first"`), at XX->EN `unit` (pool: the split's English
    sentences; article ...: CL-ReLKT's protocol)."""
    if unit not in UNITS:
        raise DataError(f"unit {unit!r}: valid: {', '.join(UNITS)}")
    if against not in ("previous", "first"):
        raise DataError(f"against {against!r}: valid: previous, first")
    paths = [Path(p) for p in paths]
    results = [read_results(p) for p in paths]
    names = [name_of(p) for p in paths]
    lines = [
        "# " + " vs ".join(names),
        "",
        "Test scores in %; " + ", ".join(f"`{n}`: `{p}`" for n, p in zip(names, paths)) + ".",
        *split_lines(names, results),
        *language_lines(names, results),
        "",
        *side_by_side(names, results, unit),
    ]
    for i in range(1, len(paths)):
        j = 0 if against == "first" else i - 1
        try:
            a, b = align(load_per_question(paths[j]), load_per_question(paths[i]), paths[j], paths[i])
        except (FileNotFoundError, NotComparable) as e:  # a damaged file is an error
            lines += ["", f"(no significance for {names[i]} vs {names[j]}: {e})"]
            continue
        rows = significance_rows(a, b, bootstrap, seed, unit)
        lines += ["", *significance_lines(names[j], names[i], rows, unit)]
    if english_gap:
        for name, path in zip(names, paths):
            try:
                lines += ["", *english_gap_lines(name, load_per_question(path), unit)]
            except (FileNotFoundError, NotComparable) as e:  # a damaged file is an error
                lines += ["", f"(no gap to English for {name}: {e})"]
    return "\n".join(lines) + "\n" + MARK + "\n"


# The last line of every comparison relkt writes: how a later write knows the file is its own to replace.
MARK = "<!-- written by relkt: a comparison of results files -->"


def is_comparison_file(path: Path) -> bool:
    """Whether `path` is a comparison relkt wrote: its last line is MARK, or (written before the mark) it opens with
    the title and the line naming its results files that `comparison` writes."""
    try:
        text = read_text(path, "comparison")
    except (OSError, ValueError):
        return False
    head = text.splitlines()[:3]
    older = len(head) == 3 and head[0].startswith("# ") and head[2].startswith("Test scores in %; `")
    return text.rstrip("\n").endswith(MARK) or older


def write_comparison(path: str | Path, text: str) -> Path:
    """`text` (a `comparison`) written to `path` atomically, under relkt's write rule: a new file or a comparison
    relkt wrote there before; never a user's file, a link, or a file inside a live run (WriteError)."""
    path = claim_file(path, is_comparison_file, "comparison")
    return atomic_write_text(path, text)


def coverage_ablation(runs: dict[str, str | Path], encoder: str = "student", first: str = "zero-shot") -> str:
    """Students of several `relkt coverage` reports on the same items side by side (each report's `per_item.npz`):
    per task (bitext, the test source, answer retrieval), language and direction, `first` (from the first report)
    and each run's `encoder` P@1 in %, each run against the first run with McNemar's p (only-first / only-later
    counts). Reports holding other items are refused."""
    hits = {}
    for name, folder in runs.items():
        path = Path(folder) / "per_item.npz"
        z = read_per_item(folder)
        hits[name] = {k.partition("|")[2]: v for k, v in z.items() if k.startswith(f"{encoder}|")}
        if name == next(iter(runs)):
            hits[first] = {k.partition("|")[2]: v for k, v in z.items() if k.startswith(f"{first}|")}
        if not hits[name]:
            raise DataError(f"{path}: no hits of an encoder named {encoder!r}")
        if name == next(iter(runs)) and not hits[first]:
            held = sorted({k.partition("|")[0] for k in z})
            raise DataError(
                f"{path}: no hits of an encoder named {first!r} to compare against (it holds {', '.join(held)}): "
                "the first report needs the base model scored under that name"
            )
    names = list(runs)
    keys = [k for k in hits[names[0]] if "/xx>en" in k or k.startswith(("test/", "qa/"))]  # qa/: answer retrieval
    for name in names[1:]:
        for key in keys:
            if key not in hits[name] or len(hits[name][key]) != len(hits[names[0]][key]):
                raise DataError(f"{runs[name]}: {key} is not scored on the same items as in {runs[names[0]]}")
    head = [first, *names] + [f"{n} vs {names[0]}" for n in names[1:]]
    lines = ["| item | n | " + " | ".join(head) + " |", "|---|---|" + "---|" * len(head)]
    for key in keys:
        base = hits[names[0]][key]
        cells = [f"{100 * np.mean(hits[n][key]):.1f}" for n in (first, *names)]
        for n in names[1:]:
            test = mcnemar(base, hits[n][key])
            diff = 100 * (np.mean(hits[n][key]) - np.mean(base))
            cells.append(f"{diff:+.1f} ({test['only_a']} / {test['only_b']}, p = {test['p_value']:.3g})")
        lines.append(f"| {key} | {len(base)} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
