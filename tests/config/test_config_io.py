import pytest
import yaml

from relkt.config import StudentConfig, TeacherConfig, load_config, save_config, to_dict
from relkt.errors import ConfigError


def test_yaml_then_overrides(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("output_dir: out\ntriplet: {margin: 0.13}\nmining: {hard: 2}\n")
    c = load_config(
        TeacherConfig,
        path,
        ["triplet.margin=0.27", "data.train_langs=en,de", "schedule.learning_rate=1e-5", "smoke=true"],
    )
    assert c.output_dir == "out" and c.triplet.margin == 0.27 and c.mining.hard == 2
    assert c.data.train_langs == ["en", "de"] and c.schedule.learning_rate == 1e-5 and c.smoke is True


@pytest.mark.parametrize(
    "override, message",
    [
        ("triplet.distance=l1", "triplet.distance: 'l1' is not valid; valid: cosine, squared_l2"),
        ("triplet.nope=1", "triplet: unknown key(s) nope; valid: margin, distance, batch_size"),
        ("nope=1", "unknown key(s) nope; valid: output_dir, seed, smoke"),
        ("mining.hard=two", "mining.hard: expected an integer, got 'two'"),
        ("smoke=maybe", "smoke: expected true or false, got 'maybe'"),
        ("data.answer_unit=document", "valid: sentence, passage"),
        ("mining.bm25_top_end=0", "bm25_top_start < bm25_top_end"),
        ("data.split_fractions=[0.5,0.5,0.5]", "summing to 1"),
        ("novalue", "expected key=value"),
        (
            "eval.xx_en_units=[document]",
            "eval.xx_en_units: ['document'] are not units; valid: article, paragraph, sentence",
        ),
        ("eval.primary_metric=xx_en_article/P@1", "needs eval.xx_en_units to list 'article'"),
        ("eval.primary_metric=xx_en_chapter/P@1", "is not a metric the dev evaluation reports"),
    ],
)
def test_invalid_options_fail_listing_valid_ones(override, message):
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        load_config(TeacherConfig, None, [override])


@pytest.mark.parametrize("value", ["-1", ".nan", ".inf"])
def test_language_rows_ratio_must_be_finite_and_not_negative(value):
    with pytest.raises(ConfigError, match="student.language_rows.min_own_ratio must be a finite number >= 0"):
        load_config(StudentConfig, None, [f"student.language_rows.min_own_ratio={value}"])
    assert (
        load_config(StudentConfig, None, ["student.language_rows.min_own_ratio=2"]).student.language_rows.min_own_ratio
        == 2.0
    )


def test_missing_and_malformed_files_are_named(tmp_path):
    with pytest.raises(ConfigError, match="nope.yaml: config file not found"):
        load_config(TeacherConfig, tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("triplet: [unclosed\n")
    with pytest.raises(ConfigError, match="bad.yaml: malformed YAML"):
        load_config(TeacherConfig, bad)


def test_saved_config_round_trips(tmp_path):
    c = load_config(TeacherConfig, None, ["mining.online_epochs=2", "encoder.options={dim: 16}"])
    save_config(c, tmp_path / "config.yaml")
    again = load_config(TeacherConfig, tmp_path / "config.yaml")
    assert to_dict(again) == to_dict(c) and again.encoder.options == {"dim": 16}
    assert yaml.safe_load((tmp_path / "config.yaml").read_text())["mining"]["online_epochs"] == 2


def test_every_shipped_config_loads():
    from pathlib import Path

    configs = sorted((Path(__file__).resolve().parents[2] / "configs").glob("*teacher*.yaml")) + [
        Path(__file__).resolve().parents[2] / "configs" / "quickstart.yaml"
    ]
    assert len(configs) >= 3
    for path in configs:
        assert path.read_text().startswith("#"), f"{path} should say at its top the command that runs it"
        load_config(TeacherConfig, path)
    from relkt.config import StudentConfig

    students = sorted((Path(__file__).resolve().parents[2] / "configs").glob("*student*.yaml"))
    assert len(students) >= 3
    for path in students:
        assert path.read_text().startswith("#"), f"{path} should say at its top the command that runs it"
        load_config(StudentConfig, path)


@pytest.mark.parametrize(
    "override, message",
    [
        ("student.extend_vocab.pieces=-1", "student.extend_vocab.pieces must be >= 0 (0 = single characters), got -1"),
        ("student.extend_vocab.min_count=0", "student.extend_vocab.min_count must be >= 1, got 0"),
        ("student.extend_vocab.init=zeros", "valid: random, mean, unk, compose"),
        ("student.extend_vocab.piece_scripts=[Greek]", "keeps learned pieces: set student.extend_vocab.pieces > 0"),
    ],
)
def test_invalid_student_vocabulary_options_fail_at_once(override, message):
    from relkt.config import StudentConfig

    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_config(StudentConfig, None, [override])


def test_the_configs_xx_en_units_are_the_data_packages():
    # config imports no data code, so it keeps its own copy of the unit names; they must not drift apart.
    from relkt.config.sections import XX_EN_UNITS
    from relkt.data.english_answer_units import UNITS

    assert XX_EN_UNITS == UNITS
