"""A scored model's committed record: a small JSON file under docs/results/records/ that outlives the run folder and
the machine. It keeps what a chapter and a later comparison need: the setup, the command, the commit, the config and
data fingerprints, every headline metric with its 95% CI, and each question's key and scores packed (AP quantised to
1/65534, hits as bits), so `trainers/compare.py RECORD RECORD` and `api.compare` give deltas with CIs and McNemar
between two models whose run folders are gone.

    from relkt.jobs.record import make_record, write_record, read_record
    record = make_record(results, per_question, setup="lareqa_muse", model="student", pool="xquad-r", ...)
    write_record("docs/results/records/lareqa_muse/student_xquad-r.json", record)
    results, per_question = read_record("docs/results/records/lareqa_muse/student_xquad-r.json")
"""

from __future__ import annotations

import base64
import hashlib
import os
import platform
import shlex
import subprocess
import time
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from relkt.errors import DataError
from relkt.io import atomic_write_text, claim_file, json_text, read_bytes, read_json

RECORD_FORMAT = "relkt-record/1"
RECORDS_DIR = Path("docs/results/records")
MAX_RECORD_BYTES = 200_000
AP_LEVELS = 65534  # AP quantised to k / AP_LEVELS; AP_LEVELS + 1 marks a question without gold (NaN)
BOOTSTRAP = 1000
# The results blocks a record keeps (what `comparison` reads side by side); per-question arrays travel packed.
KEPT_BLOCKS = ("lareqa", "xx_en", "xx_en_article", "xx_en_paragraph", "xx_en_sentence", "bitext", "rank_adjust")


def _pack(raw: bytes) -> str:
    return base64.b64encode(zlib.compress(raw, 9)).decode("ascii")


def _unpack(text: str, where: str) -> bytes:
    try:
        return zlib.decompress(base64.b64decode(text.encode("ascii"), validate=True))
    except (ValueError, zlib.error) as e:
        raise DataError(f"{where}: not a packed array of a relkt record ({e})") from None


def pack_array(name: str, values: np.ndarray) -> dict:
    """One per-question array packed: AP as 16-bit levels, 0/1/NaN hits as bits with a NaN mask, ids as text."""
    values = np.asarray(values)
    if values.dtype.kind in "US":
        return {"kind": "text", "data": _pack("\n".join(values.astype(str).tolist()).encode("utf-8"))}
    values = values.astype(np.float64)
    missing = ~np.isfinite(values)
    if name == "AP":
        levels = np.where(missing, AP_LEVELS + 1, np.rint(np.clip(np.nan_to_num(values), 0, 1) * AP_LEVELS))
        return {"kind": "ap16", "data": _pack(levels.astype("<u2").tobytes())}
    if not np.all(np.isin(values[~missing], (0.0, 1.0))):
        raise DataError(f"per-question {name}: a record packs hits (0 or 1); it holds other values")
    out = {"kind": "bits", "data": _pack(np.packbits(values == 1).tobytes())}
    if missing.any():
        out["missing"] = _pack(np.packbits(missing).tobytes())
    return out


def unpack_array(packed: Mapping, n: int, where: str) -> np.ndarray:
    """`pack_array`'s inverse for `n` questions (AP back as floats within 1/65534)."""
    kind = packed.get("kind") if isinstance(packed, Mapping) else None
    if kind == "text":
        rows = _unpack(packed["data"], where).decode("utf-8").split("\n") if n else []
        if len(rows) != n:
            raise DataError(f"{where}: {len(rows)} rows where the record has {n} questions")
        return np.array(rows, dtype=str)
    if kind == "ap16":
        levels = np.frombuffer(_unpack(packed["data"], where), dtype="<u2").astype(np.float64)
        if len(levels) != n:
            raise DataError(f"{where}: {len(levels)} values where the record has {n} questions")
        return np.where(levels > AP_LEVELS, np.nan, levels / AP_LEVELS)
    if kind == "bits":
        hits = np.unpackbits(np.frombuffer(_unpack(packed["data"], where), dtype=np.uint8))[:n].astype(np.float64)
        if "missing" in packed:
            missing = np.unpackbits(np.frombuffer(_unpack(packed["missing"], where), dtype=np.uint8))[:n]
            hits[missing.astype(bool)] = np.nan
        return hits
    raise DataError(f"{where}: unknown packed kind {kind!r} (text, ap16 or bits)")


def headline_metrics(per_question: Mapping[str, np.ndarray], seed: int = 0) -> dict[str, dict]:
    """Pool mAP and each language's, XX->EN article (else pool) P@1 per language and their mean over the
    non-English languages, each with its 95% percentile-bootstrap CI over questions (resampled within a language)."""
    rng = np.random.default_rng(seed)
    langs = np.asarray(per_question["lang"]).astype(str)
    out: dict[str, dict] = {}

    def interval(values: np.ndarray) -> dict:
        values = values[np.isfinite(values)]
        if not len(values):
            return {}
        boots = values[rng.integers(0, len(values), size=(BOOTSTRAP, len(values)))].mean(axis=1)
        low, high = np.quantile(boots, [0.025, 0.975])
        return {"value": float(values.mean()), "low": float(low), "high": float(high), "n": int(len(values))}

    ap = np.asarray(per_question["AP"], np.float64)
    out["lareqa/mAP"] = interval(ap)
    for lang in sorted(set(langs)):
        out[f"lareqa/{lang}/mAP"] = interval(ap[langs == lang])
    unit = next((k for k in ("xx_en_article_hit1", "xx_en_hit1") if k in per_question), None)
    if unit is not None:
        prefix = unit[: -len("_hit1")]
        hits = np.asarray(per_question[unit], np.float64)
        others = [lang for lang in sorted(set(langs)) if lang != "en" and np.isfinite(hits[langs == lang]).any()]
        for lang in sorted(set(langs)):
            block = interval(hits[langs == lang])
            if block:
                out[f"{prefix}/{lang}/P@1"] = block
        if others:
            groups = [hits[(langs == lang) & np.isfinite(hits)] for lang in others]
            boots = np.mean([g[rng.integers(0, len(g), size=(BOOTSTRAP, len(g)))].mean(axis=1) for g in groups], 0)
            low, high = np.quantile(boots, [0.025, 0.975])
            out[f"{prefix}/P@1"] = {
                "value": float(np.mean([g.mean() for g in groups])),
                "low": float(low),
                "high": float(high),
                "n": int(sum(len(g) for g in groups)),
                "langs": others,
            }
    return {k: v for k, v in out.items() if v}


def data_fingerprint(source: str | Path) -> dict:
    """sha256 over a data file's or folder's files (names and bytes, sorted): which data a record was scored on."""
    source = Path(source)
    files = sorted(p for p in source.rglob("*") if p.is_file()) if source.is_dir() else [source]
    h = hashlib.sha256()
    for path in files:
        h.update(path.relative_to(source).as_posix().encode() if source.is_dir() else path.name.encode())
        h.update(b"\0")
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    return {"path": str(source), "files": len(files), "sha256": h.hexdigest()}


def current_commit(folder: str | Path = ".") -> str | None:
    """The checkout's commit (None outside a git checkout or without git)."""
    try:
        done = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None


def config_hash(model: str) -> dict | None:
    """The sha256 of the config a model's run saved (`RUN/config.yaml` beside `RUN/best`), when there is one."""
    folder = Path(model.partition(":")[2] or model)
    for config in (folder.parent / "config.yaml", folder / "config.yaml"):
        if config.is_file():
            return {"path": str(config), "sha256": hashlib.sha256(read_bytes(config, "run config")).hexdigest()}
    return None


def make_record(
    results: Mapping[str, Any],
    per_question: Mapping[str, np.ndarray],
    *,
    setup: str,
    model: str,
    pool: str,
    chapter: str,
    command: str,
    commit: str | None = None,
    train_seconds: float | None = None,
) -> dict:
    """The record of one model scored on one pool (`results` and `per_question` as `relkt.jobs.scoring` writes
    them). `chapter` is the docs page that reads it; `command` the line that scored it."""
    for name, value in (("setup", setup), ("model", model), ("pool", pool), ("chapter", chapter)):
        if not isinstance(value, str) or not value or "/" in value and name != "chapter":
            raise DataError(f"record {name}: a plain name, got {value!r}")
    n = len(per_question.get("qas_id", ()))
    if not n or any(len(v) != n for v in per_question.values()):
        raise DataError("record: per-question arrays of unequal length (or none): score the model again")
    setup_block = dict(results.get("setup") or {})
    keys = [k for k in per_question if k not in ("qas_id", "lang")]
    record = {
        "format": RECORD_FORMAT,
        "setup": setup,
        "model": model,
        "pool": pool,
        "chapter": chapter,
        "command": command,
        "commit": commit if commit is not None else current_commit(),
        "encoder": setup_block.get("encoder"),
        "config": config_hash(str(setup_block.get("encoder") or "")),
        "data": data_fingerprint(setup_block["source"]) if setup_block.get("source") else None,
        "time": {
            "recorded": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "encode_seconds": setup_block.get("encode_seconds"),
            "score_seconds": setup_block.get("score_seconds"),
            "train_seconds": train_seconds,
        },
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()},
        "metrics": headline_metrics(per_question),
        "results": {k: results[k] for k in KEPT_BLOCKS if k in results} | {"setup": setup_block},
        "per_question": {
            "n": n,
            "qas_id": pack_array("qas_id", per_question["qas_id"]),
            "lang": pack_array("lang", per_question["lang"]),
            **{k: pack_array(k, per_question[k]) for k in keys},
        },
    }
    record["per_question"]["key_sha256"] = question_key(per_question)
    return record


def question_key(per_question: Mapping[str, np.ndarray]) -> str:
    """The sha256 of the ordered (qas_id, lang) list: two records over the same questions share it."""
    rows = np.char.add(
        np.char.add(np.asarray(per_question["qas_id"]).astype(str), "\t"), np.asarray(per_question["lang"]).astype(str)
    )
    return hashlib.sha256("\n".join(rows.tolist()).encode("utf-8")).hexdigest()


def is_record_file(path: Path) -> bool:
    """Whether `path` holds a record relkt wrote (a JSON object whose `format` is RECORD_FORMAT)."""
    try:
        return read_json(path, "record").get("format") == RECORD_FORMAT
    except (OSError, ValueError, AttributeError):
        return False


def write_record(path: str | Path, record: Mapping) -> Path:
    """`record` at `path`, atomically, under relkt's write rule (a new file or a record relkt wrote); a DataError
    when it would pass MAX_RECORD_BYTES."""
    text = json_text(record)
    if len(text.encode("utf-8")) > MAX_RECORD_BYTES:
        raise DataError(f"{path}: the record would be {len(text.encode()):,} bytes (at most {MAX_RECORD_BYTES:,})")
    path = claim_file(path, is_record_file, "record")
    return atomic_write_text(path, text)


def load_record(path: str | Path) -> dict:
    """The record at `path` as written; a DataError naming the file when it is none."""
    record = read_json(path, "record")
    if not isinstance(record, dict) or record.get("format") != RECORD_FORMAT:
        raise DataError(f"{path}: not a relkt record (format {RECORD_FORMAT!r})")
    for field in ("setup", "model", "pool", "metrics", "results", "per_question"):
        if field not in record:
            raise DataError(f"{path}: field {field!r} missing from the record")
    return record


def read_record(path: str | Path) -> tuple[dict, dict[str, np.ndarray]]:
    """A record's results blocks and its per-question arrays, unpacked (what a results file and its
    `.per_question.npz` give)."""
    record = load_record(path)
    packed = record["per_question"]
    n = packed.get("n")
    if not isinstance(n, int) or n < 1:
        raise DataError(f"{path}: field 'per_question.n' must be a count >= 1")
    arrays = {
        k: unpack_array(v, n, f"{path}: per_question.{k}")
        for k, v in packed.items()
        if k not in ("n", "key_sha256") and isinstance(v, dict)
    }
    if "key_sha256" in packed and question_key(arrays) != packed["key_sha256"]:
        raise DataError(f"{path}: its per-question keys do not match its key_sha256 (the file was edited)")
    return dict(record["results"]), arrays


def record_path(setup: str, model: str, pool: str, root: str | Path = RECORDS_DIR) -> Path:
    """Where a setup's model's record on a pool lives: `docs/results/records/SETUP/MODEL_POOL.json`."""
    return Path(root) / setup / f"{model}_{pool}.json"


def all_records(root: str | Path = RECORDS_DIR) -> list[dict]:
    """Every record under `root`, each with its `path`, in path order."""
    return [{**load_record(p), "path": p.as_posix()} for p in sorted(Path(root).glob("*/*.json"))]


def scoring_command(results: Mapping[str, Any]) -> str:
    """The `relkt evaluate` line that scored the model its results name (as the results recorded it), else one that
    scores it on the same pool."""
    setup = results.get("setup") or {}
    if setup.get("command"):
        return str(setup["command"])
    argv = ["relkt", "evaluate", "--encoder", str(setup.get("encoder")), "--data-dir", str(setup.get("source"))]
    argv += ["--split", str(setup.get("split", "test"))]
    if setup.get("langs"):
        argv += ["--langs", ",".join(setup["langs"])]
    units = [u for u in setup.get("xx_en_units", {}) if not u.startswith("scored_")]
    if units:
        argv += ["--xx-en-unit", ",".join(units)]
    if results.get("rank_adjust"):
        argv += [
            "--rank-adjust",
            "auto" if results["rank_adjust"].get("mode") != "fixed" else results["rank_adjust"]["chosen"],
        ]
    return shlex.join(argv)


def record_results(
    results_path: str | Path,
    *,
    setup: str,
    model: str,
    pool: str,
    chapter: str,
    output: str | Path | None = None,
    train_seconds: float | None = None,
) -> tuple[Path, dict]:
    """A results file of relkt evaluate (its per-question file beside it) kept as a record at `output` (default:
    `record_path`); the path and the record."""
    from relkt.jobs.scoring import read_per_question, read_results_file  # deferred: scoring reads this module's kin

    results = read_results_file(results_path)
    record = make_record(
        results,
        read_per_question(results_path),
        setup=setup,
        model=model,
        pool=pool,
        chapter=chapter,
        command=scoring_command(results),
        train_seconds=train_seconds,
    )
    return write_record(output or record_path(setup, model, pool), record), record
