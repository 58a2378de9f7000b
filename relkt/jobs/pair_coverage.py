"""Does an encoder serve language X, and did distillation fix it? The pair-file half of the coverage job
(relkt.jobs.coverage; `relkt coverage --pairs-dir ...`): what its report calls held out, and its per-item hits read
back. The figures are relkt.analysis.pair_scores'; the files relkt.reports.coverage_writer's.

Per language and encoder: how the tokenizer reads it (unknown pieces, pieces per word, the scripts it cannot read),
translation retrieval on the held-out pairs (whole sources with `held_out_sources`, as `data.corpus_held_out_sources`
keeps them out of a student's training; else each source's last rows, `data.corpus_dev_pairs` of them, as a student
holds them out: whole documents but the one cut at each source's edge; never hashed lines; the report says which),
both directions, and, where `questions_dir` has the language, XOR-TyDi question retrieval (each question not marked
`split = train` against the English translations of every such question in the file, and back). With two or more
encoders, each one's difference from the first with McNemar's p; with `test_dir`, the test source's figures of every
language (did the student forget?); with `qa_test_dir`, answer retrieval in each of its question languages, in the
language and against English (what a language is taught for).
Writes OUTPUT/report.md, OUTPUT/report.json, OUTPUT/per_item.npz (every item's hit, from which the tables are
recomputed) and OUTPUT/coverage.png.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from relkt.errors import DataError
from relkt.io import read_json, read_npz
from relkt.jobs.requests import CoverageRequest
from relkt.reports.coverage_writer import SET_KEY

__all__ = ["SET_KEY", "held_out_how", "read_per_item"]


def held_out_sources(args: CoverageRequest) -> list[str]:
    """The sources the request holds out whole."""
    return list(args.held_out_sources)


def held_out_how(args: CoverageRequest) -> str:
    """What the report calls held out: whole sources, or each source's last rows (whole documents but one a source)."""
    sources, other = held_out_sources(args), args.other_domain
    if other:
        apart = ", ".join(f"{lang} {source}" for lang, source in other.items())
        return (
            f"{args.dev_pairs} pairs a language, each source's last rows in its share (the same sources a student "
            f"trained on); and another domain, a whole source no pair of which trained: {apart}"
        )
    if sources:
        return f"every pair of {', '.join(sources)} (whole sources: no document shared with a pair trained on)"
    return (
        f"{args.dev_pairs} pairs a language, each source's last rows in its share (data.corpus_dev_pairs): whole "
        "documents, but for the one cut at each source's edge, and another domain only where --held-out-sources "
        "holds out a whole source"
    )


def read_per_item(folder: str | Path) -> dict[str, np.ndarray]:
    """A coverage report's per-item hits (`per_item.npz`), read only as the set it was written with: a DataError when
    its key is not its `report.json`'s (a write killed between the files' renames), naming both."""
    folder = Path(folder)
    path, report_path = folder / "per_item.npz", folder / "report.json"
    if not path.is_file():
        raise DataError(f"{path}: no per-item hits (a relkt coverage report folder has per_item.npz)")
    arrays = read_npz(path, "coverage report's per-item hits")
    theirs = str(arrays.pop(SET_KEY)) if SET_KEY in arrays else None
    try:
        ours = read_json(report_path, "coverage report").get(SET_KEY)
    except (DataError, AttributeError):
        ours = None
    if ours is None or theirs is None or ours != theirs:
        raise DataError(
            f"{path} and {report_path} are not one set (keys {str(theirs)[:8]} and {str(ours)[:8]}): the coverage run "
            "that wrote them was interrupted between its files, or one was replaced; run relkt coverage again"
        )
    return arrays
