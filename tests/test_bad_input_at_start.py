"""Bad input found at a run's start, in one line, before anything trains: a test source that overlaps the training
source, an export whose relkt.json was cut short, a pair file changed since the run started; and relkt reproduce gives
every student of a setup the same seed, run folder and teacher overrides."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from relkt.cli import train_student, train_teacher
from relkt.encoders import build_encoder
from relkt.encoders.export import export_encoder
from relkt.encoders.ngram_encoder import NgramEncoder
from relkt.errors import EncoderError
from tests.helpers.data import write_corpus
from tests.helpers.runs import student_config, tiny_config

ROOT = Path(__file__).resolve().parents[1]


def test_a_test_source_that_overlaps_the_training_source_is_refused_before_training(synthetic_data, tmp_path, capsys):
    cfg = tiny_config(tmp_path, synthetic_data, **{"data.test_dir": str(synthetic_data)})
    assert train_teacher.main(["--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: test source") and "also occurs in the training source" in err
    assert len(err.splitlines()) == 1 and not (tmp_path / "run" / "checkpoint").exists()


def test_an_export_with_a_truncated_relkt_json_is_one_line(tmp_path, synthetic_data, capsys):
    export = export_encoder(NgramEncoder(dim=8, num_buckets=64), tmp_path / "teacher")
    meta = export / "relkt.json"
    meta.write_text(meta.read_text()[:20])
    with pytest.raises(EncoderError, match=r"relkt.json: not a readable relkt export .*export it again"):
        build_encoder(f"hub:{export}")
    cfg = student_config(tmp_path, synthetic_data, export)
    assert train_student.main(["--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert "relkt.json: not a readable relkt export" in err and "Traceback" not in err


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_pair_file_changed_since_the_run_started_is_refused(synthetic_data, tmp_path, capsys):
    teacher = export_encoder(NgramEncoder(dim=8, num_buckets=64), tmp_path / "teacher")
    write_corpus(tmp_path / "pairs", "de", 40)
    changes = {
        "data.corpus_dir": str(tmp_path / "pairs"),
        "data.corpus_pairs_per_lang": 20,
        "data.corpus_dev_pairs": 10,
        "distill.epochs": 1,
    }
    cfg = student_config(tmp_path, synthetic_data, teacher, **changes)
    assert train_student.main(["--config", str(cfg)]) == 0
    recorded = json.loads((tmp_path / "run" / "fingerprints.json").read_text())
    assert "pairs/pairs/de.tsv" in recorded
    assert train_student.main(["--config", str(cfg)]) == 0  # unchanged: the finished run is kept
    with open(tmp_path / "pairs" / "de.tsv", "a") as f:
        f.write("tatoeba\tone more\tnoch eins\n")
    capsys.readouterr()
    assert train_student.main(["--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "was trained on other inputs (pairs/pairs/de.tsv:" in err


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
@pytest.mark.parametrize("recorded", ["hashed", "none"])
def test_a_run_whose_pairs_were_held_out_by_hashed_lines_is_not_resumed(synthetic_data, tmp_path, capsys, recorded):
    # An older relkt held out hashed lines and recorded the pair file without a rule ("hashed"), or recorded no pair
    # file at all ("none"): resumed now, the same file would train other pairs, so the run is refused at start.
    teacher = export_encoder(NgramEncoder(dim=8, num_buckets=64), tmp_path / "teacher")
    write_corpus(tmp_path / "pairs", "de", 40)
    changes = {"data.corpus_dir": str(tmp_path / "pairs"), "data.corpus_dev_pairs": 10, "distill.epochs": 1}
    cfg = student_config(tmp_path, synthetic_data, teacher, **changes)
    assert train_student.main(["--config", str(cfg)]) == 0
    path = tmp_path / "run" / "fingerprints.json"
    prints = json.loads(path.read_text())
    assert prints["pairs/pairs/de.tsv"]["held_out"] == "each source's last rows"
    if recorded == "hashed":
        del prints["pairs/pairs/de.tsv"]["held_out"]
    else:
        prints = {k: v for k, v in prints.items() if not k.startswith("pairs/")}
    path.write_text(json.dumps(prints))
    capsys.readouterr()
    assert train_student.main(["--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip()
    assert "hashed lines" in err and "another output_dir" in err and len(err.splitlines()) == 1


def test_reproduce_gives_every_student_the_seed_run_folder_and_teacher():
    done = subprocess.run(
        [sys.executable, "-m", "relkt.cli", "reproduce", "xquad_minilm", "--seed", "7", "--dry-run"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    students = [line for line in done.stdout.splitlines() if "relkt.train_student" in line]
    assert len(students) >= 3  # the first student, the more_students, the grown ones
    for line in students:
        assert "--set seed=7" in line and "teacher.spec=hub:runs/xquad_minilm_seed7/teacher/best" in line, line
        assert "--set output_dir=runs/xquad_minilm_seed7/" in line, line
