"""TensorFlow's C++ start-up chatter off by default: the CUDA probe's errors on a machine without a GPU, oneDNN and
CPU-feature notices. `TF_CPP_MIN_LOG_LEVEL=3` silences what TensorFlow logs once running; the lines its libraries
print while they load, before its logging is set up, are dropped by pointing file descriptor 2 at /dev/null for the
duration of `import tensorflow` only. `RELKT_VERBOSE=1` (or an explicit TF_CPP_MIN_LOG_LEVEL) keeps everything."""

from __future__ import annotations

import contextlib
import importlib.abc
import importlib.util
import os
import sys


@contextlib.contextmanager
def stderr_silenced():
    """File descriptor 2 to /dev/null and back (C and C++ writes included); Python's own errors still raise."""
    sys.stderr.flush()
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


class QuietTensorFlowImport(importlib.abc.MetaPathFinder):
    """Finds `tensorflow` like the next finder does, and runs its first import with stderr silenced."""

    def find_spec(self, name, path, target=None):
        if name != "tensorflow":
            return None
        sys.meta_path.remove(self)  # once: the real finder answers from here on
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def exec_quietly(module):
            with stderr_silenced():
                run(module)

        spec.loader.exec_module = exec_quietly
        return spec


QUIETED = "RELKT_QUIETED_TENSORFLOW"  # the level above was relkt's choice, not the user's


def install() -> None:
    """Quiet TensorFlow unless RELKT_VERBOSE=1 or TF_CPP_MIN_LOG_LEVEL is set; a no-op once TensorFlow is loaded."""
    ours = os.environ.get(QUIETED) == "1"  # set here: a child process relkt started quiets its own import too
    if os.environ.get("RELKT_VERBOSE") == "1" or ("TF_CPP_MIN_LOG_LEVEL" in os.environ and not ours):
        return
    os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
    os.environ[QUIETED] = "1"
    if "tensorflow" not in sys.modules and not any(isinstance(f, QuietTensorFlowImport) for f in sys.meta_path):
        sys.meta_path.insert(0, QuietTensorFlowImport())
