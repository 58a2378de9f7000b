"""Atomic file writes: a crash never leaves a half-written result, config or checkpoint behind."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from relkt.errors import NonFiniteError, WriteError


def _file_mode() -> int:
    """0666 less the umask: what `open` would give a new file (mkstemp's own files are 0600)."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def os_reason(error: BaseException) -> str:
    """The OS's words for a failed write ("No space left on device"), else the error's own."""
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


def tf_reason(error: BaseException) -> str:
    """The OS reason at the end of a TensorFlow file error's message ("{{function_node ...}} FILE; File too large
    [Op:SaveV2]" -> "File too large")."""
    message = re.sub(r"\s*\[Op:\w+\]\s*$", "", str(getattr(error, "message", error)).strip())
    return message.rsplit("; ", 1)[-1].strip() or type(error).__name__


@contextmanager
def write_errors(path: str | Path, what: str = "write"):
    """Turn an OSError inside the block into one WriteError naming `path` and the OS reason (read-only, no space,
    file too large), so a command ends with one line instead of a traceback."""
    try:
        yield
    except WriteError:
        raise
    except OSError as e:
        raise WriteError(f"{path}: cannot {what} ({os_reason(e)})") from e


@contextmanager
def atomic_file(path: str | Path, mode: str = "wb"):
    """Open a temporary file beside `path` for writing; on success fsync it and rename it over `path` (with the
    permissions a plain new file gets); on failure remove it, leaving what was at `path` untouched. An OS error is
    a WriteError naming `path`."""
    with atomic_files([path], mode) as (f,):
        yield f


@contextmanager
def atomic_files(paths: Sequence[str | Path], mode: str = "wb"):
    """`atomic_file` for several files written as one unit: each is written to its temporary file, and only when
    all are written (and fsynced) are they renamed into place, so a failure leaves none of them changed."""
    paths = [Path(p) for p in paths]
    temps: list[str] = []
    try:
        with ExitStack() as stack:
            handles = []
            for path in paths:
                with write_errors(path):
                    path.parent.mkdir(parents=True, exist_ok=True)
                    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
                temps.append(tmp)
                handles.append(
                    stack.enter_context(os.fdopen(fd, mode, **({} if "b" in mode else {"encoding": "utf-8"})))
                )
            yield handles
            for path, f in zip(paths, handles):
                with write_errors(path):
                    f.flush()
                    os.fsync(f.fileno())
        for path, tmp in zip(paths, temps):
            with write_errors(path):
                os.chmod(tmp, _file_mode())
        for path, tmp in zip(paths, temps):
            with write_errors(path):
                os.replace(tmp, path)
    except BaseException as e:
        for tmp in temps:
            Path(tmp).unlink(missing_ok=True)
        if isinstance(e, OSError) and not isinstance(e, WriteError):
            raise WriteError(f"{' and '.join(map(str, paths))}: cannot write ({os_reason(e)})") from e
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


def json_text(obj: Any) -> str:
    """How relkt writes JSON results: indented, UTF-8 as is, and strict: a NaN or an infinity is a NonFiniteError
    naming its key (strict parsers reject the bare `NaN` token; a number that cannot be scored is left out and named
    by the code that scores it, never written)."""
    where = _non_finite(obj, "")
    if where is not None:
        raise NonFiniteError(f"refusing to write a non-finite number at {where or 'the top level'} of a JSON result")
    return json.dumps(obj, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _non_finite(obj: Any, at: str) -> str | None:
    """The dotted key of the first NaN or infinity in `obj`, or None."""
    if isinstance(obj, (float, np.floating)):
        return at if not math.isfinite(obj) else None
    items = obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, (list, tuple)) else ()
    for key, value in items:
        found = _non_finite(value, f"{at}.{key}" if at else str(key))
        if found is not None:
            return found
    return None


def atomic_write_json(path: str | Path, obj: Any) -> Path:
    return atomic_write_text(path, json_text(obj))


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


def link_tree(src: str | Path, dest: str | Path) -> Path:
    """Copy the folder `src` to `dest` with hard links (a copy where links cannot be made, e.g. across file
    systems), whole or not at all: built beside `dest` and renamed in. Why links: a finished run reused by another
    (a cross-validation's teachers under a student ablation) costs no space, and relkt never edits a run's files in
    place that another run shares (relkt.training.run_folder.unshare_in_place_files)."""
    src, dest = Path(src), Path(dest)

    def link(a: str, b: str) -> None:
        try:
            os.link(a, b)
        except OSError:
            shutil.copy2(a, b)

    tmp = dest.parent / f".{dest.name}.linking-{os.getpid()}"
    with write_errors(dest, f"write the linked copy of {src}"):
        shutil.rmtree(tmp, ignore_errors=True)
        try:
            shutil.copytree(src, tmp, copy_function=link)
            os.replace(tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
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


def file_fingerprint(path: Path) -> dict:
    """Size and sha256 of a file's bytes (what a run records of each input it read: `fingerprints.json`)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return {"bytes": path.stat().st_size, "sha256": h.hexdigest()}
