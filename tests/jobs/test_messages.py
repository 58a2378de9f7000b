"""Messages that say what is wrong: a setup's YAML where a run's is expected, a run with no export yet, a run still
training, a model folder that does not exist."""

from __future__ import annotations

import pytest

from relkt.encoders import build_encoder
from relkt.errors import ConfigError, EncoderError
from relkt.io import RUN_MARKER
from relkt.jobs.scoring import best_export
from relkt.training.run_lock import RunLock


def run_folder(tmp_path, best: bool = True):
    run = tmp_path / "run"
    run.mkdir()
    (run / RUN_MARKER).write_text("a relkt run folder\n")
    (run / "config.yaml").write_text("output_dir: runs/x\nencoder: {spec: muse}\n")
    if best:
        (run / "best").mkdir()
        (run / "best" / "relkt.json").write_text('{"kind": "muse", "training": {"step": 300}}')
    return run


def test_a_setup_yaml_is_named_as_one(tmp_path):
    setup = tmp_path / "configs" / "teacher.yaml"
    setup.parent.mkdir()
    setup.write_text("output_dir: runs/quick/teacher\nencoder: {spec: muse}\n")
    with pytest.raises(ConfigError, match=r"a setup's config, not a run's: give --config runs/quick/teacher/config"):
        best_export(setup)


def test_a_run_without_an_export_and_one_still_training_say_so(tmp_path):
    run = run_folder(tmp_path, best=False)
    with pytest.raises(ConfigError, match="this run has no export yet"):
        best_export(run / "config.yaml")
    (run / "best").mkdir()
    (run / "best" / "relkt.json").write_text('{"kind": "muse", "training": {"step": 300}}')
    lock = RunLock(run)
    try:
        with pytest.raises(ConfigError, match=r"still training; its best/ is the best so far \(step 300\)"):
            best_export(run / "config.yaml")
    finally:
        lock.release()
    assert best_export(run / "config.yaml") == f"muse:{run / 'best'}"


def test_a_model_folder_that_does_not_exist_is_named_so_even_with_options(tmp_path):
    with pytest.raises(EncoderError, match=r"muse:\S+nowhere: no such folder"):
        build_encoder(f"muse:{tmp_path / 'nowhere'}", trainable=False, max_length=8192)
