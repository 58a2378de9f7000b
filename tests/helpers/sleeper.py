"""A child process for the signal tests: writes its pid, sleeps, and on SIGTERM or SIGINT writes which and exits."""

import os
import signal
import sys
import time
from pathlib import Path

out = Path(sys.argv[1])


def stop(signum, frame):
    out.write_text(f"{os.getpid()} got {signal.Signals(signum).name}")
    sys.exit(128 + signum)


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)
out.write_text(f"{os.getpid()} running")
time.sleep(60)
