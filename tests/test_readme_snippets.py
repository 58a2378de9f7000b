"""The README's promises in a new shell: after command 1 (the quickstart), each snippet of "Use it" runs exactly as
written, in a new process that has no RELKT_DATA_DIR, from a fresh copy of the repository."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared"


def readme_snippets(readme: str) -> dict[str, str]:
    """The README's snippets that use command 1's runs: the evaluate line, the API block and the hub.load block."""
    blocks = re.findall(r"```(\w+)\n(.*?)```", readme, re.S)
    evaluate = [
        line.split("#")[0].strip()
        for kind, text in blocks
        if kind == "bash"
        for line in text.splitlines()
        if line.startswith("relkt evaluate --config runs/quickstart_muse/")
    ]
    python = [text for kind, text in blocks if kind == "python"]
    api = [text for text in python if "from relkt import api" in text]
    hub = [text for text in python if "hub.load(" in text]
    assert len(evaluate) == len(api) == len(hub) == 1, "the README's snippets moved: update this test"
    return {"evaluate": evaluate[0], "api": api[0], "hub": hub[0]}


def test_the_readme_names_the_snippets_this_test_runs():
    snippets = readme_snippets((ROOT / "README.md").read_text(encoding="utf-8"))
    assert "runs/quickstart_muse/teacher/best" in snippets["hub"]
    assert 'api.config("teacher", "configs/quickstart_muse/teacher.yaml")' in snippets["api"]


@pytest.mark.slow  # the quickstart itself: minutes on 2 cores
def test_every_snippet_runs_as_written_in_a_new_shell_after_command_1(tmp_path):
    if not (SHARED / "data" / "xquad-r" / "en.json").exists():
        pytest.skip(f"the shared data is not beside the checkout ({SHARED})")
    repo = tmp_path / "relkt"
    shutil.copytree(
        ROOT,
        repo,
        ignore=shutil.ignore_patterns(".git", "runs", "reports", "__pycache__", ".pytest_cache", "*.egg-info"),
    )
    (tmp_path / "shared").symlink_to(SHARED)  # ../shared beside the copy, as beside a clone
    env = {k: v for k, v in os.environ.items() if k != "RELKT_DATA_DIR"}
    env["PYTHONPATH"] = str(repo)  # the copy's relkt, as an editable install of the clone would give
    command_1 = subprocess.run(
        [sys.executable, "-m", "relkt.cli", "reproduce", "quickstart_muse"],  # command 1 after its install
        cwd=repo,
        env={**env, "RELKT_DATA_DIR": "../shared/data/xquad-r"},
        capture_output=True,
        text=True,
    )
    assert command_1.returncode == 0, command_1.stderr[-3000:]

    snippets = readme_snippets((repo / "README.md").read_text(encoding="utf-8"))
    runs = {
        "evaluate": ["bash", "-c", snippets["evaluate"]],  # the `relkt` command pip installed
        "api": [sys.executable, "-c", snippets["api"]],
        "hub": [sys.executable, "-c", snippets["hub"]],
    }
    for name, argv in runs.items():  # each a new process, as a new shell would start it
        done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"the README's {name} snippet: {done.stderr[-3000:]}"
    card = (repo / "runs" / "quickstart_muse" / "student" / "best" / "README.md").read_text(encoding="utf-8")
    assert "Test (never read in training)" in card, "the quickstart's student card carries its test scores"
