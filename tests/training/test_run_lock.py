import os
import subprocess
import sys

import pytest

from relkt.errors import ConfigError
from relkt.training.run_lock import RunLock

HOLD = (
    "import sys, time; from relkt.training.run_lock import RunLock; l = RunLock(sys.argv[1]); "
    "print('held', flush=True); time.sleep(60)"
)


def test_a_second_writer_is_refused_naming_the_holder_and_a_dead_holder_is_taken_over(tmp_path):
    run = tmp_path / "run"
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(run)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(
            ConfigError, match=rf"in use by another run \(pid {holder.pid} on .*\): one writer per run folder"
        ):
            RunLock(run)
    finally:
        holder.kill()
        holder.wait()
    # Killed: the kernel dropped its lock; the next run takes over and names itself.
    lock = RunLock(run)
    assert (run / ".lock").read_text().startswith(f"pid {os.getpid()} ")
    lock.release()
    with RunLock(run):  # released: free again
        pass


def test_an_output_dir_that_is_a_file_is_named(tmp_path):
    (tmp_path / "run").write_text("x")
    with pytest.raises(ConfigError, match="output_dir .*run is a file, not a folder"):
        RunLock(tmp_path / "run")


def test_debris_of_interrupted_writes_is_removed_and_a_half_swapped_export_is_put_back(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    for name in (".best.writing-123", ".checkpoint.writing", ".last.old-77", ".last.writing-77"):
        (run / name).mkdir()
    (run / ".metrics.jsonl.abc.tmp").write_text("partial")
    (run / "last").mkdir()  # last/ exists: its .old copy is debris
    (run / ".best.old-99").mkdir()  # best/ is missing: a kill fell between the two renames of its export
    (run / ".best.old-99" / "saved_model.pb").write_text("model")
    (run / "checkpoint").mkdir()
    with RunLock(run) as lock:
        done = lock.clean_debris()
    assert sorted(p.name for p in run.iterdir()) == [".lock", "best", "checkpoint", "last"]
    assert (run / "best" / "saved_model.pb").read_text() == "model"
    assert len(done) == 6 and any("restored best/" in line for line in done)
