"""The run folder under a multi-worker run: only the chief writes into it (the other workers check, then write their
own scratch folders), so the chief's clean-up of interrupted writes never takes a file another worker is writing."""

import json
from pathlib import Path

import pytest
import yaml

from relkt.config import StudentConfig, TeacherConfig, load_config
from relkt.config.config_io import with_overrides
from relkt.errors import ConfigError
from relkt.training.run_folder import prepare_output_dir, run_trainer
from tests.helpers.runs import tiny_config


class RecordsTrainer:
    """Stands in for a stage: what `run_trainer` hands it, and the folder as the stage finds it."""

    seen: list = []

    def __init__(self, config):
        self.config = config

    def fingerprints(self) -> dict:
        return {}

    def run(self) -> dict:
        RecordsTrainer.seen.append(sorted(p.name for p in Path(self.config.output_dir).glob("*")))
        return {"ran": True}


def worker_config(tmp_path, synthetic_data, monkeypatch, index: int, **overrides):
    cfg = tiny_config(tmp_path, synthetic_data, **{"distribute.strategy": "multi_worker", **overrides})
    cluster = {"worker": ["127.0.0.1:1", "127.0.0.1:2"]}
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": index}}))
    return load_config(TeacherConfig, cfg)


def test_only_the_chief_writes_the_run_folder_and_the_other_workers_check_its_config(
    synthetic_data, tmp_path, monkeypatch
):
    RecordsTrainer.seen = []
    other = worker_config(tmp_path, synthetic_data, monkeypatch, index=1)
    out = tmp_path / "run"
    # Worker 1 first (the race CI hit): it writes nothing where the chief cleans, no config, log or lock.
    assert run_trainer(RecordsTrainer, other) == {"ran": True}
    assert RecordsTrainer.seen == [[]] and not out.exists()
    chief = worker_config(tmp_path, synthetic_data, monkeypatch, index=0)
    assert run_trainer(RecordsTrainer, chief) == {"ran": True}
    assert {"config.yaml", "train.log"} <= set(RecordsTrainer.seen[-1])
    # Once the run has trained, a worker whose config differs is refused as the chief would be, and writes nothing.
    (out / "checkpoint").mkdir()
    before = (out / "config.yaml").read_text()
    changed = worker_config(tmp_path, synthetic_data, monkeypatch, index=1, **{"schedule.learning_rate": 0.5})
    with pytest.raises(ConfigError, match="other settings"):
        run_trainer(RecordsTrainer, changed)
    assert (out / "config.yaml").read_text() == before
    assert yaml.safe_load(before)["distribute"]["strategy"] == "multi_worker"


def test_a_run_resumes_with_other_length_chunks_but_not_another_batch_size(tmp_path):
    """distill.length_chunks changes how a batch is cut into passes, not what trains: a trained run resumes with
    another value (and records it); distill.batch_size changes the batches: refused."""
    config = load_config(StudentConfig, None, [f"output_dir={tmp_path / 'run'}"])
    prepare_output_dir(config)
    (tmp_path / "run" / "checkpoint").mkdir()
    prepare_output_dir(with_overrides(config, ["distill.length_chunks=4"]))
    assert yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())["distill"]["length_chunks"] == 4
    with pytest.raises(ConfigError, match=r"other settings \(distill.batch_size\)"):
        prepare_output_dir(with_overrides(config, ["distill.batch_size=8"]))


def test_a_finished_teacher_run_is_known_finished_before_anything_is_built(synthetic_data, tmp_path, monkeypatch):
    """A rerun of a finished run (a recipe resumed after its last step) answers from the run's files: no data, model
    or BM25 set-up; its inputs are still checked, and a run asked to train on goes the full way."""
    from relkt.stages.teacher_trainer import TeacherTrainer
    from relkt.training.run_folder import data_fingerprints, save_config

    config = load_config(TeacherConfig, tiny_config(tmp_path, synthetic_data))  # 1 BM25 + 2 online epochs
    out = Path(config.output_dir)
    (out / "checkpoint").mkdir(parents=True)
    (out / ".relkt-run").write_text("a relkt run folder\n")
    save_config(config, out / "config.yaml")
    (out / "fingerprints.json").write_text(json.dumps(data_fingerprints(config)))
    (out / "summary.json").write_text(json.dumps({"epochs_completed": 3, "steps": 63}))
    state = out / "checkpoint" / "state.json"
    state.write_text(json.dumps({"epoch": 3, "finished": True, "stopped_early": False}))

    class Built(Exception):
        pass

    def build(self, *args, **kwargs):
        raise Built

    monkeypatch.setattr(TeacherTrainer, "__init__", build)
    assert TeacherTrainer.train(config) == {"epochs_completed": 3, "steps": 63, "already_finished": True}
    state.write_text(json.dumps({"epoch": 2, "finished": True, "stopped_early": False}))  # more epochs asked for
    with pytest.raises(Built):
        TeacherTrainer.train(config)
    state.write_text(json.dumps({"epoch": 3, "finished": True, "stopped_early": False}))
    en = Path(config.data.data_dir) / "en.json"
    en.write_text(en.read_text().replace("}", " }", 1))  # the training source changed since the run
    with pytest.raises(ConfigError, match="trained on other inputs .data/en.json"):
        TeacherTrainer.train(config)
