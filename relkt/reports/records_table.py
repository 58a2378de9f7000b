"""The committed records as the README's and the results index's table: one row a scored model and pool, every
number read from a record (relkt.jobs.record), so the landing page cannot drift from what was measured.

    relkt tables            # rewrite the tables between the markers of README.md and docs/results/README.md
    relkt tables --check    # exit 1 naming each file whose table differs from the records
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

BEGIN = "<!-- records table: drawn by `relkt tables` from docs/results/records; do not edit by hand -->"
END = "<!-- end of records table -->"

POOL_NAMES = {
    "xquad-r": "XQuAD-R whole",
    "xquad-r-eight": "XQuAD-R's eight (LAReQA Table 5)",
    "mlqa-r": "MLQA-R whole",
    "test": "held-out XQuAD-R articles",
}
ADJUSTED = " (language-aware ranking)"


def _cell(block: Mapping | None) -> str:
    if not block:
        return "-"
    return f"{100 * block['value']:.2f} [{100 * block['low']:.2f}, {100 * block['high']:.2f}]"


def pool_name(pool: str) -> str:
    """A record's pool as the table names it (`xquad-r-adjusted` -> XQuAD-R whole (language-aware ranking))."""
    base, adjusted = (pool[: -len("-adjusted")], True) if pool.endswith("-adjusted") else (pool, False)
    return POOL_NAMES.get(base, base) + (ADJUSTED if adjusted else "")


def records_table(records: Sequence[Mapping], link_from: str | Path = ".") -> str:
    """The Markdown table of `records` (each as `relkt.jobs.record.all_records` gives it, with its `path`): a row a
    record, raw and language-aware ranking always rows of their own, each pool's raw rows first: LAReQA mAP and the
    mean XX->EN P@1 of the non-English languages with their 95% CIs, linked to the chapter (links relative to
    `link_from`)."""
    lines = [
        "| setup | model | pool | ranking | mAP [95% CI] | XX->EN P@1, non-English mean | chapter |",
        "|---|---|---|---|---|---|---|",
    ]
    order = {"zero_shot": 0, "teacher": 1, "student": 2}
    ranked = sorted(
        records,
        key=lambda r: (
            r["setup"],
            r["pool"].removesuffix("-adjusted"),
            _adjusted(r),
            order.get(r["model"], 3),
            r["model"],
        ),
    )
    for r in ranked:
        metrics = r["metrics"]
        xx = metrics.get("xx_en_article/P@1") or metrics.get("xx_en/P@1")
        ranking = "language-aware" if _adjusted(r) else "raw"
        lines.append(
            f"| `{r['setup']}` | {r['model']} | {pool_name(r['pool'].removesuffix('-adjusted'))} | {ranking} | "
            f"{_cell(metrics.get('lareqa/mAP'))} | {_cell(xx)} | "
            f"[{Path(r['chapter']).stem}]({_relative(r['chapter'], link_from)}) |"
        )
    return "\n".join(lines)


def _adjusted(record: Mapping) -> bool:
    return record["pool"].endswith("-adjusted")


def _relative(path: str, start: str | Path) -> str:
    import os  # deferred: only the relative link needs it

    return Path(os.path.relpath(path, start)).as_posix()


def with_table(text: str, table: str, where: str) -> str:
    """`text` with the part between BEGIN and END replaced by `table`; a ValueError naming `where` when the markers
    are not there once each (relkt only writes between its own markers)."""
    if text.count(BEGIN) != 1 or text.count(END) != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError(f"{where}: no records table markers (one `{BEGIN}` line before one `{END}` line)")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table}\n{END}{tail}"


LINK = re.compile(r"\[([A-Za-z0-9_\-]+)\]\(([^)#\s]+)(#[^)\s]*)?\)")


def mismatched_links(text: str, names: set[str] = frozenset()) -> list[str]:
    """Links whose text names a file (a snake_case name like `[in_batch_teacher](...)`, or one of `names`) but whose
    target is a file named otherwise. Prose ("[results](x.md)") is not a name."""
    bad = []
    for name, target, _ in LINK.findall(text):
        if "://" in target or not ("_" in name or name in names):
            continue
        stem = Path(target).stem
        if stem != name and Path(target).name != name:
            bad.append(f"[{name}]({target})")
    return bad
