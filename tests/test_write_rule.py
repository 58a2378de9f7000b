"""The one rule every place relkt writes follows: a folder relkt made, a new or empty one, or a file that does not
exist or that relkt wrote; never through a link, never inside a live run folder; a set of files read only as a set;
an interrupted write's leftovers cleaned by the next. Each case is the job's own guard, on tiny data."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from relkt.errors import DataError, WriteError
from relkt.io import OUTPUT_MARKER, claim_dir, claim_file, live_run_holding
from relkt.jobs.interpolate import claim_export_dir
from relkt.jobs.pair_coverage import SET_KEY, read_per_item
from relkt.jobs.scoring import is_result_file, per_question_path, write_result_pair
from relkt.training.run_lock import RunLock


def user_folder(path):
    """A folder of the user's own work."""
    (path / "src").mkdir(parents=True)
    (path / "src" / "main.py").write_text("print('mine')\n")
    (path / "README.md").write_text("# my project\n")
    return path


def snapshot(path):
    return {str(p.relative_to(path)): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()}


def test_a_foreign_folder_is_refused_and_left_as_it_was(tmp_path):
    folder = user_folder(tmp_path / "mine")
    before = snapshot(folder)
    with pytest.raises(WriteError, match=r"mine: holds files relkt did not write \(README\.md, src\)"):
        claim_dir(folder, "coverage")
    with pytest.raises(WriteError, match="not a relkt export"):
        claim_export_dir(folder, "interpolation")  # relkt interpolate --output: used to replace the folder whole
    assert snapshot(folder) == before


def test_a_new_or_empty_folder_is_marked_and_then_relkt_may_write_in_it_again(tmp_path):
    (tmp_path / "empty").mkdir()
    for folder in (tmp_path / "new" / "deep", tmp_path / "empty"):
        claim_dir(folder, "coverage")
        assert json.loads((folder / OUTPUT_MARKER).read_text())["kind"] == "coverage"
        (folder / "report.md").write_text("relkt's report")
        assert claim_dir(folder, "coverage") == folder  # its own folder: fine


def test_a_foreign_file_is_never_overwritten_but_relkt_results_are(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    config = run / "config.yaml"
    config.write_text("seed: 0\n")  # relkt evaluate --output RUN/config.yaml used to replace it
    with pytest.raises(WriteError, match=r"config\.yaml: exists and relkt did not write it"):
        write_result_pair({"metrics": {}}, {"ap": np.zeros(2)}, config)
    assert config.read_text() == "seed: 0\n" and not per_question_path(config).exists()
    out = run / "test.json"
    write_result_pair({"metrics": {"a": 1}}, {"ap": np.zeros(2)}, out)
    write_result_pair({"metrics": {"a": 2}}, {"ap": np.ones(2)}, out)  # its own result: replaced
    assert is_result_file(out) and json.loads(out.read_text())["metrics"] == {"a": 2}


def test_a_link_at_depth_two_below_the_named_folder_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "report.md").write_text("someone else's")
    out = tmp_path / "out"
    claim_dir(out, "teach")
    (out / "coverage").mkdir()
    os.symlink(elsewhere, out / "coverage" / "bias")
    with pytest.raises(WriteError, match="a symbolic link"):
        claim_dir(out / "coverage" / "bias", "coverage", below=out)
    with pytest.raises(WriteError, match="a symbolic link"):
        claim_file(out / "coverage" / "bias" / "x.json", lambda p: True, below=out)
    assert (elsewhere / "report.md").read_text() == "someone else's"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["report.md"]


def test_a_live_run_folder_is_refused_and_a_finished_one_is_not(tmp_path):
    run = tmp_path / "run"
    lock = RunLock(run)
    try:
        assert live_run_holding(run / "best") == run
        with pytest.raises(WriteError, match="a run folder a trainer is writing now"):
            claim_file(run / "test.json", is_result_file)
        with pytest.raises(WriteError, match="a run folder a trainer is writing now"):
            claim_dir(run / "scores", "coverage")
    finally:
        lock.release()
    assert live_run_holding(run) is None
    claim_file(run / "test.json", is_result_file)


def test_a_killed_set_of_writes_is_refused_when_read_and_its_leftovers_cleaned(tmp_path):
    out = claim_dir(tmp_path / "coverage", "coverage")
    (out / "report.json").write_text(json.dumps({SET_KEY: "a" * 32}))
    np.savez(out / "per_item.npz", **{"student|bitext/bn": np.ones(3), SET_KEY: np.array("b" * 32)})
    with pytest.raises(DataError, match="are not one set"):
        read_per_item(out)
    np.savez(out / "per_item.npz", **{"student|bitext/bn": np.ones(3), SET_KEY: np.array("a" * 32)})
    assert list(read_per_item(out)) == ["student|bitext/bn"]
    leftover = out / ".report.json.k2j4_x.tmp"  # what a kill inside atomic_files leaves
    leftover.write_text("half")
    claim_dir(out, "coverage")
    assert not leftover.exists() and (out / "report.json").exists()


def test_each_command_refuses_the_places_it_once_wrote_over(tiny_data, tmp_path, capsys):
    """The four losses and the write outside, through the commands themselves: one `error:` line, nothing changed."""
    from relkt.cli import coverage, evaluate, interpolate, teach
    from tests.helpers.data import write_corpus

    run = tmp_path / "run"
    run.mkdir()
    (run / "config.yaml").write_text("seed: 0\n")
    mine = user_folder(tmp_path / "mine")
    report = tmp_path / "reports"
    report.mkdir()
    (report / "report.md").write_text("my own notes\n")
    elsewhere = user_folder(tmp_path / "elsewhere")
    out = claim_dir(tmp_path / "teach", "teach")  # relkt's own output folder, from an earlier teach
    os.symlink(elsewhere, out / "coverage")  # and a link where teach writes its coverage report
    pairs = tmp_path / "pairs"
    write_corpus(pairs, "de", 40)
    before = {p: snapshot(p) for p in (run, mine, report, elsewhere)}
    commands = [
        (
            evaluate,
            ["--encoder", "ngram", "--data-dir", str(tiny_data), "--output", str(run / "config.yaml")],
            "exists",
        ),
        (
            interpolate,
            ["--teacher", "muse", "--student", "muse", "--data-dir", str(tiny_data), "--output", str(mine)],
            "not a relkt export",
        ),
        (coverage, ["--encoder", "a=ngram", "--data-dir", str(tiny_data), "--output", str(report)], "did not write"),
        (
            teach,
            [
                "--langs",
                "de",
                "--pairs-dir",
                str(pairs),
                "--qa-dir",
                str(tiny_data),
                "--set",
                "data.corpus_dev_pairs=10",
                "--output",
                str(out),
            ],
            "link",
        ),
    ]
    for command, argv, why in commands:
        assert command.main(argv) in (1, 2), command.__name__  # a refused write: 1, as any write that cannot be
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and why in err[0], (command.__name__, err)
    assert {p: snapshot(p) for p in before} == before


def test_compare_never_replaces_a_file_it_did_not_write_but_its_own_comparison_it_does(tiny_data, tmp_path, capsys):
    from relkt.cli import evaluate
    from tests.helpers.runs import trainer_script

    results = tmp_path / "a.json"
    assert evaluate.main(["--encoder", "ngram", "--data-dir", str(tiny_data), "--output", str(results)]) == 0
    notes = tmp_path / "notes.md"
    notes.write_text("my own notes\n")
    compare = trainer_script("compare")
    capsys.readouterr()
    assert compare.main([str(results), str(results), "--output", str(notes)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "relkt did not write it as a comparison" in err[0]
    assert notes.read_text() == "my own notes\n"
    ours = tmp_path / "comparison.md"
    assert compare.main([str(results), str(results), "--output", str(ours)]) == 0
    assert compare.main([str(results), str(results), "--output", str(ours)]) == 0  # its own file, replaced
