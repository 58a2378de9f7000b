"""Atomic file writes: a crash never leaves a half-written result, config or checkpoint behind."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np


def _file_mode() -> int:
    """0666 less the umask: what `open` would give a new file (mkstemp's own files are 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


@contextmanager
def atomic_file(path: str | Path, mode: str = "wb"):
    """Open a temporary file beside `path` for writing; on success fsync it and rename it over `path` (with the
    permissions a plain new file gets); on failure remove it, leaving what was at `path` untouched."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, _file_mode())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write `text` to `path` atomically (`atomic_file`)."""
    with atomic_file(path, "w") as f:
        f.write(text)
    return Path(path)


def atomic_write_npz(path: str | Path, **arrays: np.ndarray) -> Path:
    """`np.savez` to `path` atomically (`atomic_file`)."""
    with atomic_file(path, "wb") as f:
        np.savez(f, **arrays)
    return Path(path)


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    return atomic_write_text(path, json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=True) + "\n")


def fsync_tree(directory: str | Path) -> None:
    """fsync every file under `directory` and the folders themselves, so a rename after it publishes complete data
    (without it a crash shortly after the rename can leave zero-length files behind the new name)."""
    directory = Path(directory)
    for path in sorted(directory.rglob("*"), reverse=True) + [directory]:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def replace_dir(new: str | Path, dest: str | Path, keep_previous: str | Path | None = None) -> Path:
    """Swap the finished directory `new` in at `dest` with renames; the old one is removed after, or kept at
    `keep_previous` (replacing what was there).

    If a crash falls between the two renames, `recover_dir(dest)` brings the previous one back.
    """
    new, dest = Path(new), Path(dest)
    old = Path(keep_previous) if keep_previous else dest.parent / f".{dest.name}.old"
    shutil.rmtree(old, ignore_errors=True)
    if dest.exists():
        os.replace(dest, old)
    os.replace(new, dest)
    if not keep_previous:
        shutil.rmtree(old, ignore_errors=True)
    return dest


def recover_dir(dest: str | Path) -> Path | None:
    """`dest` if it exists, else the previous version a crash left mid-swap (restored), else None."""
    dest = Path(dest)
    if dest.exists():
        return dest
    old = dest.parent / f".{dest.name}.old"
    if old.exists():
        os.replace(old, dest)
        return dest
    return None
