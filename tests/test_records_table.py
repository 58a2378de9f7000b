"""The README's and the results index's tables are what the committed records give, and a link whose text names a
file points at that file."""

from __future__ import annotations

import os
from pathlib import Path

from relkt.cli import tables
from relkt.jobs.record import MAX_RECORD_BYTES, all_records
from relkt.reports.records_table import mismatched_links

ROOT = Path(__file__).resolve().parents[1]


def test_the_tables_are_drawn_from_the_records(capsys):
    assert tables.main(["--root", str(ROOT), "--check"]) == 0, capsys.readouterr().err


def test_every_record_is_small_and_names_a_chapter_that_exists():
    for record in all_records(ROOT / "docs/results/records"):
        assert Path(record["path"]).stat().st_size <= MAX_RECORD_BYTES
        assert (ROOT / record["chapter"]).is_file(), f"{record['path']}: chapter {record['chapter']} is not there"


def test_a_link_whose_text_names_a_file_points_at_it():
    names = {p.stem for p in (ROOT / "docs").rglob("*.md")}
    pages = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "configs").rglob("*.md")]
    bad = {os.path.relpath(p, ROOT): mismatched_links(p.read_text(encoding="utf-8"), names) for p in pages}
    assert not {k: v for k, v in bad.items() if v}
