"""Tiny trainer configs, finished runs, and killing a run mid-epoch: what the trainer and recipe tests share."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def set_nested(config: dict, changes: dict) -> dict:
    """Apply {"a.b": value} changes to a nested config dict (creating sections as needed)."""
    for key, value in changes.items():
        node = config
        *parents, last = key.split(".")
        for p in parents:
            node = node.setdefault(p, {})
        node[last] = value
    return config


def kill_mid_epoch(proc, state_path: Path, epoch: int = 1, step_in_epoch: int = 3, timeout: float = 120) -> dict | None:
    """SIGKILL the training process `proc` once its checkpoint's state.json reaches `step_in_epoch` of `epoch`;
    returns the state it was killed at (None if the run ended first), after the process is gone."""
    import signal
    import time

    deadline = time.time() + timeout
    killed = None
    while time.time() < deadline and proc.poll() is None:
        try:
            s = json.loads(state_path.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            s = None
        if s and s["epoch"] == epoch and s["step_in_epoch"] >= step_in_epoch:
            proc.send_signal(signal.SIGKILL)
            killed = s
            break
        time.sleep(0.01)
    proc.wait()
    return killed


def tiny_config(tmp_path, data_dir, **changes):
    config = {
        "output_dir": str(tmp_path / "run"),
        "seed": 0,
        "verbose": 0,
        "data": {"data_dir": str(data_dir), "train_langs": ["en"], "answer_langs": ["en"]},
        "encoder": {"spec": "ngram", "options": {"dim": 16, "num_buckets": 512}},
        "mining": {"bm25_epochs": 1, "online_epochs": 2, "bm25_top_end": 10, "hard": 1, "semi_hard": 1},
        "triplet": {"margin": 0.3, "batch_size": 4},
        "eval": {"every_steps": 5, "primary_metric": "lareqa/mAP"},
        "schedule": {"learning_rate": 0.01, "lr_patience": 2, "early_stop_patience": 0},
    }
    set_nested(config, changes)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def student_config(tmp_path, data_dir, teacher, **changes):
    config = {
        "output_dir": str(tmp_path / "run"),
        "seed": 0,
        "verbose": 0,
        "teacher": {"spec": f"hub:{teacher}"},
        "data": {"data_dir": str(data_dir), "student_langs": ["de"]},
        "distill": {
            "gamma": 10.0,
            "beta": 1.0,
            "lam": 1.0,
            "omega": 0.1,
            "batch_size": 4,
            "epochs": 3,
            "document": "parallel",
        },
        "eval": {"every_steps": 5, "primary_metric": "xx_en/de/P@1"},
        "schedule": {"learning_rate": 0.01, "early_stop_patience": 0},
    }
    set_nested(config, changes)
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "student.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def finished_student(tmp_path, data_dir, **changes):
    """A tiny student run trained to its end on an ngram teacher exported to tmp_path/teacher: (config, teacher)."""
    from relkt.cli import train_student
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder

    teacher = tmp_path / "teacher"
    export_encoder(NgramEncoder(dim=8, num_buckets=64), teacher)
    cfg = student_config(tmp_path, data_dir, teacher, **changes)
    assert train_student.main(["--config", str(cfg)]) == 0
    return cfg, teacher


def trainer_script(name: str):
    """trainers/NAME.py as a module (trainers/ is a folder of scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(f"trainers_{name}", ROOT / "trainers" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the script runs
    spec.loader.exec_module(module)
    return module
