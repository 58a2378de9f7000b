"""Every shipped config is a user's entry point: it must load with its stage's config class (unknown keys, bad
values and broken cross-checks are errors), say at its top what it changes and which command runs it, and resolve
to exactly what it held before configs became bases plus differences (tests/config/configs_before_base/ keeps
those files as they were; settings added since read as the runs of that time trained)."""

import re
from pathlib import Path

import pytest
import yaml

from relkt.config import StudentConfig, TeacherConfig, load_config, to_dict
from relkt.training.run_folder import flat_keys, settings_before_they_existed

ROOT = Path(__file__).resolve().parents[1]
SETUPS = "setups.yaml"  # the list of setups (trainers/setups.py), not a config
CONFIGS = sorted(p for p in (ROOT / "configs").glob("*.yaml") if p.name != SETUPS)
BEFORE = ROOT / "tests" / "config" / "configs_before_base"
COMMAND = re.compile(r"^#\s+(python -m relkt\.train_(teacher|student)|bash trainers/|python trainers/)")


def test_the_configs_are_found():
    assert len(CONFIGS) >= 10 and any(p.name == "xquad_muse_guarded_student.yaml" for p in CONFIGS)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_loads_and_names_its_command(path):
    config = load_config(config_class(path), path)
    assert config.output_dir.startswith("runs/"), "a run folder under runs/, never a shared or absolute path"
    header = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    assert any(COMMAND.match(line) for line in header), f"{path.name}: no command in its header comment"
    assert header and not COMMAND.match(header[0]), f"{path.name}: its first line says what it changes and why"


def config_class(path: Path):
    return StudentConfig if "student" in path.stem else TeacherConfig


@pytest.mark.parametrize("before", sorted(BEFORE.glob("*.yaml")), ids=lambda p: p.name)
def test_every_config_resolves_to_what_it_was_before_bases(before):
    now = ROOT / "configs" / before.name
    assert now.exists(), f"configs/{before.name} is gone: the same set of experiments must stay"
    cls = config_class(before)
    # Settings added since then read as the runs of that time trained (schedule.sparse_rows: dense, or lazy for
    # language rows), as a resumed run from then reads them.
    then = settings_before_they_existed(flat_keys(yaml.safe_load(before.read_text()) or {}))
    overrides = [f"{key}={value}" for key, value in then.items()]
    assert to_dict(load_config(cls, now)) == to_dict(load_config(cls, before, overrides))


def test_configs_stay_small():
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in (ROOT / "configs").iterdir())
    assert lines <= 450, f"configs/ holds {lines} lines: write a variant as its base plus what it changes"
