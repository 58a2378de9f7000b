"""configs/setups.yaml is the one list of setups: `relkt reproduce` and crossval read it, and bad entries are named."""

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from relkt.errors import ConfigError
from relkt.recipes import setups as setup_table
from relkt.recipes.pipeline import pipeline_steps
from tests.helpers.runs import ROOT, trainer_script

SETUPS_FILE = ROOT / "configs" / "setups.yaml"


@pytest.fixture
def setups():
    """The setups table, read as `relkt reproduce` reads it from the checkout."""
    return SimpleNamespace(
        load_setups=lambda path=SETUPS_FILE: setup_table.load_setups(path),
        get_setup=lambda name, path=SETUPS_FILE: setup_table.get_setup(name, path),
    )


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
        [sys.executable, "-m", "relkt.cli", "reproduce", "--list"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    assert "xquad_muse_best" in out and "crossval 5" in out and "configs: paper_muse/teacher.yaml" in out
    assert out.splitlines()[0].split()[1] == "recommended"  # the recommended setups first, each with its status
    bad = subprocess.run(
        [sys.executable, "-m", "relkt.cli", "reproduce", "nope"], cwd=ROOT, capture_output=True, text=True
    )
    assert bad.returncode == 2 and "unknown setup 'nope'" in bad.stderr


def test_trainers_holds_no_shell_script_and_no_eval():
    """Every workflow is a recipe in the package; trainers/ holds thin Python entry points only."""
    assert not list((ROOT / "trainers").glob("*.sh"))
    for script in (ROOT / "trainers").glob("*.py"):
        assert "eval(" not in script.read_text(encoding="utf-8"), script.name


def test_every_steps_setup_lists_its_commands_and_each_names_a_module_and_configs_that_exist(setups, monkeypatch):
    """A `steps` setup's recipe, printed with --dry-run: each process step a relkt module, each config found."""
    import importlib.util

    from relkt.recipes.step_recipes import STEP_RECIPES

    monkeypatch.setattr("relkt.recipes.step_recipes.apertium_reads_spanish", lambda: True)
    found = {s.name: s for s in setups.load_setups().values() if s.recipe == "steps"}
    assert {"paper_scale_muse", "paper_muse", "new_languages", "teach_questions"} <= set(found)
    for setup in found.values():
        steps = STEP_RECIPES[setup.steps](setup, ROOT / "configs", 3)
        assert steps, setup.name
        for step in steps:
            if step.call is not None:
                assert step.shown_as, step.name
                continue
            assert importlib.util.find_spec(step.argv[0]) is not None, step.argv[0]
            if "--config" in step.argv:
                config = Path(step.argv[step.argv.index("--config") + 1])
                assert config.is_file() or config.name == "config.yaml", config
            if step.argv[0].startswith("relkt.train_"):
                assert "seed=3" in step.argv and any(
                    a.startswith(f"output_dir=runs/{setup.name}_seed3/") for a in step.argv
                )


def test_a_steps_setup_skips_the_apertium_student_where_apertium_is_missing(setups, monkeypatch, capsys):
    from relkt.recipes.step_recipes import STEP_RECIPES

    monkeypatch.setattr("relkt.recipes.step_recipes.apertium_reads_spanish", lambda: False)
    setup = setups.load_setups()["paper_muse"]
    steps = STEP_RECIPES["paper_protocol"](setup, ROOT / "configs", None)
    assert not any("apertium" in " ".join(s.argv) for s in steps)
    assert "skipped paper_muse/student_apertium.yaml: no apertium eng-spa here" in capsys.readouterr().out


def test_pipeline_steps_resolve_each_configs_base_chain(setups, tmp_path):
    # The student's run folder and teacher come from its base; the pipeline reads them through load_config.
    (tmp_path / "t.yaml").write_text("# t\noutput_dir: runs/x/teacher\n")
    (tmp_path / "root_student.yaml").write_text(
        "output_dir: runs/x/student\nteacher: {spec: 'muse:runs/x/teacher/best'}\n"
    )
    (tmp_path / "s2_student.yaml").write_text("base: root_student.yaml\ndistill: {epochs: 4}\n")
    (tmp_path / "setups.yaml").write_text(
        "mine: {status: ablation, about: a test, recipe: pipeline, teacher: t.yaml, student: s2_student.yaml,\n"
        "  zero_shot: muse, more_students: [root_student.yaml]}\n"
    )
    setup = setup_table.get_setup("mine", tmp_path / "setups.yaml")
    steps = pipeline_steps(setup, tmp_path)
    names = [s.name for s in steps]
    assert names[:3] == ["zero-shot", "teacher", "teacher test"] and names.count("student test") == 2
    student = steps[3].argv
    assert student[:3] == ["relkt.train_student", "--config", str(tmp_path / "s2_student.yaml")]
    assert "teacher.spec=muse:runs/x/teacher/best" in student
    assert steps[4].output == "runs/x/student/test.json" and "--card" in steps[4].argv
    seeded = pipeline_steps(setup, tmp_path, seed=3)
    assert seeded[3].argv[-4:] == ["--set", "seed=3", "--set", "output_dir=runs/x_seed3/student"]


@pytest.mark.parametrize(
    "entry, message",
    [
        ("{about: x, recipe: pipeline, teacher: t.yaml, student: s.yaml, epochs: 3}", "unknown key(s) epochs"),
        ("{status: paper, about: x, recipe: magic}", "recipe 'magic' is not valid; valid: pipeline, crossval, steps"),
        ("{status: paper, about: x, recipe: crossval, teacher: t.yaml, student: t.yaml}", "a crossval setup needs"),
        ("{status: paper, about: x, recipe: pipeline, teacher: t.yaml, student: gone.yaml}", "config gone.yaml not"),
        ("{status: best, about: x, recipe: pipeline, teacher: t.yaml, student: t.yaml}", "status 'best' is not valid"),
    ],
)
def test_a_bad_setup_is_named_with_its_file_and_field(setups, tmp_path, entry, message):
    (tmp_path / "t.yaml").write_text("output_dir: runs/t\n")
    (tmp_path / "setups.yaml").write_text(f"bad: {entry}\n")
    with pytest.raises(
        ConfigError, match=r"setups.yaml: setup bad: .*" + message.replace("(", r"\(").replace(")", r"\)")
    ):
        setup_table.load_setups(tmp_path / "setups.yaml")


def test_crossval_takes_its_folds_and_configs_from_a_setup():
    crossval = trainer_script("crossval")
    cv = crossval.cross_validation(crossval.parse_args(["--setup", "xquad_muse_best", "--output", "out"]))
    assert cv.folds == 5 and cv.teacher_config.endswith("configs/xquad_muse_best/teacher.yaml")
    assert cv.student_config.endswith("configs/xquad_muse_best/student.yaml")
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

    root = Path(__file__).resolve().parents[2]
    setup = get_setup("xquad_muse_xy", root / "configs" / "setups.yaml")
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

    root = Path(__file__).resolve().parents[2]
    setup = get_setup("xquad_muse_best_paper_scale", root / "configs" / "setups.yaml")
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


def test_a_steps_setup_names_the_reports_a_reader_opens(setups):
    from relkt.recipes.step_recipes import STEP_RECIPES

    setup = setups.load_setups()["paper_scale_muse"]
    reports = [s.report for s in STEP_RECIPES["paper_scale"](setup, ROOT / "configs", None) if s.report]
    assert "runs/paper_scale_muse/comparison_xquad-r.md" in reports
    assert "runs/paper_scale_muse/comparison_student_mlqa.md" in reports


@pytest.mark.parametrize("text, got", [("", "nothing"), ("{}\n", "nothing"), ("- a\n", "list")])
def test_a_setups_file_without_setups_is_one_line(tmp_path, text, got):
    from relkt.errors import ConfigError
    from relkt.recipes.setups import load_setups

    (tmp_path / "setups.yaml").write_text(text)
    with pytest.raises(ConfigError, match=rf"setups.yaml: expected a mapping of setup names to setups, got {got}"):
        load_setups(tmp_path / "setups.yaml")
