"""configs/setups.yaml is the one list of setups: reproduce.sh and crossval.py read it, and bad entries are named."""

import subprocess

import pytest

from relkt.errors import ConfigError
from tests.helpers.runs import ROOT, trainer_script


@pytest.fixture
def setups():
    return trainer_script("setups")


def test_every_shipped_setup_loads_and_names_existing_configs(setups):
    found = setups.load_setups()
    assert {"quickstart", "quickstart_muse", "xquad_muse", "xquad_muse_cpu", "paper_muse", "new_languages"} <= set(
        found
    )
    assert found["xquad_muse"].recipe == "crossval" and found["xquad_muse"].folds == 5
    for setup in found.values():
        for config in setup.configs():
            assert (ROOT / "configs" / config).is_file(), (setup.name, config)


def test_reproduce_lists_the_setups_from_the_file():
    out = subprocess.run(
        ["bash", "trainers/reproduce.sh", "--list"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "xquad_muse_guarded" in out and "crossval 5" in out and "configs: paper_muse/teacher.yaml" in out
    bad = subprocess.run(["bash", "trainers/reproduce.sh", "nope"], cwd=ROOT, capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown setup 'nope'" in bad.stderr


def test_shell_resolves_each_configs_base_chain(setups, tmp_path):
    # The student's run folder and teacher come from its base; reproduce.sh never reads YAML itself.
    (tmp_path / "t.yaml").write_text("# t\noutput_dir: runs/x/teacher\n")
    (tmp_path / "root_student.yaml").write_text(
        "output_dir: runs/x/student\nteacher: {spec: 'muse:runs/x/teacher/best'}\n"
    )
    (tmp_path / "s2_student.yaml").write_text("base: root_student.yaml\ndistill: {epochs: 4}\n")
    (tmp_path / "setups.yaml").write_text(
        "mine: {about: a test, recipe: pipeline, teacher: t.yaml, student: s2_student.yaml, zero_shot: muse,\n"
        "  more_students: [root_student.yaml]}\n"
    )
    text = setups.shell(setups.get_setup("mine", tmp_path / "setups.yaml"), tmp_path)
    values = dict(line.split("=", 1) for line in text.splitlines())
    assert values["student_out"] == "runs/x/student" and values["teacher_kind"] == "muse"
    assert values["teacher_out"] == "runs/x/teacher" and values["more_outs"] == "(runs/x/student)"
    assert values["recipe"] == "pipeline" and values["interpolate"] == "no"


@pytest.mark.parametrize(
    "entry, message",
    [
        ("{about: x, recipe: pipeline, teacher: t.yaml, student: s.yaml, epochs: 3}", "unknown key(s) epochs"),
        ("{about: x, recipe: magic}", "recipe 'magic' is not valid; valid: pipeline, crossval, script"),
        ("{about: x, recipe: crossval, teacher: t.yaml, student: t.yaml}", "a crossval setup needs folds"),
        ("{about: x, recipe: pipeline, teacher: t.yaml, student: gone.yaml}", "config gone.yaml not found"),
    ],
)
def test_a_bad_setup_is_named_with_its_file_and_field(setups, tmp_path, entry, message):
    (tmp_path / "t.yaml").write_text("output_dir: runs/t\n")
    (tmp_path / "setups.yaml").write_text(f"bad: {entry}\n")
    with pytest.raises(
        ConfigError, match=r"setups.yaml: setup bad: .*" + message.replace("(", r"\(").replace(")", r"\)")
    ):
        setups.load_setups(tmp_path / "setups.yaml")


def test_crossval_takes_its_folds_and_configs_from_a_setup():
    crossval = trainer_script("crossval")
    cv = crossval.cross_validation(crossval.parse_args(["--setup", "xquad_muse_guarded", "--output", "out"]))
    assert cv.folds == 5 and cv.teacher_config.endswith("configs/xquad_muse_guarded/teacher.yaml")
    assert cv.student_config.endswith("configs/xquad_muse_guarded/student.yaml")
    questions = crossval.cross_validation(
        crossval.parse_args(["--setup", "xquad_muse_guarded_questions", "--output", "out", "--set", "seed=1"])
    )
    assert questions.sets == ["data.split_unit=question", "data.allow_test_overlap=true", "seed=1"]
    with pytest.raises(ConfigError, match="a pipeline setup, not crossval"):
        crossval.cross_validation(crossval.parse_args(["--setup", "quickstart", "--output", "out"]))


def test_a_setups_student_set_reaches_the_student_alone_and_points_at_each_folds_teacher(tmp_path):
    """xquad_muse_xy: the guarded student config, its teacher.spec set by the setup to the X-Y teacher's folder,
    which crossval then points at each fold's teacher; the teacher pairs questions with other languages' answers."""
    from pathlib import Path

    from relkt.recipes.crossval import CrossValidation
    from relkt.recipes.setups import get_setup

    root = Path(__file__).resolve().parents[1]
    setup = get_setup("xquad_muse_xy", root / "configs" / "setups.yaml", root)
    cv = CrossValidation.from_setup(setup, root / "configs", tmp_path / "cv")
    assert cv.student(1).teacher.spec == f"muse:{tmp_path / 'cv' / 'fold1' / 'teacher'}/best"
    teacher = cv.teacher(1)
    assert teacher.triplet.pairing == "cross" and len(teacher.data.train_langs) == 11
    assert "teacher.spec" not in " ".join(cv.sets)  # the teacher's own config is not touched


def test_a_teacher_fine_tuned_from_another_export_keeps_the_base_as_zero_shot(tmp_path):
    """xquad_muse_best_paper_scale: each fold's teacher starts from the paper-scale teacher's export, the zero-shot
    scored is still mUSE, the student distils the fold's teacher; a zero-shot of another encoder kind is refused
    before anything trains."""
    from pathlib import Path

    from relkt.recipes.crossval import CrossValidation
    from relkt.recipes.setups import get_setup

    root = Path(__file__).resolve().parents[1]
    setup = get_setup("xquad_muse_best_paper_scale", root / "configs" / "setups.yaml", root)
    cv = CrossValidation.from_setup(setup, root / "configs", tmp_path / "cv")
    teacher = cv.teacher(2)
    assert teacher.encoder.spec == "muse:runs/paper_scale_muse/teacher/best"
    assert cv.zero_shot_spec(teacher) == "muse"
    student = cv.student(2)
    assert student.teacher.spec == f"muse:{tmp_path / 'cv' / 'fold2' / 'teacher'}/best"
    assert student.distill.epochs == 4 and student.student.extend_vocab.pieces == 16000
    crossval = trainer_script("crossval")
    argv = ["--setup", "xquad_muse_best", "--output", str(tmp_path / "o"), "--zero-shot", "minilm"]
    with pytest.raises(ConfigError, match="zero_shot 'minilm' is not of the teacher's encoder kind"):
        crossval.cross_validation(crossval.parse_args(argv)).check()
    assert not (tmp_path / "o").exists()
