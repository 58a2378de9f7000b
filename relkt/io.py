"""Atomic file writes: a crash never leaves a half-written result, config or checkpoint behind."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any


def atomic_write_text(path: str | Path, text: str) -> Path:
    """Write to a temporary file in the same directory, fsync, then rename over `path`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


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
    import shutil

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
