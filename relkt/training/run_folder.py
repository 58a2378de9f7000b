"""A run folder's life around a trainer: one writer (the lock), the config guard and input fingerprints on resume,
the log file, and the precision policy reset after."""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import keras

from relkt.config import StageConfig, save_config, to_dict
from relkt.config.config_io import upgraded
from relkt.config.sections import growable_keys, names_keys
from relkt.data.selection import languages_read, train_source
from relkt.data.sources import resolve_data_dir
from relkt.errors import CheckpointError, ConfigError, WriteError
from relkt.io import (
    RUN_FINGERPRINTS,
    RUN_MARKER,
    atomic_write_json,
    check_run_folder,
    data_paths,
    file_fingerprint,
    os_reason,
    read_json,
    read_yaml,
    refuse_writing_into,
    write_errors,
)
from relkt.names import ALL
from relkt.training.run_lock import RunLock

log = logging.getLogger("relkt.training")

# A moved run folder still resumes; `verbose` changes no result.
# how a run prints, where it lies, and how a batch is cut into passes (the same loss and gradients, float order aside)
IGNORED_ON_RESUME = {"verbose", "output_dir", "distill.length_chunks"}
# Settings naming a model whose weights `fingerprints.json` records: another path to the same weights (a moved or
# copied teacher) resumes, provided the kind before ':' is the same; other weights are refused by the fingerprints.
CHECKED_BY_FINGERPRINT = {"teacher.spec"}


def settings_before_they_existed(saved: dict[str, Any]) -> dict[str, Any]:
    """Settings added later whose absence from a saved run means something other than today's default: how that
    run trained (`saved`: its config, flattened to dotted keys). `schedule.sparse_rows`: relkt trained token tables
    with Keras's dense Adam before it, and the language rows (RowSubsetAdam) lazily; so a run from then resumes only
    with what it used."""
    rows = saved.get("student.language_rows.langs")
    return {"schedule.sparse_rows": "lazy" if rows else "dense"}


def read_as_today(cls: type, saved: dict[str, Any]) -> dict[str, Any]:
    """A saved run's flattened config with what an older relkt wrote differently read as today's: a `Names` setting
    left empty then meant every one (`all` today); today an empty list is refused."""
    keys = names_keys(cls)
    return {k: (ALL if k in keys and v == [] else v) for k, v in saved.items()}


def flat_keys(d: dict, prefix: str = "") -> dict[str, Any]:
    """A nested config dict as {dotted key: value}; `options` dicts stay whole (one setting each)."""
    out = {}
    for k, v in d.items():
        key = f"{prefix}{k}"
        out.update(flat_keys(v, key + ".") if isinstance(v, dict) and k != "options" else {key: v})
    return out


def _grows(before: Any, now: Any) -> bool:
    return isinstance(before, int) and isinstance(now, int) and now > before


def _same_kind(before: Any, now: Any) -> bool:
    return isinstance(before, str) and isinstance(now, str) and before.partition(":")[0] == now.partition(":")[0]


def _changed_on_resume(key: str, before: Any, now: Any, growable: set[str]) -> bool:
    if key in IGNORED_ON_RESUME or before == now:
        return False
    if key == "data.data_dir" and not before:  # a run that did not record its folder: fingerprints.json checks it
        return False
    if key == "data.data_dir" and Path(str(before)).expanduser().resolve() == Path(str(now)).expanduser().resolve():
        return False  # one folder named two ways (the path an earlier shell resolved, the config's relative one)
    if key in growable and _grows(before, now):  # counts marked GROWS_ON_RESUME on the config classes
        return False
    return not (key in CHECKED_BY_FINGERPRINT and _same_kind(before, now))


def prepare_output_dir(config: StageConfig, write: bool = True) -> Path:
    """Create the run folder and write config.yaml; a run that has trained (a checkpoint exists) must have the same
    config (re-running the same command resumes it; a changed setting needs a new output_dir), except that
    its epoch counts may grow (`--set distill.epochs=4` trains a finished 2-epoch run two epochs more) and its
    teacher may be named by another path (its weights are checked by `check_fingerprints`). `write=False` (a
    multi-worker run's other workers) checks only: the folder is the chief's, whose lock clears any file being
    written there that it does not own."""
    out = Path(config.output_dir)
    saved = out / "config.yaml"
    # Until a checkpoint exists nothing was trained: a corrected config (after a late error) simply replaces it.
    if saved.exists() and (out / "checkpoint").exists():
        before = read_as_today(
            type(config), flat_keys(upgraded(type(config), read_yaml(saved, "run config", ConfigError) or {}))
        )
        before = {**settings_before_they_existed(before), **before}
        now = flat_keys(to_dict(config))
        # Keys the saved run lacks are options added by a later relkt: not a change of settings.
        growable = growable_keys(type(config))
        changed = sorted(k for k in before if _changed_on_resume(k, before.get(k), now.get(k), growable))
        if changed:
            raise ConfigError(
                f"{out} holds a run with other settings ({', '.join(changed[:6])}); re-run with the same "
                f"config to resume, or choose another output_dir"
            )
    if write:
        out.mkdir(parents=True, exist_ok=True)
        save_config(config, saved)
    return out


FINGERPRINTS = RUN_FINGERPRINTS


def check_fingerprints(out: Path, current: dict[str, dict]) -> None:
    """What a run was trained on (data files, teacher weights), recorded in `fingerprints.json` when it starts; a
    resumed run on other inputs (another $RELKT_DATA_DIR, another teacher at the same path) is refused, naming what
    changed. A run folder from before fingerprints records them on its next start."""
    path = out / FINGERPRINTS
    if path.exists():
        before = read_json(path, "fingerprints file")
        # A kind of input an older relkt did not record (pair files: `pairs/...`) is recorded now, not refused.
        recorded = {k.partition("/")[0] for k in before}
        new = {k: v for k, v in current.items() if k.partition("/")[0] not in recorded}
        # ... unless it was split: an older relkt split pair files by hashed lines, so its training pairs differ
        split = sorted(k for k, v in new.items() if "held_out" in v)
        if split:
            raise ConfigError(
                f"{out} was started by an older relkt that held out {split[0]}'s pairs by hashed lines; relkt now "
                f"holds out documents ({current[split[0]]['held_out']}), so its training pairs would differ: start "
                "it again in another output_dir"
            )
        # A data file recorded but no longer read (a folder fingerprinted whole by an older relkt) changes nothing.
        keys = (current.keys() - new.keys()) | {k for k in before if not k.startswith("data/")}
        changed = sorted(k for k in keys if before.get(k) != current.get(k))
        if changed:
            detail = "; ".join(f"{k}: {_short(before.get(k))} -> {_short(current.get(k))}" for k in changed[:4])
            split = [k for k in changed if _same_bytes(before.get(k), current.get(k))]
            why = (
                f"; {split[0]} is the same file split another way (held out: "
                f"{before[split[0]].get('held_out', 'hashed lines, relkt before held-out documents')}): its training "
                "pairs would differ, so start it again in another output_dir"
                if split
                else ""
            )
            raise ConfigError(
                f"{out} was trained on other inputs ({detail}){why}; resume it with the data and teacher it "
                f"started with, or choose another output_dir ({path} records them)"
            )
        if new:
            atomic_write_json(path, {**before, **new})
        return
    atomic_write_json(path, current)


def data_fingerprints(config: StageConfig) -> dict[str, dict]:
    """`data/{file}`: size and hash of each QA file the run reads (`languages_read`) of its training source."""
    source = train_source(config.data, download=False)
    langs = languages_read(config.data, config.eval) if source.format == "squad" else None
    return {
        f"data/{path.name}": file_fingerprint(path)
        for key, path in sorted(source.files().items())
        if langs is None or key in langs
    }


def _short(entry: dict | None) -> str:
    if entry is None:
        return "absent"
    digest = entry.get("sha256") or entry.get("weights_sha256") or ""
    held = f", held out: {entry['held_out']}" if "held_out" in entry else ""
    if "bytes" not in entry:
        return f"weights {digest[:12]}"
    return f"{entry['bytes']} bytes, sha256 {digest[:12]}{held}"


def _same_bytes(a: dict | None, b: dict | None) -> bool:
    """Two records of one file's bytes that differ only in how it was split."""
    return bool(a and b and "sha256" in a and a.get("sha256") == b.get("sha256"))


class RunLogHandler(logging.FileHandler):
    """`train.log`: a failed write (no space, file too large) stops the run with a WriteError naming the file, where
    logging's own handler would print a traceback for every later line and go on."""

    def handleError(self, record: logging.LogRecord) -> None:
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            raise WriteError(f"{self.baseFilename}: cannot write ({os_reason(error)})") from error
        super().handleError(record)


def log_to_file(out: Path) -> logging.Handler:
    """Copy relkt's log records to the run's train.log (INFO and up); the handler, to remove when the run ends."""
    with write_errors(out / "train.log", "open"):
        handler = RunLogHandler(out / "train.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.getLogger("relkt").addHandler(handler)
    logging.getLogger("relkt").setLevel(logging.INFO)
    return handler


def writes_run_folder(config: StageConfig) -> bool:
    """Whether this process writes the run folder: always, except the non-chief workers of a multi-worker run
    (they write scratch folders; see RunHarness), read off TF_CONFIG as tf.distribute reads it."""
    if config.distribute.strategy != "multi_worker":
        return True
    tf_config = json.loads(os.environ.get("TF_CONFIG") or "{}")
    task, cluster = tf_config.get("task", {}), tf_config.get("cluster", {})
    return task.get("type") == "chief" or (
        task.get("type") == "worker" and int(task.get("index", 0)) == 0 and "chief" not in cluster
    )


# The files of a run folder written in place (appended, locked, redrawn); everything else is swapped in whole.
IN_PLACE_FILES = ("train.log", "curves.png", ".lock")


def unshare_in_place_files(out: Path) -> None:
    """Give a run folder copied with hard links (`cp -al`, to train a copy on) its own copies of the files written in
    place, so training the copy never writes into the original; the swapped-in ones (checkpoints, exports, JSON)
    already part ways on their next write."""
    for name in IN_PLACE_FILES:
        path = Path(out) / name
        if path.is_file() and path.stat().st_nlink > 1:
            private = path.with_name(f".{name}.unshared")
            shutil.copy2(path, private)
            os.replace(private, path)


MARKER = RUN_MARKER


def claim_run_folder(out: Path) -> bool:
    """Refuse a folder relkt did not make, or one holding a link where its files go (`check_run_folder`); mark a new
    one as relkt's. Returns whether the folder was new (absent or empty): a run that fails before training leaves
    such a folder as it found it."""
    entries = check_run_folder(out)
    fresh = not entries
    out.mkdir(parents=True, exist_ok=True)
    if not (out / MARKER).exists():
        (out / MARKER).write_text("a relkt run folder\n", encoding="utf-8")
    return fresh


def _empty_again(out: Path) -> None:
    """Everything a refused run wrote into a folder that was new, gone; the folder itself only if relkt made it."""
    for p in out.iterdir():
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p, ignore_errors=True)
        else:
            p.unlink(missing_ok=True)


def record_data_dir(config: StageConfig) -> None:
    """Name the training source's folder in the config the run saves, when the config left it to $RELKT_DATA_DIR or
    the cache: a later shell (evaluate --config RUN, a resume, a report) finds the run's data without them."""
    data = getattr(config, "data", None)
    if data is not None and not getattr(data, "data_dir", None):
        data.data_dir = str(resolve_data_dir(None).resolve())


def finished_unbuilt(trainer_cls, config, out: Path) -> dict | None:
    """The summary of a run in `out` that has finished all the epochs `config` asks for (or stopped early), found from
    its files before anything is built, its inputs checked as a resumed run's are (`check_fingerprints`); None when
    that cannot be told so (the stage needs building for it, or the run is not plainly finished: the full path
    decides). A rerun of a finished recipe step then costs a second, not the data, model and BM25 set-up."""
    if not (hasattr(trainer_cls, "epochs_of") and hasattr(trainer_cls, "config_fingerprints")):  # not a Stage
        return None
    epochs, more = trainer_cls.epochs_of(config), trainer_cls.config_fingerprints(config)
    state_path, summary_path = out / "checkpoint" / "state.json", out / "summary.json"
    if epochs is None or more is None or not summary_path.is_file() or not state_path.is_file():
        return None
    state = read_json(state_path, "checkpoint state", CheckpointError)
    if not isinstance(state, dict) or not state.get("finished"):
        return None
    if not state.get("stopped_early") and state.get("epoch", 0) < epochs:  # asked to train on: the full path
        return None
    check_fingerprints(out, {**data_fingerprints(config), **more})
    log.info("%s: this run already finished (summary.json); nothing to do", out)
    return {**read_json(summary_path, "run summary"), "already_finished": True}


def run_trainer(trainer_cls, config, **given) -> dict:
    """Lock the run folder (one writer; what an interrupted run left is cleaned up), check and write its config,
    log into it, run `trainer_cls(config, **given)` (`given`: what the caller built already, handed to the stage);
    the precision policy is reset after."""

    writer = writes_run_folder(config)
    record_data_dir(config)
    if writer:  # first: a name no file system holds fails here, not in a stat below
        refuse_writing_into(config.output_dir, data_paths(config))
    existed = Path(config.output_dir).exists()
    fresh = claim_run_folder(Path(config.output_dir)) if writer else False
    if writer:
        unshare_in_place_files(Path(config.output_dir))
    lock = RunLock(config.output_dir) if writer else None
    started = False
    try:
        if lock is not None:
            lock.clean_debris()
        out = prepare_output_dir(config, write=writer)
        handler = log_to_file(out) if writer else None  # the other workers log to their own stderr
        try:
            done = finished_unbuilt(trainer_cls, config, out) if lock is not None else None
            if done is not None:
                started = True
                return done
            trainer = trainer_cls(config, **given)
            if lock is not None:
                check_fingerprints(out, {**data_fingerprints(config), **trainer.fingerprints()})
            started = True
            return trainer.run()
        finally:
            keras.mixed_precision.set_dtype_policy("float32")  # the precision policy is process-global
            if handler is not None:
                logging.getLogger("relkt").removeHandler(handler)
                handler.close()
    finally:
        if lock is not None:
            lock.release()
        if fresh and not started:  # refused or failed before training: the folder as it was found
            out_dir = Path(config.output_dir)
            if out_dir.is_dir():
                _empty_again(out_dir)
                if not existed:
                    out_dir.rmdir()
