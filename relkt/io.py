"""Atomic file writes: a crash never leaves a half-written result, config or checkpoint behind; where relkt may write
(`claim_dir`, `claim_file`); the one door every file relkt reads passes (`read_bytes`, `read_text`, `read_json`,
`read_yaml`: regular files only, bounded in size, nesting and YAML aliases, UTF-8 checked once, a key given twice
refused); whether the caller trusts the model folders it loads (`trusting_models`)."""

from __future__ import annotations

import contextvars
import dataclasses
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

from relkt.errors import ConfigError, DataError, NonFiniteError, RelktError, WriteError


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
RUN_FINGERPRINTS = "fingerprints.json"  # a run folder's data fingerprints (relkt.training.run_folder writes them)
_TMP = re.compile(r"^\..+\.[A-Za-z0-9_]+\.tmp$")


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def refuse_bad_name(path: str | Path) -> None:
    """A WriteError for a path no file system holds (a NUL byte, a name longer than the file system takes) or one that
    breaks every line that names it (a newline, a tab or another control character)."""
    text = os.fspath(path)
    if "\x00" in text:
        raise WriteError(f"{text!r}: holds a NUL byte, which no file name can; name another")
    control = _CONTROL.search(text)
    if control:
        raise WriteError(
            f"{text!r}: holds the control character {control.group()!r} (U+{ord(control.group()):04X}), which would "
            "break every line that names the file; name another"
        )
    for part in Path(text).parts:
        if len(os.fsencode(part)) > 255:
            raise WriteError(f"{text}: a name of {len(os.fsencode(part))} bytes; a file system takes 255")


# The fields of a config section or job request that name data a command reads: an output inside one is refused (a
# results file in a SQuAD folder would be read as a language of it next time). tests/test_every_command_writes_through
# _the_door.py fails when a config or request field ending in `_dir` is missing here.
DATA_FIELDS = frozenset(
    {
        "data_dir",
        "test_dir",
        "more_test",
        "pairs_dir",
        "questions_dir",
        "qa_dir",
        "qa_test_dir",
        "corpus_dir",
        "code_switch_dir",
        "more_pairs",
        "more_qa",
        "native_qa",
    }
)


# fields naming an encoder spec (`muse:DIR`, `hub:DIR`, `bert:DIR`): the folder after the colon is read too
MODEL_FIELDS = frozenset({"spec", "encoder", "encoders", "teacher", "student", "base"})


def model_path(spec: object) -> Path | None:
    """The model folder an encoder spec reads (`hub:model` -> model); None for a spec without one (`muse`, `ngram`) or
    a URL."""
    if not isinstance(spec, str) or ":" not in spec:
        return None
    arg = spec.partition(":")[2]
    return Path(arg).expanduser() if arg and "://" not in arg else None


def data_paths(*objs: object) -> list[Path]:
    """Every path the dataclasses `objs` (and the dataclasses inside them) read: data in a DATA_FIELDS field, model
    folders in a MODEL_FIELDS field's encoder specs."""
    out, stack = [], list(objs)
    while stack:
        obj = stack.pop()
        if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
            continue
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name, None)
            if dataclasses.is_dataclass(value):
                stack.append(value)
            elif f.name in DATA_FIELDS and value:
                values = [value] if isinstance(value, (str, os.PathLike)) else list(value)
                out += [Path(v).expanduser() for v in values if isinstance(v, (str, os.PathLike)) and str(v)]
            elif f.name in MODEL_FIELDS and value:
                specs = value.values() if isinstance(value, dict) else [value] if isinstance(value, str) else []
                out += [path for path in map(model_path, specs) if path is not None]
    return out


def refuse_writing_into(path: str | Path, reads: Sequence[str | Path] = ()) -> None:
    """A WriteError when `path` is, lies inside or holds data this command reads (`reads`, resolved paths compared):
    what it writes would be read back as data, or replace it."""
    refuse_bad_name(path)
    target = Path(path).expanduser().resolve()
    for read in reads:
        source = Path(read).expanduser()
        if not source.exists():
            continue
        source = source.resolve()
        if target == source or source in target.parents or target in source.parents:
            raise WriteError(f"{path}: inside or over {read}, which this command reads; write elsewhere")


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


def check_run_folder(out: Path) -> list[Path]:
    """What `relkt.training.run_folder.claim_run_folder` refuses, checked without writing (a recipe checks every run
    folder of its plan before its first step): a link, a file, a folder relkt did not make or one holding links.
    Returns the folder's entries."""
    refuse_bad_name(out)
    refuse_links(out)
    if out.exists() and not out.is_dir():
        raise ConfigError(f"output_dir {out} is a file, not a folder")
    entries = sorted(out.iterdir()) if out.is_dir() else []
    links = [p.name for p in entries if p.is_symlink()]
    if links:
        raise ConfigError(
            f"output_dir {out}: holds symbolic links ({', '.join(links[:5])}); relkt writes its own files there and "
            "follows no link: remove them, or choose another output_dir"
        )
    older_run = (out / "config.yaml").is_file() and any(
        (out / name).exists() for name in ("checkpoint", "train.log", "summary.json", RUN_FINGERPRINTS)
    )
    if entries and not (out / RUN_MARKER).is_file() and not older_run:
        shown = ", ".join(p.name for p in entries[:5]) + (f" and {len(entries) - 5} more" if len(entries) > 5 else "")
        raise ConfigError(
            f"output_dir {out}: not a relkt run folder (it holds {shown}, and no {RUN_MARKER}); relkt writes only "
            "into a new or empty folder, or one of its own runs: choose another output_dir"
        )
    return entries


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


def claim_dir(path: str | Path, kind: str, below: str | Path | None = None, reads: Sequence[str | Path] = ()) -> Path:
    """Make `path` a folder relkt may write into, or refuse with a WriteError naming it: it must be new, empty or made
    by relkt (OUTPUT_MARKER), not a link (nor any folder between `below` and it), not inside a live run folder.
    Marks it, and removes what an interrupted write of relkt left there. `kind` (the job) is recorded in the marker.
    `reads`: the data the job reads (`data_paths`), which the folder may neither be, hold, nor lie in."""
    path = check_output_dir(path, kind, below, reads)
    marker = path / OUTPUT_MARKER
    with write_errors(path, "make the output folder"):
        path.mkdir(parents=True, exist_ok=True)
        if not marker.is_file():
            atomic_write_text(marker, json.dumps({"written_by": "relkt", "kind": kind}) + "\n")
    clean_leftovers(path)
    return path


def check_output_dir(
    path: str | Path, kind: str, below: str | Path | None = None, reads: Sequence[str | Path] = ()
) -> Path:
    """What `claim_dir` refuses, checked without writing anything: a recipe checks its output before its plan's other
    checks, and makes it only once they pass."""
    refuse_writing_into(path, reads)  # a name no file system holds included
    path = Path(path)
    refuse_links(path, below)
    _refuse_live_run(path)
    marker = path / OUTPUT_MARKER
    if path.exists():
        if not path.is_dir():
            raise WriteError(f"{path}: a file, not a folder; name a new folder for the {kind} output")
        theirs = _marker_kind(marker)
        if theirs is not None and theirs != kind:  # the marker's kind is checked, not its name alone
            raise WriteError(
                f"{path}: a folder relkt wrote for a {theirs} output; a {kind} output never replaces it: name another"
            )
        if not marker.is_file():
            foreign = sorted(p.name for p in path.iterdir())
            if foreign:
                raise WriteError(
                    f"{path}: holds files relkt did not write ({', '.join(foreign[:3])}"
                    f"{', ...' if len(foreign) > 3 else ''}); name a new or empty folder for the {kind} output"
                )
    return path


def _marker_kind(marker: Path) -> str | None:
    """The kind an output marker records (None: no marker); an unreadable marker reads as a kind of its own."""
    if not marker.is_file():
        return None
    try:
        data = read_json(marker, "output marker")
    except RelktError:
        return "unreadable marker"
    return str(data.get("kind")) if isinstance(data, dict) else "unreadable marker"


def json_keys(path: str | Path) -> set[str]:
    """The top-level keys of the JSON object in `path` (empty when it is no readable JSON object): how a writer tells
    a result file of its own from anything else at that path."""
    try:
        data = read_json(path)
    except (OSError, RelktError):
        return set()
    return set(data) if isinstance(data, dict) else set()


def claim_file(
    path: str | Path,
    ours: Callable[[Path], bool],
    what: str = "result",
    below: str | Path | None = None,
    reads: Sequence[str | Path] = (),
) -> Path:
    """Check that relkt may write the file `path`: it does not exist, or `ours(path)` says relkt wrote it; not a link
    (nor a folder between `below` and it), not inside a live run folder. Removes the leftovers of an interrupted
    write of it. A WriteError otherwise."""
    if isinstance(path, str) and path.endswith(("/", os.sep)):  # a folder's name, read as a file's by Path
        raise WriteError(f"{path}: ends with '/', a folder's name; name the {what} file itself")
    refuse_writing_into(path, reads)  # a name no file system holds included
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


# ----- what relkt reads ---------------------------------------------------------------------------------------------
# Every file relkt reads comes through here: a FIFO or a device is refused before it is opened (a read would hang or
# never end), a document over MAX_DOCUMENT_BYTES or nested deeper than MAX_NESTING is refused, text is UTF-8 (its
# byte offset named otherwise), JSON and YAML refuse a key given twice (the last would win silently) and a lone
# surrogate, YAML's aliases are bounded (an alias bomb expands exponentially). Each refusal is one error naming the
# file; `error` picks its type (a config's reader raises ConfigError).
MAX_DOCUMENT_BYTES = 1 << 30
MAX_NESTING = 100
MAX_YAML_ALIASES = 100
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


def regular_file(path: str | Path, what: str = "file", error: type[RelktError] = DataError) -> Path:
    """`path` if it is a regular file (links followed); one error naming it otherwise (missing, a folder, a FIFO,
    a device, a socket)."""
    import stat  # deferred: only the read door needs it

    path = Path(path)
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise error(f"{path}: no such {what}") from None
    except OSError as e:
        raise error(f"{path}: cannot read the {what} ({os_reason(e)})") from None
    if stat.S_ISDIR(mode):
        raise error(f"{path}: a folder, not a {what}")
    if not stat.S_ISREG(mode):
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a file"
        )
        raise error(f"{path}: {kind}, not a regular {what}; relkt reads regular files only")
    return path


def read_bytes(
    path: str | Path, what: str = "file", error: type[RelktError] = DataError, limit: int = MAX_DOCUMENT_BYTES
) -> bytes:
    """The bytes of the regular file `path`, at most `limit` of them."""
    path = regular_file(path, what, error)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as e:
        raise error(f"{path}: cannot read the {what} ({os_reason(e)})") from None
    if len(data) > limit:
        raise error(f"{path}: the {what} is over {limit:,} bytes; relkt reads documents up to that size")
    return data


def read_npz(path: str | Path, what: str = "arrays file", error: type[RelktError] = DataError) -> dict[str, np.ndarray]:
    """Every array of the regular `.npz` file `path`, read whole (no pickled objects); one error naming it when it is
    not one (missing, a FIFO, truncated, not a zip, an object array)."""
    return _npz(path, what, error, keys_only=False)


def npz_keys(path: str | Path, what: str = "arrays file", error: type[RelktError] = DataError) -> list[str]:
    """The array names of the regular `.npz` file `path`, its arrays left unread; errors as `read_npz`'s."""
    return _npz(path, what, error, keys_only=True)


def _npz(path: str | Path, what: str, error: type[RelktError], keys_only: bool):
    import zipfile  # deferred: only this door needs it

    path = regular_file(path, what, error)
    try:
        with np.load(path, allow_pickle=False) as z:
            return list(z.files) if keys_only else {k: z[k] for k in z.files}
    except (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile) as e:
        reason = os_reason(e) if isinstance(e, OSError) else f"{type(e).__name__}: {e}"
        raise error(f"{path}: not a {what} ({reason})") from None


def read_text(
    path: str | Path, what: str = "file", error: type[RelktError] = DataError, limit: int = MAX_DOCUMENT_BYTES
) -> str:
    """The UTF-8 text of `path` (a leading byte-order mark dropped); the byte offset of the first invalid byte named."""
    data = read_bytes(path, what, error, limit)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise error(f"{path}: not UTF-8 text (byte offset {e.start}: {e.reason}); the {what} must be UTF-8") from None


def _unique_pairs(where: str, error: type[RelktError]):
    def pairs(items: list) -> dict:
        out = {}
        for key, value in items:
            if key in out:
                raise error(f"{where}: key {key!r} appears twice in one object (the last would win silently)")
            out[key] = value
        return out

    return pairs


MAX_EXPANDED_NODES = 10_000_000  # a YAML document's values counted with every alias expanded


def _check_nesting(document: Any, where: str, error: type[RelktError], surrogates: bool) -> None:
    """Nesting at most MAX_NESTING deep and at most MAX_EXPANDED_NODES values once aliases are expanded (a YAML alias
    bomb shares its lists, so it is small in memory and explodes in whoever walks it); with `surrogates`, no string
    holding a lone surrogate. Walked without recursion, each shared container once."""
    stack, seen = [(document, 1, "")], set()
    while stack:
        node, depth, at = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_NESTING:
                raise error(f"{where}: nested deeper than {MAX_NESTING} levels")
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, dict):
                for key, value in node.items():
                    here = f"{at}.{key}" if at else str(key)
                    if surrogates and isinstance(key, str):
                        stack.append((key, depth + 1, f"{here} (its key)"))
                    stack.append((value, depth + 1, here))
            else:
                stack.extend((value, depth + 1, f"{at}[{k}]") for k, value in enumerate(node))
        elif surrogates and isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise error(
                    f"{where}: {at or 'the document'}: holds a lone surrogate (an unpaired \\uD800-\\uDFFF escape)"
                ) from None
    if seen and _expanded_size(document, {}) > MAX_EXPANDED_NODES:
        raise error(f"{where}: over {MAX_EXPANDED_NODES:,} values once its aliases are expanded (an alias bomb?)")


def _expanded_size(node: Any, memo: dict[int, int]) -> int:
    """How many values `node` holds with every shared container counted each time it appears (memoised: the walk is
    linear in the document, the count is what a consumer that copies it would build). Depth is bounded already."""
    if not isinstance(node, (dict, list)):
        return 1
    if id(node) not in memo:
        children = node.values() if isinstance(node, dict) else node
        memo[id(node)] = 1 + sum(_expanded_size(child, memo) for child in children)
    return memo[id(node)]


def parse_json(text: str, where: str, error: type[RelktError] = DataError) -> Any:
    """A JSON document from `text` (read from `where`), under the read door's rules."""
    try:
        document = json.loads(text, object_pairs_hook=_unique_pairs(where, error))
    except RecursionError:
        raise error(f"{where}: nested deeper than {MAX_NESTING} levels") from None
    except json.JSONDecodeError as e:
        raise error(f"{where}: malformed JSON: {e}") from None  # json's whole sentence, "... line L column C (char N)"
    _check_nesting(document, where, error, bool(_SURROGATE_ESCAPE.search(text)))
    return document


def read_json(path: str | Path, what: str = "JSON file", error: type[RelktError] = DataError) -> Any:
    """The JSON document in `path`, through the read door."""
    return parse_json(read_text(path, what, error), str(path), error)


def _yaml_loader(where: str, error: type[RelktError]):
    import yaml  # deferred: only a YAML read needs it

    class Loader(yaml.SafeLoader):
        aliases = 0

        def compose_node(self, parent, index):
            if self.check_event(yaml.AliasEvent):
                Loader.aliases += 1
                if Loader.aliases > MAX_YAML_ALIASES:
                    raise error(f"{where}: more than {MAX_YAML_ALIASES} YAML aliases (an alias bomb?); write it out")
            return super().compose_node(parent, index)

        def construct_mapping(self, node, deep=False):
            seen = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=deep)
                if isinstance(key, (dict, list)):
                    raise error(f"{where}: a mapping or list used as a key (line {key_node.start_mark.line + 1})")
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} appears twice (first on line {seen[key] + 1})", key_node.start_mark
                    )
                seen[key] = key_node.start_mark.line
            return super().construct_mapping(node, deep=deep)

    return Loader


def parse_yaml(text: str, where: str, error: type[RelktError] = DataError) -> Any:
    """A YAML document from `text` (read from `where`), under the read door's rules (safe types only)."""
    import yaml  # deferred: only a YAML read needs it

    try:
        document = yaml.load(text, Loader=_yaml_loader(where, error))  # noqa: S506 (a SafeLoader subclass)
    except RecursionError:
        raise error(f"{where}: nested deeper than {MAX_NESTING} levels") from None
    except yaml.YAMLError as e:  # one line: what is wrong and where, without the parser's excerpt
        mark = getattr(e, "problem_mark", None)
        at = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        context = getattr(e, "context", None)
        raise error(f"{where}: malformed YAML: {context + ': ' if context else ''}{problem}{at}") from None
    _check_nesting(document, where, error, True)
    return document


def read_yaml(path: str | Path, what: str = "YAML file", error: type[RelktError] = DataError) -> Any:
    """The YAML document in `path`, through the read door."""
    return parse_yaml(read_text(path, what, error), str(path), error)
