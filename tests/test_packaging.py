"""relkt installs and imports like a library: a wheel that declares what relkt imports, pins in requirements.txt
inside those ranges, and an `import relkt` that leaves the process as it found it."""

from __future__ import annotations

import email
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import tomllib
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def declared() -> dict[str, Requirement]:
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    return {Requirement(d).name.lower(): Requirement(d) for d in deps}


def test_the_wheel_declares_what_relkt_imports(tmp_path):
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "relkt", tmp_path / "relkt", ignore=shutil.ignore_patterns("__pycache__"))
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", "dist", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("relkt-*.whl")
    with zipfile.ZipFile(wheel) as z:
        meta = email.message_from_bytes(z.read(next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))))
    requires = [Requirement(r) for r in meta.get_all("Requires-Dist")]
    runtime = {r.name.lower() for r in requires if r.marker is None}
    assert {"tensorflow", "keras", "tensorflow-text", "tensorflow-hub", "keras-hub", "numpy"} <= runtime
    dev = {r.name.lower() for r in requires if r.marker is not None and "dev" in str(r.marker)}
    assert {"pytest", "ruff"} <= dev


def test_every_tested_pin_is_inside_the_declared_range():
    ranges, outside = declared(), []
    for line in (ROOT / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        pin = Requirement(line)
        if pin.name.lower() not in ranges:
            continue  # test and lint tools: the dev extra
        exact = [s.version for s in pin.specifier if s.operator == "=="]
        if exact and not ranges[pin.name.lower()].specifier.contains(exact[0]):
            outside.append(f"{pin} is outside pyproject's {ranges[pin.name.lower()]}")
    assert not outside, "\n".join(outside)
    assert {"tensorflow", "keras", "tensorflow-text", "tensorflow-hub"} <= set(ranges)


IMPORT_EVERYTHING = """
import importlib, os, pkgutil, sys
def state():
    fd2 = os.fstat(2)
    return dict(os.environ), list(sys.meta_path), (fd2.st_dev, fd2.st_ino)
def same(before, what):
    after = state()
    assert after[0] == before[0], (what, sorted(set(after[0].items()) ^ set(before[0].items())))
    assert after[1] == before[1], (what, sys.meta_path)
    assert after[2] == before[2], (what, "stderr was redirected")
before = state()
import relkt, relkt.cli, relkt.config, relkt.data, relkt.metrics, relkt.analysis, relkt.reports  # the TF-free layers
same(before, "import relkt")
import tensorflow, keras  # they set variables of their own (TF2_BEHAVIOR, ...): not relkt's doing
before = state()
names = [m.name for m in pkgutil.walk_packages(relkt.__path__, "relkt.")]
for name in names:
    importlib.import_module(name)
same(before, "every relkt module")
print(len(names))
"""


QUIETED = "RELKT_QUIETED_TENSORFLOW"


def test_importing_relkt_changes_nothing_in_the_process():
    """No environment variable set, no import hook left, stderr where it was: quieting TensorFlow is the CLIs' job."""
    env = {
        k: v for k, v in __import__("os").environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "RELKT_VERBOSE", QUIETED)
    }
    done = subprocess.run(
        [sys.executable, "-c", IMPORT_EVERYTHING], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert int(done.stdout.split()[-1]) > 50  # every module of the package was imported


def test_a_cli_quiets_tensorflow_in_the_processes_it_starts():
    """run_cli leaves the level and the mark that make every child's own `relkt.cli` import install the quiet import
    (relkt.cli.__init__), so a child's TensorFlow loads silently too."""
    code = (
        "import os, sys; from relkt.cli.common import run_cli; "
        "run_cli(lambda: 0); "
        "assert os.environ['TF_CPP_MIN_LOG_LEVEL'] == '3' and os.environ['RELKT_QUIETED_TENSORFLOW'] == '1'"
    )
    env = {
        k: v for k, v in __import__("os").environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "RELKT_VERBOSE", QUIETED)
    }
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_the_relkt_command_runs_each_cli_and_lists_them(capsys):
    from relkt.cli.__main__ import COMMANDS, main

    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in COMMANDS)
    assert main(["teachx"]) == 2 and "unknown command 'teachx'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as stop:
        main(["evaluate", "--help"])
    assert stop.value.code == 0 and "--xx-en-unit" in capsys.readouterr().out
    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts == {"relkt": "relkt.cli.__main__:main"}


@pytest.mark.parametrize(
    "line",
    [
        ["-m", "relkt.cli", "tables", "--check", "--root", "nowhere"],
        ["-m", "relkt.train_teacher", "--config", "nowhere.yaml"],
    ],
)
def test_a_command_line_prints_no_tensorflow_start_up_line(line, tmp_path):
    """TensorFlow loads while a command's module is imported: the quiet import is in place before (one error line)."""
    env = {
        k: v for k, v in __import__("os").environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "RELKT_VERBOSE", QUIETED)
    }
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, *line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    err = [x for x in done.stderr.splitlines() if x.strip()]
    assert done.returncode != 0 and len(err) == 1 and err[0].startswith("error: "), err
