"""The config reference is generated from the dataclasses: every key has a type, a default and a meaning, and
docs/config.md and the trainers' --help show exactly that."""

from pathlib import Path

import pytest

from relkt.config import StudentConfig, TeacherConfig
from relkt.config.reference import config_keys, reference_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"


@pytest.mark.parametrize("cls", [TeacherConfig, StudentConfig])
def test_every_key_has_a_type_default_and_meaning(cls):
    rows = config_keys(cls())
    assert len({key for key, *_ in rows}) == len(rows)
    assert not [key for key, _, _, meaning in rows if not meaning], "keys without a comment in relkt/config/"
    by_key = {key: (kind, default) for key, kind, default, _ in rows}
    assert by_key["distill.distance" if cls is StudentConfig else "mining.pick"][0] in (
        "squared_l2 | mean_squared | cosine",
        "random | hardest",
    )
    assert by_key["schedule.learning_rate"][1] == (
        "0.001" if cls is StudentConfig else "1e-05"
    )  # the stage's own default


def test_docs_config_md_is_current():
    assert DOC.read_text() == reference_markdown(), "regenerate: python -m relkt.config.reference > docs/config.md"


def test_trainer_help_lists_the_config_keys(capsys):
    from relkt.cli import train_student

    with pytest.raises(SystemExit):
        train_student.main(["--help"])
    out = capsys.readouterr().out
    assert "usage: python -m relkt.train_student" in out
    assert "distill.gamma" in out and "beta (of ||T(q_en) - S(q_x)||^2)" in out and "docs/config.md" in out
