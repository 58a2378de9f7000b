"""The command lines: one module a command (flags in, one library call, an exit code out), the argparse types and
shared flags, and the `relkt` console command (`__main__.py`). No library module imports this package.

In a process relkt started (RELKT_QUIETED_TENSORFLOW=1, set by the parent's CLI) TensorFlow's start-up lines are
silenced here, before any command module imports TensorFlow; a user's own `import relkt.cli` changes nothing."""

import os as _os

from relkt.cli import quiet_tensorflow as _quiet_tensorflow

if _os.environ.get(_quiet_tensorflow.QUIETED) == "1":
    _quiet_tensorflow.install()
