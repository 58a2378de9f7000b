"""Shared fixtures: a tiny LAReQA-format dataset written by the tests themselves."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.helpers.data import ARTICLES, SHARED_DATA, make_synthetic_lareqa, squad_json

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


@pytest.fixture
def tiny_data(tmp_path: Path) -> Path:
    """A folder with en.json and de.json in the XQuAD-R layout."""
    root = tmp_path / "xquad-r"
    root.mkdir()
    for lang in ARTICLES:
        (root / f"{lang}.json").write_text(json.dumps(squad_json(lang)), encoding="utf-8")
    return root


@pytest.fixture
def shared_xquad_r() -> Path:
    path = SHARED_DATA / "xquad-r"
    if not (path / "en.json").exists():
        pytest.skip(f"XQuAD-R not found at {path} (the shared data folder beside the checkout)")
    return path


@pytest.fixture
def synthetic_data(tmp_path: Path) -> Path:
    return make_synthetic_lareqa(tmp_path / "synthetic")
