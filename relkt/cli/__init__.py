"""The command lines: one module a command (flags in, one library call, an exit code out), the argparse types and
shared flags, and the `relkt` console command (`__main__.py`). No library module imports this package.

TensorFlow's start-up lines are silenced here, before any command module imports TensorFlow, when a command runs:
`python -m relkt.cli[.COMMAND]` (Python sets argv[0] to "-m" while it finds the module) or a process a relkt command
started (RELKT_QUIETED_TENSORFLOW=1). A user's own `import relkt.cli` changes nothing."""

import os as _os
import sys as _sys

from relkt.cli import quiet_tensorflow as _quiet_tensorflow

if _sys.argv[:1] == ["-m"] or _os.environ.get(_quiet_tensorflow.QUIETED) == "1":
    _quiet_tensorflow.install()
