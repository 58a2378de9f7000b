import pytest
import yaml

from relkt.config import StudentConfig, TeacherConfig, load_config, save_config, to_dict
from relkt.config.config_io import with_overrides
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
    with pytest.raises(
        ConfigError,
        match=r"student.language_rows.min_own_ratio(: \S+)? (must be a finite number >= 0|is not a finite number)",
    ):
        load_config(StudentConfig, None, [f"student.language_rows.min_own_ratio={value}"])
    assert (
        load_config(StudentConfig, None, ["student.language_rows.min_own_ratio=2"]).student.language_rows.min_own_ratio
        == 2.0
    )


@pytest.mark.parametrize("value", ["-0.5", ".nan", ".inf"])
def test_language_rows_rest_rate_must_be_finite_and_not_negative(value):
    with pytest.raises(
        ConfigError,
        match=r"student.language_rows.rest_lr_multiplier(: \S+)? (must be a finite number >= 0|is not a finite number)",
    ):
        load_config(StudentConfig, None, [f"student.language_rows.rest_lr_multiplier={value}"])
    rows = load_config(StudentConfig, None, ["student.language_rows.rest_lr_multiplier=0.01"]).student.language_rows
    assert rows.rest_lr_multiplier == 0.01


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


def test_a_config_holds_only_what_it_changes_from_its_base(tmp_path):
    # root: the paper's margin and epochs; mid: changes the margin and adds a mining key; leaf: changes the
    # output and one of root's list values. Sections merge key by key, lists are replaced whole.
    (tmp_path / "root.yaml").write_text(
        "output_dir: runs/root\ntriplet: {margin: 0.3, batch_size: 8}\ndata: {train_langs: [en, de]}\n"
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mid.yaml").write_text("base: ../root.yaml\ntriplet: {margin: 0.1}\nmining: {hard: 2}\n")
    (tmp_path / "sub" / "leaf.yaml").write_text("base: mid.yaml\noutput_dir: runs/leaf\ndata: {train_langs: [ar]}\n")
    c = load_config(TeacherConfig, tmp_path / "sub" / "leaf.yaml", ["mining.semi_hard=3"])
    assert c.output_dir == "runs/leaf" and c.triplet.margin == 0.1 and c.triplet.batch_size == 8
    assert c.mining.hard == 2 and c.mining.semi_hard == 3 and c.data.train_langs == ["ar"]
    # what a run folder stores is the resolved config: no `base`, every key
    save_config(c, tmp_path / "run" / "config.yaml")
    saved = yaml.safe_load((tmp_path / "run" / "config.yaml").read_text())
    assert "base" not in saved and saved["triplet"]["batch_size"] == 8
    assert to_dict(load_config(TeacherConfig, tmp_path / "run" / "config.yaml")) == to_dict(c)


def test_a_missing_base_or_a_cycle_names_the_file(tmp_path):
    (tmp_path / "a.yaml").write_text("base: gone.yaml\n")
    with pytest.raises(ConfigError, match=r"gone.yaml: config file not found \(named as base by .*a.yaml\)"):
        load_config(TeacherConfig, tmp_path / "a.yaml")
    (tmp_path / "b.yaml").write_text("base: c.yaml\n")
    (tmp_path / "c.yaml").write_text("base: b.yaml\n")
    with pytest.raises(ConfigError, match="base: cycle"):
        load_config(TeacherConfig, tmp_path / "b.yaml")
    (tmp_path / "d.yaml").write_text("base: [a.yaml]\n")
    with pytest.raises(ConfigError, match="d.yaml: base: expected a YAML file name"):
        load_config(TeacherConfig, tmp_path / "d.yaml")


def test_print_config_prints_the_resolved_config_without_training(tmp_path, capsys):
    from relkt.train_student import main

    (tmp_path / "root.yaml").write_text("output_dir: runs/s\ndistill: {beta: 0.5}\n")
    (tmp_path / "leaf.yaml").write_text("base: root.yaml\ndistill: {epochs: 3}\n")
    assert main(["--config", str(tmp_path / "leaf.yaml"), "--set", "distill.omega=2", "--print-config"]) == 0
    printed = yaml.safe_load(capsys.readouterr().out)
    # The older distill.beta / distill.omega keys load (and --set) as entries of the one channel, distill.weights.
    assert (
        printed["distill"]["weights"] == {"beta": 0.5, "lam": 1.0, "omega": 2.0} and printed["distill"]["epochs"] == 3
    )
    assert "base" not in printed and printed["schedule"]["learning_rate"] == 1e-3  # defaults filled in
    assert not (tmp_path / "runs").exists() and not __import__("pathlib").Path("runs/s").exists()


@pytest.mark.parametrize(
    "override, message",
    [
        ("student.extend_vocab.pieces=-1", "student.extend_vocab.pieces must be >= 0 (0 = single characters), got -1"),
        ("student.extend_vocab.min_count=0", "student.extend_vocab.min_count must be >= 1, got 0"),
        ("student.extend_vocab.init=zeros", "valid: random, mean, unk, compose"),
        ("student.extend_vocab.piece_scripts=[Greek]", "keeps learned pieces: set student.extend_vocab.pieces > 0"),
        ("student.extend_vocab.piece_chars=ơư", "keeps learned pieces: set student.extend_vocab.pieces > 0"),
        ("student.extend_vocab={pieces: 10, piece_chars: 'ơ ư'}", "list letters only, no spaces"),
        ("distill.weights={keep_en: abc}", "distill.weights.keep_en: expected a number, got 'abc'"),
        ("distill.weights={keep_en: -1}", "distill.weights.keep_en must be a finite number >= 0, got -1.0"),
        ("distill.objective=q+", "distill.objective: '\\+'-joined loss-term names"),
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


def test_a_run_folder_config_saved_before_loss_term_weights_still_loads(tmp_path):
    # What a run folder held before `distill.weights` existed, and before the paper's three weights moved into it:
    # every key of its day, no `base`.
    saved = to_dict(StudentConfig())
    del saved["distill"]["weights"]
    saved["distill"].update(objective="q+d", beta=0.5, lam=1.0, omega=0.01)
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(saved))
    c = load_config(StudentConfig, tmp_path / "config.yaml")
    assert c.distill.objective == "q+d" and c.distill.weights == {"beta": 0.5, "lam": 1.0, "omega": 0.01}
    # A run folder holding that config and a checkpoint resumes under today's form of the same settings.
    from relkt.training.run_folder import prepare_output_dir

    run = tmp_path / "run"
    (run / "checkpoint").mkdir(parents=True)
    (run / "config.yaml").write_text(yaml.safe_dump({**saved, "output_dir": str(run)}))
    same = with_overrides(c, [f"output_dir={run}"])
    assert prepare_output_dir(same) == run
    with pytest.raises(ConfigError, match=r"other settings \(distill.weights.beta\)"):
        prepare_output_dir(with_overrides(same, ["distill.weights.beta=0.25"]))


def test_a_set_value_that_is_not_yaml_is_one_line_naming_it(capsys):
    with pytest.raises(ConfigError, match=r"--set 'data.train_langs=\[en': the value is not valid YAML"):
        with_overrides(TeacherConfig(), ["data.train_langs=[en"])
    from relkt.train_teacher import main

    assert main(["--set", "data.train_langs=[en", "--print-config"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --set 'data.train_langs=[en'") and "Traceback" not in err


@pytest.mark.parametrize(
    "text, message",
    [
        ("seed: 1\nseed: 2\n", r"malformed YAML: key 'seed' appears twice \(first on line 1\) \(line 2, column 1\)$"),
        ("a: [1, 2\nb: 3\n", r"malformed YAML: while parsing a flow sequence: expected ',' or '\]', but got ':'"),
    ],
)
def test_malformed_yaml_is_one_line_with_its_place(tmp_path, text, message):
    from relkt.config.config_io import read_config_file

    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=message) as error:
        read_config_file(path)
    assert "\n" not in str(error.value)


def test_smoke_runs_in_a_folder_of_its_own_beside_the_configured_one(tmp_path):
    from relkt.config import TeacherConfig, run_config

    cfg = tmp_path / "t.yaml"
    cfg.write_text("output_dir: runs/exp\n")
    assert run_config(TeacherConfig, cfg).output_dir == "runs/exp"
    assert run_config(TeacherConfig, cfg, smoke=True).output_dir == "runs/exp_smoke"  # never the full run's folder
    assert run_config(TeacherConfig, cfg, ["output_dir=runs/mine"], smoke=True).output_dir == "runs/mine"
    assert run_config(TeacherConfig, cfg, smoke=True, settings=["output_dir=OUT/student"]).output_dir == "OUT/student"


@pytest.mark.parametrize("value", ["010", "1:30", "-007", "12:30:00"])
def test_a_set_number_yaml_would_read_in_another_base_is_refused(value):
    with pytest.raises(ConfigError, match=rf"--set 'seed={value}': YAML reads {value} as .*octal or base 60"):
        with_overrides(TeacherConfig(), [f"seed={value}"])


def test_a_hash_in_a_set_value_is_text_not_a_comment():
    config = with_overrides(TeacherConfig(), ["output_dir=runs/exp #3", "seed=10", "data.train_langs=[en, de]"])
    assert str(config.output_dir) == "runs/exp #3" and config.seed == 10 and config.data.train_langs == ["en", "de"]
