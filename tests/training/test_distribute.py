"""Both stages on tf.distribute: MirroredStrategy over 2 logical CPUs matches the default strategy step for
step, and MultiWorkerMirroredStrategy runs with two local workers on loopback ports.

Marked slow: each test starts fresh TensorFlow processes (a process can hold one strategy setup)."""

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from relkt.encoders.export import export_encoder
from relkt.encoders.ngram_encoder import NgramEncoder
from tests.helpers.runs import student_config, tiny_config
from tests.helpers.tiny_muse import make_tiny_muse

ROOT = Path(__file__).resolve().parents[2]
MIRRORED = {"distribute.strategy": "mirrored", "distribute.devices": ["/cpu:0", "/cpu:1"]}
ENV = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "PYTHONPATH": str(ROOT)}


def one_step_teacher(tmp, data, **extra):
    # 4 questions x 2 BM25 negatives = 8 triplets = one step of the global batch 8.
    return tiny_config(
        tmp,
        data,
        **{
            "data.max_train_questions": 4,
            "mining.bm25_epochs": 1,
            "mining.online_epochs": 0,
            "triplet.batch_size": 8,
            "eval.every_steps": 1,
            **extra,
        },
    )


def weights(run_dir):
    with np.load(run_dir / "checkpoint" / "arrays.npz") as z:
        return {k: z[k] for k in z.files if k.startswith("w")}


def assert_same_weights(a, b, atol=5e-5):
    """Adam's first step is lr * g / (|g| + eps): where |g| is near eps, summing replica gradients in
    another order moves an element by ~1e-5 (lr = 0.01), so the tolerance is 0.5% of one step."""
    wa, wb = weights(a), weights(b)
    assert wa.keys() == wb.keys()
    for k in wa:
        np.testing.assert_allclose(wa[k], wb[k], atol=atol, err_msg=k)


def run_two_cpus(*stage_configs):
    cmd = [sys.executable, str(ROOT / "tests" / "training" / "two_cpus.py"), *map(str, stage_configs)]
    proc = subprocess.run(cmd, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc.stdout + proc.stderr


@pytest.mark.slow
def test_mirrored_one_step_equals_default_for_both_stages(synthetic_data, tmp_path):
    muse = make_tiny_muse(tmp_path / "muse")
    teacher_dir = export_encoder(NgramEncoder(dim=16, num_buckets=512, seed=1), tmp_path / "teacher_export")
    student_one_step = {
        "data.max_train_questions": 4,
        "distill.batch_size": 4,
        "distill.epochs": 1,
        "eval.every_steps": 1,
    }
    runs = {
        "t_default": ("teacher", one_step_teacher(tmp_path / "t_default", synthetic_data)),
        "t_mirrored": ("teacher", one_step_teacher(tmp_path / "t_mirrored", synthetic_data, **MIRRORED)),
        # A hub: encoder feeds raw strings: under the strategy it trains through the strategy.run loop.
        "h_default": (
            "teacher",
            one_step_teacher(tmp_path / "h_default", synthetic_data, **{"encoder": {"spec": f"hub:{muse}"}}),
        ),
        "h_mirrored": (
            "teacher",
            one_step_teacher(
                tmp_path / "h_mirrored", synthetic_data, **{"encoder": {"spec": f"hub:{muse}"}, **MIRRORED}
            ),
        ),
        "s_default": (
            "student",
            student_config(tmp_path / "s_default", synthetic_data, teacher_dir, **student_one_step),
        ),
        "s_mirrored": (
            "student",
            student_config(tmp_path / "s_mirrored", synthetic_data, teacher_dir, **student_one_step, **MIRRORED),
        ),
    }
    # One process per run: two MirroredStrategy objects in one process share collective instance keys.
    out = "".join(run_two_cpus(*stage_cfg) for stage_cfg in runs.values())
    for name in runs:
        summary = json.loads((tmp_path / name / "run" / "summary.json").read_text())
        assert summary["steps"] == 1, (name, summary["steps"])
    for a, b in (("t_default", "t_mirrored"), ("h_default", "h_mirrored"), ("s_default", "s_mirrored")):
        first = json.loads((tmp_path / a / "run" / "metrics.jsonl").read_text().splitlines()[0])
        assert first["train/loss"] > 0  # the step had a gradient, so equal weights are not trivially equal
        assert_same_weights(tmp_path / a / "run", tmp_path / b / "run")
    assert "MirroredStrategy" in out or "mirrored" in out.lower()


@pytest.mark.slow
def test_mirrored_full_run_with_online_mining_and_bfloat16(synthetic_data, tmp_path):
    cfg = tiny_config(
        tmp_path / "t",
        synthetic_data,
        **{"mining.online_epochs": 1, "distribute.mixed_precision": "bfloat16", "eval.every_steps": 10, **MIRRORED},
    )
    run_two_cpus("teacher", cfg)
    summary = json.loads((tmp_path / "t" / "run" / "summary.json").read_text())
    assert [m["source"] for m in summary["mining"]] == ["bm25", "online"] and summary["best"]["value"] > 0
    meta = json.loads((tmp_path / "t" / "run" / "best" / "relkt.json").read_text())
    assert meta["dim"] == 16


def free_ports(n: int) -> list[int]:
    """n distinct loopback ports: every socket stays bound until all are picked, so two picks never share one."""
    sockets = [socket.socket() for _ in range(n)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def wait_all(procs, logs: list[Path], timeout: float) -> None:
    """Wait for every process; one that fails ends the others (a worker left alone would wait for its peer
    forever), and a timeout ends them all. Either way every worker's log is in the failure message (logs are
    files, not pipes: a full pipe would stall a worker this loop never reads)."""
    deadline = time.monotonic() + timeout
    while any(p.poll() is None for p in procs):
        failed = any(p.poll() not in (None, 0) for p in procs)
        if failed or time.monotonic() > deadline:
            for p in procs:
                p.kill()
            break
        time.sleep(0.5)
    for p in procs:
        p.wait()
    tails = "\n".join(
        f"--- worker {i} (exit {p.returncode}) ---\n{log.read_text(errors='replace')[-3000:]}"
        for i, (p, log) in enumerate(zip(procs, logs))
    )
    assert [p.returncode for p in procs] == [0] * len(procs), tails


@pytest.mark.slow
def test_multi_worker_two_local_workers(synthetic_data, tmp_path):
    cfg = tiny_config(
        tmp_path,
        synthetic_data,
        **{"mining.online_epochs": 1, "eval.every_steps": 10, "distribute.strategy": "multi_worker"},
    )
    workers = [f"127.0.0.1:{port}" for port in free_ports(2)]
    procs, logs = [], [tmp_path / f"worker{index}.log" for index in range(2)]
    for index, log in enumerate(logs):
        tf_config = {"cluster": {"worker": workers}, "task": {"type": "worker", "index": index}}
        env = {**ENV, "TF_CONFIG": json.dumps(tf_config)}
        with open(log, "w") as sink:
            procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "relkt.train_teacher", "--config", str(cfg)],
                    cwd=ROOT,
                    env=env,
                    stdout=sink,
                    stderr=subprocess.STDOUT,
                )
            )
    wait_all(procs, logs, timeout=500)
    run = tmp_path / "run"
    summary = json.loads((run / "summary.json").read_text())  # written by the chief (worker 0) only
    assert summary["steps"] > 0 and (run / "best" / "saved_model.pb").exists()
    assert not list(run.glob(".worker-scratch-*"))  # the other worker cleaned its scratch folder
