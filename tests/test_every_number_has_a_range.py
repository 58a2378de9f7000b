"""Every number a stage config or an API job's request holds is refused out of its range: walked over every numeric
field of both stages' configs and of every request class, so a setting added next month without a range fails here,
not silently in a run (`eval.max_questions=-5` once meant every question, `schedule.early_stop_patience=-5` never
stopping, `CoverageRequest(top_k=-5)` got past the request)."""

from __future__ import annotations

import dataclasses
import typing

import pytest
import yaml

from relkt.config.config_io import load_config
from relkt.config.student_config import StudentConfig
from relkt.config.teacher_config import TeacherConfig
from relkt.errors import ConfigError
from relkt.jobs import requests

BASES = {
    TeacherConfig: {"data": {"train_langs": ["en"], "answer_langs": ["en"]}, "encoder": {"spec": "ngram"}},
    StudentConfig: {"data": {"student_langs": ["de"]}, "teacher": {"spec": "ngram"}},
}


def numeric_keys(cls: type, prefix: str = "") -> list[str]:
    """Every int or float field, sections walked into, by its dotted key."""
    hints = typing.get_type_hints(cls)
    keys = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if dataclasses.is_dataclass(hint):
            keys += numeric_keys(hint, f"{prefix}{f.name}.")
        elif hint in (int, float) or set(typing.get_args(hint)) in ({int, type(None)}, {float, type(None)}):
            keys.append(prefix + f.name)
    return keys


CASES = [(cls, key) for cls in BASES for key in numeric_keys(cls)]


def test_the_walk_finds_the_numbers_it_is_about():
    keys = {key for _, key in CASES}
    assert {"eval.max_questions", "schedule.early_stop_patience", "seed", "distill.gamma"} <= keys
    assert len(CASES) > 40


@pytest.mark.parametrize("cls,key", CASES, ids=[f"{cls.__name__}:{key}" for cls, key in CASES])
def test_a_negative_number_is_refused_naming_its_key(tmp_path, cls, key):
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump({"output_dir": str(tmp_path / "run"), **BASES[cls]}))
    load_config(cls, path, [])  # the base loads
    with pytest.raises(ConfigError) as e:
        load_config(cls, path, [f"{key}=-5"])
    assert key.split(".")[-1] in str(e.value)


REQUESTS = [
    cls
    for cls in vars(requests).values()
    if isinstance(cls, type) and issubclass(cls, requests.Checked) and dataclasses.is_dataclass(cls)
]
REQUEST_CASES = [(cls, key) for cls in REQUESTS for key in numeric_keys(cls)]


def test_the_walk_finds_every_request():
    assert {requests.CoverageRequest, requests.InterpolateRequest, requests.TeachRequest} <= set(REQUESTS)
    assert ("CoverageRequest", "top_k") in {(cls.__name__, key) for cls, key in REQUEST_CASES}


@pytest.mark.parametrize("cls,key", REQUEST_CASES, ids=[f"{cls.__name__}:{key}" for cls, key in REQUEST_CASES])
def test_a_request_with_a_negative_number_is_refused_naming_its_field(cls, key):
    cls()  # the defaults pass
    with pytest.raises(ConfigError, match=rf"{cls.__name__}\.{key}: -5 is out of range"):
        cls(**{key: -5})
