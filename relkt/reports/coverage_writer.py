"""The coverage job's files (relkt.jobs.coverage), written once from its figures: report.md and report.json of the
parts that ran (the tokenizer audit; the languages' report with per_item.npz and coverage.png; LAReQA's bias
analyses with their figures, under OUTPUT/bias when they follow a languages' report)."""

from __future__ import annotations

import io
import json
import re
import uuid
from pathlib import Path

import numpy as np

from relkt.io import atomic_files, claim_dir, json_text
from relkt.reports import plots
from relkt.reports.coverage_report import bias_markdown, new_language_markdown, significance_markdown
from relkt.reports.language_coverage_report import coverage_figure, languages_markdown
from relkt.reports.tables import audit_table

# one random key in report.json and per_item.npz: the two (and report.md) were written together
SET_KEY = "set_key"
HELD_BACK = ("per_question", "pca")  # a bias report's arrays that stay out of report.json (drawn, or compared)


def write_coverage(
    out: Path, scores: dict[str, dict], comparisons: dict, setup: dict, pool=None
) -> tuple[dict, str, str | None]:
    """(report, markdown, the audit table or None): every file of the report rendered, then written to `out` as one
    set (a failure leaves none of them changed).

    Args:
        out: the claimed output folder.
        scores: {encoder name: relkt.analysis.coverage_scores.encoder_coverage(...)}, in the request's order.
        comparisons: relkt.analysis.coverage_scores.coverage_comparisons(...).
        setup: the request's fields, plus "held_out" (what the languages' report calls held out), "specs" and the
            languages' "langs" and "questions_scored".
        pool: the scored QA pool (the bias analyses' and the tokenizer audit's), or None.
    """
    first, table = next(iter(scores.values())), None
    if "tokenizer_audit" in first:
        report, markdown, table = _tokenizer_report(scores, setup, pool)
        files: dict[str, bytes] = {}
    elif "languages" not in first:
        report, markdown, files = _bias_report(scores, comparisons["bias"], setup, pool)
    else:
        report, markdown, files = _languages_report(scores, comparisons, setup, pool)
    files = {**files, "report.json": json_text(report).encode("utf-8"), "report.md": markdown.encode("utf-8")}
    if any(name.startswith("bias/") for name in files):
        claim_dir(out / "bias", "coverage", below=out)
    paths = [out / name for name in files]
    with atomic_files(paths) as handles:
        for f, data in zip(handles, files.values()):
            f.write(data)
    _remove_an_earlier_reports_files(out, set(files))
    return json.loads(json_text(report)), markdown, table


def _remove_an_earlier_reports_files(out: Path, kept: set[str]) -> None:
    """The files of a report written before into this (claimed) folder that the new one does not have (a languages'
    report's per_item.npz and figures under a tokenizer audit): removed once the new set is in place, so a folder
    holds one report. Only names a coverage report writes, in its folder and `bias/`."""
    for folder in (out, out / "bias"):
        if not folder.is_dir() or folder.is_symlink():
            continue
        for path in [*folder.glob("*.png"), folder / "per_item.npz", folder / "report.json", folder / "report.md"]:
            name = path.relative_to(out).as_posix()
            if name not in kept and path.is_file() and not path.is_symlink():
                path.unlink()


def _tokenizer_report(scores: dict, setup: dict, pool) -> tuple[dict, str, str]:
    audits = {name: s["tokenizer_audit"] for name, s in scores.items()}
    specs = setup["specs"]
    skipped = {
        name: f"{name} ({specs[name]}): no WordPiece tokenizer to audit; skipped"
        for name, audit in audits.items()
        if audit is None
    }
    report = {"split": setup["split"], "texts": setup["texts"], "audits": audits, "skipped": skipped}
    table = audit_table(audits, pool.langs)
    return report, f"# Tokenizer coverage: {setup['split']} split, {setup['texts']}\n\n```\n{table}\n```\n", table


def _languages_report(scores: dict, comparisons: dict, setup: dict, pool) -> tuple[dict, str, dict[str, bytes]]:
    """The languages' report (its per-item hits and figure among its files), the bias analyses after it if they ran."""
    keys = ("pairs_dir", "dev_pairs", "held_out", "other_domain", "questions_dir", "questions_scored", "test_dir")
    report = {
        "setup": {
            "encoders": setup["specs"],
            "langs": setup["langs"],
            **{k: setup[k] for k in keys},
            "qa_test_dir": setup["qa_test_dir"],
            "learned": list(setup["learned"]),
        },
        "figures": {name: s["languages"]["figures"] for name, s in scores.items()},
        "comparisons": comparisons["languages"],
    }
    markdown, files = languages_markdown(report), {"coverage.png": coverage_figure(report)}
    if "bias" in comparisons:
        bias, md, drawn = _bias_report(scores, comparisons["bias"], setup, pool)
        md = re.sub(r"\]\(\./([^)]+\.png)\)", r"](./bias/\1)", md)  # its figures, seen from OUTPUT
        md = re.sub(r"^(#+) ", r"#\1 ", md, flags=re.M)  # its sections under one heading
        report["bias"] = bias
        markdown = f"{markdown.rstrip()}\n\n## Language bias on the QA pool\n\n{md}"
        files.update({f"bias/{name}": png for name, png in drawn.items()})
    key = uuid.uuid4().hex  # the files are one set: a reader checks the npz's key against the report's
    report[SET_KEY] = key
    hits = {f"{name}|{k}": v for name, s in scores.items() for k, v in s["languages"]["hits"].items()}
    buffer = io.BytesIO()
    np.savez(buffer, **hits, **{SET_KEY: np.array(key)})
    return report, markdown, {"per_item.npz": buffer.getvalue(), **files}


def _bias_report(scores: dict, significance: dict, setup: dict, pool) -> tuple[dict, str, dict[str, bytes]]:
    """The bias analyses' report, its Markdown and its figures ({file name: PNG})."""
    reports = {name: {**s["bias"], "spec": setup["specs"][name]} for name, s in scores.items()}
    top_k, drawn = setup["top_k"], {}
    for name, r in reports.items():
        figures = _bias_figures(name, r, top_k)
        r["figures"] = {kind: file for kind, (file, _) in figures.items()}
        drawn.update(dict(figures.values()))
    md, more = bias_markdown(reports, pool, setup["split"], top_k)
    md += "\n" + significance_markdown(significance)
    if setup.get("new_lang"):
        md += "\n" + new_language_markdown(setup["new_lang"], reports)
    bias_setup = {k: v for k, v in setup.items() if k not in ("specs", "held_out", "questions_scored")}
    report = _jsonable(
        {
            "setup": bias_setup,
            "encoders": {
                n: {k: v for k, v in r.items() if k not in ("per_question", "pca")} for n, r in reports.items()
            },
            "significance": significance,
        }
    )
    return report, md + "\n", {**drawn, **more}


def _bias_figures(name: str, r: dict, top_k: int) -> dict[str, tuple[str, bytes]]:
    """{kind: (file name, PNG)} of one encoder's bias figures."""
    slug = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)
    heat, dist, langs = r["limit_to_one_target"], r["top_k_distribution"], r["langs"]
    figures = {
        "heatmap": (f"heatmap_{slug}.png", plots.heatmap(heat, langs, f"{name}: limit to one target, mAP (%)")),
        "top_k": (
            f"top{top_k}_{slug}.png",
            plots.language_distribution(dist, langs, f"{name}: languages of the top {top_k}"),
        ),
    }
    pca = r.get("pca")
    if pca is not None:
        title = f"{name}: PCA of {' and '.join(pca['langs'])}"
        figures["pca"] = (f"pca_{slug}.png", plots.pca_scatter(pca["points"], pca["point_langs"], pca["kinds"], title))
    return figures


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
