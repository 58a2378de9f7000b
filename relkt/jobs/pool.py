"""Which pool a job scores: a `PoolRequest`'s fields over a run's own settings over `PoolSection`'s defaults, read in
this one place (the scoring, coverage and interpolation jobs, and `relkt evaluate --config RUN`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from relkt.config import PoolSection, read_config_file
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.qa_format import check_format_name
from relkt.data.qa_source import check_run_files
from relkt.data.selection import load_split
from relkt.errors import ConfigError
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
    for key in ("format", "test_format"):
        check_format_name(getattr(settings, key), f"data.{key}")
    if request.config and request.data_dir is None and settings.data_dir is not None:
        check_run_files(Path(request.config).parent, settings.data_dir, settings.format)
    return settings


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
