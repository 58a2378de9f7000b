"""The door every export-writing job passes (relkt debias, relkt interpolate) and the output markers' kinds: what a
job did not write, the model it reads, a run's own export and another command's folder are refused in one line, and
nothing there changes; a killed export's leftover is cleaned by the next write."""

from __future__ import annotations

import json
import os

import pytest

from relkt.errors import WriteError
from relkt.io import OUTPUT_MARKER, RUN_MARKER, claim_dir
from relkt.jobs.interpolate import claim_export_dir


def export_like(folder, stage):
    folder.mkdir(parents=True)
    (folder / "saved_model.pb").write_bytes(b"pb")
    (folder / "relkt.json").write_text(json.dumps({"kind": "muse", "training": {"stage": stage}}))
    return folder


def unchanged(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def test_a_runs_own_export_is_refused(tmp_path):
    run = tmp_path / "run"
    best = export_like(run / "best", "teacher")
    (run / RUN_MARKER).write_text("{}")
    before = unchanged(run)
    with pytest.raises(WriteError, match="a run's own export"):
        claim_export_dir(best, "language_subspace_removed")
    assert unchanged(run) == before


def test_a_users_folder_with_a_relkt_json_is_refused(tmp_path):
    mine = export_like(tmp_path / "project", "language_subspace_removed")
    (mine / "src").mkdir()
    (mine / "src" / "main.py").write_text("print('mine')")
    with pytest.raises(WriteError, match="not a relkt export"):
        claim_export_dir(mine, "language_subspace_removed")


def test_an_export_of_another_stage_and_the_model_read_are_refused(tmp_path):
    student = export_like(tmp_path / "student", "interpolation")
    with pytest.raises(WriteError, match="another kind"):
        claim_export_dir(student, "language_subspace_removed")
    with pytest.raises(WriteError, match="a model this job reads"):
        claim_export_dir(student, "interpolation", reads=(f"muse:{student}",))
    with pytest.raises(WriteError, match="a model this job reads"):
        claim_export_dir(tmp_path, "interpolation", reads=(f"muse:{student}",))  # a folder above the model


def test_an_earlier_export_of_the_same_job_and_a_new_folder_are_fine(tmp_path):
    earlier = export_like(tmp_path / "debiased", "language_subspace_removed")
    assert claim_export_dir(earlier, "language_subspace_removed") == earlier
    assert claim_export_dir(tmp_path / "new", "language_subspace_removed") == tmp_path / "new"


def test_a_killed_exports_leftover_is_cleaned_by_the_next_write(tmp_path):
    dead = tmp_path / ".out.writing-999999999"  # no such process
    dead.mkdir()
    (dead / "saved_model.pb").write_bytes(b"x" * 1000)
    alive = tmp_path / f".out.writing-{os.getpid()}"  # a writer still running keeps its own
    alive.mkdir()
    claim_export_dir(tmp_path / "out", "interpolation")
    assert not dead.exists() and alive.exists()


def test_an_output_folder_of_another_kind_is_refused(tmp_path):
    teach = claim_dir(tmp_path / "teach", "teach")
    (teach / "report.md").write_text("teach's report")
    with pytest.raises(WriteError, match="for a teach output"):
        claim_dir(teach, "coverage")
    assert (teach / "report.md").read_text() == "teach's report"
    assert json.loads((teach / OUTPUT_MARKER).read_text())["kind"] == "teach"
    assert claim_dir(teach, "teach") == teach  # its own kind again: fine
