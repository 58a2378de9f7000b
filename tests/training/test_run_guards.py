"""The trainers' guards (issue: nothing silent): a diverged run stops without exporting, resume checks its inputs,
a config that failed before training can be corrected, bad values fail when the config loads."""

import json
import shutil

import numpy as np
import pytest
import yaml

from relkt.cli import train_teacher
from relkt.errors import ConfigError
from tests.helpers.runs import finished_student, tiny_config


def test_a_diverging_run_stops_with_an_error_and_never_exports_nan(synthetic_data, tmp_path, capsys):
    cfg = tiny_config(
        tmp_path, synthetic_data, **{"schedule.learning_rate": 1e30, "eval.every_steps": 2, "eval.at_start": True}
    )
    assert train_teacher.main(["--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "error: step" in err and ("training loss is nan" in err or "holds NaN or inf" in err)
    out = tmp_path / "run"
    assert not (out / "summary.json").exists() and not (out / "last").exists()
    # best/ is the step-0 model (finite), never a NaN one.
    import tensorflow as tf

    saved = tf.saved_model.load(str(out / "best"))
    assert all(np.isfinite(v.numpy()).all() for v in saved.variables)


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_resume_refuses_other_data_naming_the_file(synthetic_data, tmp_path, capsys):
    from tests.helpers.data import make_synthetic_lareqa

    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 3})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    recorded = json.loads((tmp_path / "run" / "fingerprints.json").read_text())
    assert set(recorded) == {"data/de.json", "data/en.json"} and recorded["data/en.json"]["bytes"] > 0
    # The same path now holds other data (another $RELKT_DATA_DIR would do the same).
    other = make_synthetic_lareqa(tmp_path / "other", seed=1)
    shutil.rmtree(synthetic_data)
    shutil.copytree(other, synthetic_data)
    assert train_teacher.main(["--config", str(cfg)]) == 2  # checked before anything runs, finished or not
    err = capsys.readouterr().err
    assert "was trained on other inputs (data/de.json:" in err and "data/en.json" in err


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_resume_refuses_a_changed_more_qa_file(synthetic_data, tmp_path, capsys):
    from tests.helpers.data import other_articles

    more = other_articles(tmp_path)
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 3, "data.more_qa": [str(more)]})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    recorded = json.loads((tmp_path / "run" / "fingerprints.json").read_text())
    assert set(recorded) == {"data/de.json", "data/en.json", "more_qa/0/en.json"}
    doc = json.loads((more / "en.json").read_text())
    doc["data"].pop()  # one article fewer: other training questions
    (more / "en.json").write_text(json.dumps(doc))
    assert train_teacher.main(["--config", str(cfg)]) == 2
    assert "was trained on other inputs (more_qa/0/en.json:" in capsys.readouterr().err


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_bad_values_fail_at_load_and_a_config_that_trained_nothing_can_be_corrected(synthetic_data, tmp_path, capsys):
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 2})
    assert train_teacher.main(["--config", str(cfg), "--set", "eval.primary_metric=lareqa/nDCG"]) == 2
    assert "eval.primary_metric 'lareqa/nDCG' is not a metric" in capsys.readouterr().err
    # A run that failed before its first checkpoint (here: a missing data folder) poisons nothing.
    assert train_teacher.main(["--config", str(cfg), "--set", f"data.data_dir={tmp_path / 'nowhere'}"]) == 2
    assert train_teacher.main(["--config", str(cfg)]) == 0


def test_an_output_dir_that_is_a_file_is_one_line(synthetic_data, tmp_path, capsys):
    (tmp_path / "run").write_text("not a folder")
    cfg = tiny_config(tmp_path, synthetic_data)
    assert train_teacher.main(["--config", str(cfg)]) == 2
    assert "is a file, not a folder" in capsys.readouterr().err


def test_student_values_are_checked_when_the_config_loads(tmp_path):
    import pytest

    from relkt.config import StudentConfig, load_config
    from relkt.errors import ConfigError

    for change, message in (
        ("distill.gamma=-1", "distill.gamma must be a finite number >= 0, got -1"),
        ("distill.epochs=0", "distill.epochs must be >= 1, got 0"),
        ("distill.temperature=0", "distill.temperature must be > 0"),
    ):
        with pytest.raises(ConfigError, match=message):
            load_config(StudentConfig, None, [change])


def test_a_student_language_without_data_is_named(synthetic_data, tmp_path, capsys):
    from relkt.cli import train_student
    from tests.helpers.runs import student_config

    teacher = tmp_path / "teacher"
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder

    export_encoder(NgramEncoder(dim=8, num_buckets=64), teacher)
    cfg = student_config(tmp_path, synthetic_data, teacher, **{"data.student_langs": ["de", "xx"]})
    assert train_student.main(["--config", str(cfg)]) == 2
    assert (
        "no data for xx: no QA data in the training source (it holds de, en) and no data.corpus_dir"
        in capsys.readouterr().err
    )


def test_smoke_shrinks_but_an_explicit_set_wins(synthetic_data, tmp_path):
    from relkt.config import TeacherConfig, load_config
    from relkt.config.config_io import with_overrides

    config = with_overrides(load_config(TeacherConfig, None, ["smoke=true"]).apply_smoke(), ["triplet.batch_size=12"])
    assert config.smoke and config.triplet.batch_size == 12 and config.eval.every_steps <= 5


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_student_resumes_with_its_teacher_at_another_path_but_not_with_another_teacher(
    synthetic_data, tmp_path, capsys
):
    from relkt.cli import train_student
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder

    cfg, teacher = finished_student(tmp_path, synthetic_data, **{"schedule.max_steps": 3})
    moved = tmp_path / "moved_teacher"
    shutil.copytree(teacher, moved)
    # The same weights at another path: the run is the same run (finished, so nothing trains).
    assert train_student.main(["--config", str(cfg), "--set", f"teacher.spec=hub:{moved}"]) == 0
    # Other weights at that path: refused, naming the teacher.
    shutil.rmtree(moved)
    export_encoder(NgramEncoder(dim=8, num_buckets=64, seed=7), moved)
    assert train_student.main(["--config", str(cfg), "--set", f"teacher.spec=hub:{moved}"]) == 2
    assert "was trained on other inputs (teacher: weights" in capsys.readouterr().err
    # Another kind of encoder is another setting, whatever its weights.
    assert train_student.main(["--config", str(cfg), "--set", f"teacher.spec=bert:{teacher}"]) == 2
    assert "holds a run with other settings (teacher.spec)" in capsys.readouterr().err


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_run_copied_with_hard_links_trains_on_without_writing_into_the_original(synthetic_data, tmp_path):
    """`cp -al done copy` then more epochs in `copy` (the 4-epoch students were grown this way): every file the
    original holds keeps its bytes."""
    import os

    from relkt.cli import train_student

    cfg, _ = finished_student(tmp_path, synthetic_data, **{"distill.epochs": 1})
    done, copy = tmp_path / "run", tmp_path / "copy"
    shutil.copytree(done, copy, copy_function=os.link)
    before = {p: p.read_bytes() for p in done.rglob("*") if p.is_file()}
    assert (copy / "train.log").stat().st_ino == (done / "train.log").stat().st_ino
    assert train_student.main(["--config", str(cfg), "--set", f"output_dir={copy}", "--set", "distill.epochs=2"]) == 0
    assert json.loads((copy / "summary.json").read_text())["epochs_completed"] == 2
    assert {p: p.read_bytes() for p in done.rglob("*") if p.is_file()} == before
    assert (
        "training on to 2" in (copy / "train.log").read_text()
        and "training on to 2" not in (done / "train.log").read_text()
    )


def test_a_run_from_before_sparse_rows_resumes_only_with_the_adam_it_trained_with(synthetic_data, tmp_path):
    """A saved run config without `schedule.sparse_rows` trained its token table with Keras's dense Adam (or, with
    language rows, lazily): resuming it with lazy Adam would change its optimizer mid-run, so that is refused, naming
    the key; the default (dense) resumes it."""
    from relkt.config import TeacherConfig, load_config
    from relkt.training.run_folder import prepare_output_dir

    cfg = tiny_config(tmp_path, synthetic_data)
    config = load_config(TeacherConfig, cfg)
    assert config.schedule.sparse_rows == "dense"
    out = prepare_output_dir(config)
    saved = yaml.safe_load((out / "config.yaml").read_text())
    del saved["schedule"]["sparse_rows"]  # as relkt wrote it before the setting existed
    (out / "config.yaml").write_text(yaml.safe_dump(saved))
    (out / "checkpoint").mkdir()  # it has trained
    with pytest.raises(ConfigError, match="schedule.sparse_rows"):
        prepare_output_dir(load_config(TeacherConfig, cfg, ["schedule.sparse_rows=lazy"]))
    prepare_output_dir(config)
