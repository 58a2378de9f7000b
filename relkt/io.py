"""Atomic file writes: a crash never leaves a half-written result, config or checkpoint behind; where relkt may write
(`claim_dir`, `claim_file`); whether the caller trusts the model folders it loads (`trusting_models`)."""

from __future__ import annotations

import contextvars
import hashlib
import json
import math
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
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


def json_text(obj: object) -> str:
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


def atomic_write_json(path: str | Path, obj: object) -> Path:
    """Write `obj` as JSON to `path` atomically (non-finite numbers refused by `json_text`)."""
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


# ----- where relkt may write ----------------------------------------------------------------------------------------
# The rule every command and job follows: relkt writes into a folder it made (it holds OUTPUT_MARKER), a new folder or
# an empty one (then marked), or a file path that does not exist yet or holds a file relkt wrote (the caller says how
# to tell); never through a symbolic link below the path the user named, never inside a run folder a trainer holds.
OUTPUT_MARKER = ".relkt-output"
RUN_LOCK = ".lock"  # a run folder's lock file (relkt.training.run_lock holds it)
RUN_MARKER = ".relkt-run"  # what makes a folder relkt's run folder: written when relkt first claims it
_TMP = re.compile(r"^\..+\.[A-Za-z0-9_]+\.tmp$")


def refuse_links(path: str | Path, below: str | Path | None = None) -> None:
    """A WriteError when `path`, or a folder between `below` (exclusive) and `path`, is a symbolic link: writing
    through one would land somewhere the user did not name. The folders above `below` are the user's own choice."""
    path = Path(path)
    stop = Path(below) if below is not None else path.parent
    for p in [path, *path.parents]:
        if p == stop or p in stop.parents:
            break
        if p.is_symlink():
            raise WriteError(
                f"{p}: a symbolic link (to {os.readlink(p)}); relkt never writes through one, name a real folder"
            )


def live_run_holding(path: str | Path) -> Path | None:
    """The run folder at or above `path` whose lock a trainer holds now, if any (a finished or killed run's lock is
    free: the kernel drops it with its holder)."""
    import fcntl  # deferred: POSIX only, read only when a job is about to write

    for folder in [Path(path), *Path(path).parents]:
        lock = folder / RUN_LOCK
        if not lock.is_file() or lock.is_symlink():
            continue
        fd = os.open(lock, os.O_RDONLY)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            fcntl.flock(fd, fcntl.LOCK_UN)
        except BlockingIOError:
            return folder
        finally:
            os.close(fd)
    return None


def _refuse_live_run(path: Path) -> None:
    run = live_run_holding(path)
    if run is not None:
        raise WriteError(
            f"{path}: inside {run}, a run folder a trainer is writing now; write elsewhere, or wait for the run to end"
        )


def clean_leftovers(folder: str | Path, name: str | None = None) -> list[Path]:
    """Remove the temporary files an interrupted atomic write left in `folder` (`.NAME.XXXX.tmp`; only NAME's when
    `name` is given). Returns what was removed."""
    folder, removed = Path(folder), []
    if not folder.is_dir():
        return removed
    for entry in folder.iterdir():
        if _TMP.match(entry.name) and (name is None or entry.name.startswith(f".{name}.")) and entry.is_file():
            entry.unlink(missing_ok=True)
            removed.append(entry)
    return removed


def claim_dir(path: str | Path, kind: str, below: str | Path | None = None) -> Path:
    """Make `path` a folder relkt may write into, or refuse with a WriteError naming it: it must be new, empty or made
    by relkt (OUTPUT_MARKER), not a link (nor any folder between `below` and it), not inside a live run folder.
    Marks it, and removes what an interrupted write of relkt left there. `kind` (the job) is recorded in the marker."""
    path = Path(path)
    refuse_links(path, below)
    _refuse_live_run(path)
    marker = path / OUTPUT_MARKER
    if path.exists():
        if not path.is_dir():
            raise WriteError(f"{path}: a file, not a folder; name a new folder for the {kind} output")
        if not marker.is_file():
            foreign = sorted(p.name for p in path.iterdir())
            if foreign:
                raise WriteError(
                    f"{path}: holds files relkt did not write ({', '.join(foreign[:3])}"
                    f"{', ...' if len(foreign) > 3 else ''}); name a new or empty folder for the {kind} output"
                )
    with write_errors(path, "make the output folder"):
        path.mkdir(parents=True, exist_ok=True)
        if not marker.is_file():
            atomic_write_text(marker, json.dumps({"written_by": "relkt", "kind": kind}) + "\n")
    clean_leftovers(path)
    return path


def json_keys(path: str | Path) -> set[str]:
    """The top-level keys of the JSON object in `path` (empty when it is no readable JSON object): how a writer tells
    a result file of its own from anything else at that path."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return set()
    return set(data) if isinstance(data, dict) else set()


def claim_file(
    path: str | Path, ours: Callable[[Path], bool], what: str = "result", below: str | Path | None = None
) -> Path:
    """Check that relkt may write the file `path`: it does not exist, or `ours(path)` says relkt wrote it; not a link
    (nor a folder between `below` and it), not inside a live run folder. Removes the leftovers of an interrupted
    write of it. A WriteError otherwise."""
    path = Path(path)
    refuse_links(path, below)
    _refuse_live_run(path.parent)
    if path.is_dir():
        raise WriteError(f"{path}: a folder; name a file for the {what}")
    if path.exists() and not ours(path):
        raise WriteError(
            f"{path}: exists and relkt did not write it as a {what}; name a new file (relkt never replaces a file "
            "it did not write)"
        )
    clean_leftovers(path.parent, path.name)
    return path


# ----- what relkt may load ------------------------------------------------------------------------------------------
_TRUSTED: contextvars.ContextVar[bool] = contextvars.ContextVar("relkt_trusted_models", default=False)


@contextmanager
def trusting_models(trusted: bool = True) -> Iterator[None]:
    """Inside the block, SavedModels load without the scan for ops that touch files (relkt.encoders.model_scan): the
    user said they trust them (`--trust-model`, `trust_model=True`)."""
    token = _TRUSTED.set(bool(trusted))
    try:
        yield
    finally:
        _TRUSTED.reset(token)


def models_trusted() -> bool:
    """Whether the caller trusts the model folders loaded now (`trusting_models`)."""
    return _TRUSTED.get()
