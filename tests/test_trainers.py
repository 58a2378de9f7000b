"""The recipes in trainers/ run end to end on tiny data."""

import importlib.util
import json
from pathlib import Path

import yaml

from tests.test_train_student import student_config
from tests.test_train_teacher import tiny_config

ROOT = Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "trainers" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_teacher_then_evaluate(synthetic_data, tmp_path):
    cfg = tiny_config(tmp_path, synthetic_data, **{"mining.online_epochs": 1})
    assert load("teacher_then_evaluate").main(["--config", str(cfg)]) == 0
    results = json.loads((tmp_path / "run" / "test.json").read_text())
    assert results["setup"]["encoder"].endswith("run/best") and results["setup"]["split"] == "test"


def test_sweep_runs_each_ablation_and_tabulates(synthetic_data, tmp_path):
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder

    teacher = export_encoder(NgramEncoder(dim=16, num_buckets=512, seed=1), tmp_path / "teacher")
    cfg = student_config(tmp_path, synthetic_data, teacher, **{"distill.epochs": 1})
    assert load("sweep_student").main(["--config", str(cfg), "--grid", "distill.objective=q,q+d+dq"]) == 0
    rows = json.loads((tmp_path / "run" / "sweep" / "sweep.json").read_text())
    assert [r["distill.objective"] for r in rows] == ["q", "q+d+dq"] and all(r["best"] is not None for r in rows)
    saved = yaml.safe_load((tmp_path / "run" / "sweep" / "objective=q" / "config.yaml").read_text())
    assert saved["distill"]["objective"] == "q"  # the settings live in the run's config, not only its name
    assert "| distill.objective | best | best_step |" in (tmp_path / "run" / "sweep" / "sweep.md").read_text()
