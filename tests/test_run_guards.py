"""The trainers' guards (issue: nothing silent): a diverged run stops without exporting, resume checks its inputs,
a config that failed before training can be corrected, bad values fail when the config loads."""

import json
import shutil

import numpy as np

from relkt import train_teacher
from tests.test_train_teacher import tiny_config


def test_a_diverging_run_stops_with_an_error_and_never_exports_nan(synthetic_data, tmp_path, capsys):
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.learning_rate": 1e30, "eval.every_steps": 2,
                                                   "eval.at_start": True})
    assert train_teacher.main(["--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "error: step" in err and ("training loss is nan" in err or "holds NaN or inf" in err)
    out = tmp_path / "run"
    assert not (out / "summary.json").exists() and not (out / "last").exists()
    # best/ is the step-0 model (finite), never a NaN one.
    import tensorflow as tf

    saved = tf.saved_model.load(str(out / "best"))
    assert all(np.isfinite(v.numpy()).all() for v in saved.variables)


def test_resume_refuses_other_data_naming_the_file(synthetic_data, tmp_path, capsys):
    from tests.conftest import make_synthetic_lareqa

    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 3})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    recorded = json.loads((tmp_path / "run" / "fingerprints.json").read_text())
    assert set(recorded) == {"data/de.json", "data/en.json"} and recorded["data/en.json"]["bytes"] > 0
    # The same path now holds other data (another $RELKT_DATA_DIR would do the same).
    other = make_synthetic_lareqa(tmp_path / "other", seed=1)
    shutil.rmtree(synthetic_data)
    shutil.copytree(other, synthetic_data)
    assert train_teacher.main(["--config", str(cfg), "--set", "schedule.max_steps=6"]) == 2
    err = capsys.readouterr().err
    assert "was trained on other inputs (data/de.json:" in err and "data/en.json" in err


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
