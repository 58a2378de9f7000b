"""argparse types the CLIs share: a bad value is one usage line naming the flag, before any work starts."""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path


def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1, got {value}")
    return value


def language_list(text: str) -> str:
    """Comma-separated language codes naming at least one: leaving the flag out means every language, and an empty
    value is refused rather than read as that."""
    if not [x for x in text.split(",") if x.strip()]:
        raise argparse.ArgumentTypeError(f"names no language ({text!r}); leave the flag out for every language")
    return text


def split_fractions(text: str) -> tuple[float, float, float]:
    """`train,dev,test` article fractions, three numbers >= 0 summing to 1."""
    try:
        parts = tuple(float(x) for x in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected three numbers train,dev,test (e.g. 0.7,0.1,0.2), got {text!r}"
        ) from None
    if len(parts) != 3 or min(parts) < 0 or abs(sum(parts) - 1) > 1e-6:
        raise argparse.ArgumentTypeError(f"expected three fractions >= 0 summing to 1 (e.g. 0.7,0.1,0.2), got {text!r}")
    return parts


def writable_file(text: str) -> str:
    """An output file whose folder exists (or can be made) and takes a new file: checked before hours of encoding."""
    folder = Path(text).expanduser().resolve().parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".relkt-write-probe-")
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise argparse.ArgumentTypeError(f"cannot write {text}: {e.strerror or e}") from None
    if Path(text).is_dir():
        raise argparse.ArgumentTypeError(f"cannot write {text}: it is a folder")
    return text
