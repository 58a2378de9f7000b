"""Every shipped config is a user's entry point: it must load with its stage's config class (unknown keys, bad
values and broken cross-checks are errors) and say at its top which command runs it."""

import re
from pathlib import Path

import pytest

from relkt.config import StudentConfig, TeacherConfig, load_config

CONFIGS = sorted((Path(__file__).resolve().parents[1] / "configs").glob("*.yaml"))
COMMAND = re.compile(r"^#\s+(python -m relkt\.train_(teacher|student)|bash trainers/|python trainers/)")


def test_the_configs_are_found():
    assert len(CONFIGS) >= 10 and any(p.name == "xquad_muse_guarded_student.yaml" for p in CONFIGS)


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_config_loads_and_names_its_command(path):
    cls = StudentConfig if "student" in path.stem else TeacherConfig
    config = load_config(cls, path)
    assert config.output_dir.startswith("runs/"), "a run folder under runs/, never a shared or absolute path"
    header = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        header.append(line)
    assert any(COMMAND.match(line) for line in header), f"{path.name}: no command in its header comment"
