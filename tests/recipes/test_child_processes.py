"""`relkt reproduce` runs its steps as children that its signals reach: SIGTERM or SIGINT to it is passed on, the
child is waited for, nothing trains on as an orphan."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PARENT = (
    "import sys\n"
    "from relkt.errors import Interrupted\n"
    "from relkt.recipes.pipeline import Step, run_steps\n"
    "try:\n"
    "    run_steps([Step('sleep', ['tests.helpers.sleeper', sys.argv[1]])], log=lambda *a: None)\n"
    "except Interrupted as e:\n"
    "    print(e)\n"
    "    sys.exit(130)\n"
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_reaches_the_running_step_and_is_waited_for(tmp_path, sig):
    state = tmp_path / "child.txt"
    parent = subprocess.Popen([sys.executable, "-c", PARENT, str(state)], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    deadline = time.time() + 60
    while not (state.is_file() and "running" in state.read_text()):
        assert time.time() < deadline and parent.poll() is None, "the step never started"
        time.sleep(0.1)
    child = int(state.read_text().split()[0])
    parent.send_signal(sig)
    out, _ = parent.communicate(timeout=30)
    assert parent.returncode == 130 and "resumes" in out
    assert state.read_text() == f"{child} got {sig.name}"  # the child had the signal, and ended before the parent
    with pytest.raises(ProcessLookupError):
        os.kill(child, 0)
