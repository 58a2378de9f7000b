"""Student groups: each language in one group, each group's student config its own languages and settings."""

import pytest

from relkt.config import StudentConfig, load_config
from relkt.config.student_groups import StudentGroup, group_of_language, read_student_groups
from relkt.errors import ConfigError


def test_groups_read_with_their_languages_and_settings():
    groups = read_student_groups(
        {"supported": {"langs": ["en", "de"]}, "other": {"langs": ["el"], "set": {"distill.beta": 1e-4}}}, "setups"
    )
    assert groups == (
        StudentGroup("supported", ("en", "de")),
        StudentGroup("other", ("el",), {"distill.beta": 1e-4}),
    )
    assert read_student_groups(None, "setups") == ()


def test_a_groups_overrides_make_its_student_config(tmp_path):
    """The source language is scored by its group but is no student language; dev reads the group's languages."""
    group = StudentGroup("other", ("en", "el", "hi"), {"distill.beta": 1e-4, "distill.document": "parallel"})
    config = load_config(StudentConfig, None, group.overrides("en", str(tmp_path / "run_other")))
    assert config.data.student_langs == ["el", "hi"]
    assert config.eval.langs == ["en", "el", "hi"] and config.eval.question_langs == ["en", "el", "hi"]
    assert config.output_dir == str(tmp_path / "run_other")
    assert config.distill.weights["beta"] == 1e-4 and config.distill.document == "parallel"
    # A group without the source language: dev scores its questions against its and the source's candidates.
    config = load_config(StudentConfig, None, StudentGroup("b", ("el",)).overrides("en", str(tmp_path / "b")))
    assert config.eval.langs == ["el", "en"] and config.eval.question_langs == ["el"]
    assert config.data.student_langs == ["el"] and config.output_dir == str(tmp_path / "b")
    # A training source of English questions alone (pairs teach the rest): dev questions are English, the group's
    # languages are read by the pair metric.
    config = load_config(StudentConfig, None, StudentGroup("b", ("el", "hi")).overrides("en", "runs/b", ["en"]))
    assert config.eval.langs == ["en"] and config.eval.question_langs == ["en"]
    assert config.data.student_langs == ["el", "hi"]


@pytest.mark.parametrize(
    "raw, message",
    [
        (
            {"a": {"langs": ["en", "de"]}, "b": {"langs": ["el", "de"]}},
            r"student_groups\.b: de is in two groups \(a and b\)",
        ),
        ({"a": {"langs": []}}, r"student_groups\.a\.langs: a non-empty list"),
        (
            {"a": {"langs": ["de"], "set": {"eval.langs": ["de"]}}},
            r"student_groups\.a\.set: eval\.langs is the group's",
        ),
        ({"a": {"langs": ["de"], "lr": 1}}, r"student_groups\.a: expected \{langs"),
        (["de"], "student_groups must map a group name"),
    ],
)
def test_a_bad_group_is_one_clear_error(raw, message):
    with pytest.raises(ConfigError, match=message):
        read_student_groups(raw, "configs/setups.yaml: setup x")


def test_every_scored_language_has_its_group():
    groups = read_student_groups({"a": {"langs": ["en", "de"]}, "b": {"langs": ["el"]}}, "setups")
    assert group_of_language(groups, ["de", "el", "en"], "x") == {"de": "a", "el": "b", "en": "a"}
    with pytest.raises(ConfigError, match=r"setup x: hi, vi is scored but in no student group \(a: en de; b: el\)"):
        group_of_language(groups, ["de", "hi", "vi"], "setup x")


def test_dev_question_languages_must_be_among_the_dev_languages():
    with pytest.raises(ConfigError, match=r"eval\.question_langs: hi not in eval\.langs \['el', 'en'\]"):
        load_config(StudentConfig, None, ["eval.langs=[el, en]", "eval.question_langs=[el, hi]"])
