"""Which pool a job scores: a `PoolRequest`'s fields over a run's own settings over `PoolSection`'s defaults, read in
this one place (the scoring, coverage and interpolation jobs, and `relkt evaluate --config RUN`)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

from relkt.config import PoolSection, read_config_file
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.qa_format import check_format_name
from relkt.data.qa_source import QaSource
from relkt.data.selection import load_split
from relkt.errors import ConfigError, DataError
from relkt.io import file_fingerprint
from relkt.jobs.requests import PoolRequest

POOL_FIELDS = tuple(f.name for f in dataclasses.fields(PoolSection))


def run_data(config: str | Path) -> dict[str, Any]:
    """The `data` section of a run folder's config.yaml; a ConfigError naming the file when it has none."""
    try:
        data = read_config_file(config).get("data")
    except ConfigError as e:
        raise ConfigError(f"PoolRequest.config {config}: cannot read it ({e})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"PoolRequest.config {config}: no `data` section; pass a run folder's config.yaml")
    return data


def pool_settings(request: PoolRequest) -> PoolSection:
    """The pool settings of `request`: its fields where given, else its `config` run's, else the defaults;
    validated, formats checked (before TensorFlow loads)."""
    run = run_data(request.config) if request.config else {}
    settings = PoolSection(**{k: v for k, v in run.items() if k in POOL_FIELDS})
    for name in POOL_FIELDS:
        value = getattr(request, name, None)
        if name == "with_context":
            value = True if request.with_context else None
        if value is not None:
            setattr(settings, name, list(value) if name == "split_fractions" else value)
    if (request.test_dir or request.more_test) and request.split != "test":
        raise ConfigError(
            f"PoolRequest.test_dir {request.test_dir} is scored as the test split, not PoolRequest.split "
            f"{request.split}; dev and train come from the training source (drop PoolRequest.test_dir, or score the "
            "test split)"
        )
    settings.validate()
    check_formats(settings)
    if request.config and request.data_dir is None:
        check_run_data(Path(request.config), settings)
    return settings


def check_run_data(config: Path, settings: PoolSection) -> None:
    """A run scored on its own data: each QA file its `fingerprints.json` recorded must be the file read now, as a
    resumed run requires; a changed one is a DataError naming it."""
    recorded_path = config.parent / "fingerprints.json"
    if not recorded_path.is_file() or settings.data_dir is None:
        return
    recorded = json.loads(recorded_path.read_text(encoding="utf-8"))
    files = {f"data/{path.name}": path for path in QaSource.open(settings.data_dir, settings.format).files().values()}
    for key, before in sorted(recorded.items()):
        if key.startswith("data/") and key in files and file_fingerprint(files[key]) != before:
            raise DataError(
                f"{files[key]}: changed since the run {config.parent} trained on it ({recorded_path} records "
                f"{before.get('bytes')} bytes, sha256 {str(before.get('sha256'))[:12]}); its split would not be the "
                "one it trained with: score it on the data it trained on, or name data_dir to score other data"
            )


def run_pool(config: str | Path) -> PoolSection:
    """The pool settings of a run folder's config.yaml (data source, split, unit, folds, candidate text)."""
    return pool_settings(PoolRequest(config=str(config)))


def check_formats(data: PoolSection) -> None:
    """`data.format` and `data.test_format` are `auto` or registered formats: answered before TensorFlow loads."""
    for key in ("format", "test_format"):
        check_format_name(getattr(data, key), f"data.{key}")


def load_pool(request: PoolRequest, settings: PoolSection | None = None) -> LareqaPool:
    """The LareqaPool `request` names (`settings`: its `pool_settings`, when the caller has them already)."""
    return load_split(settings or pool_settings(request), request.split, langs=request.langs)
