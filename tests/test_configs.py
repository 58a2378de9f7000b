"""Every shipped config is a user's entry point: it must load with its stage's config class (unknown keys, bad
values and broken cross-checks are errors), say at its top what it changes and which command runs it, and resolve
to exactly what it held before configs became bases plus differences (tests/config/configs_before_base/ keeps
those files as they were; settings added since read as the runs of that time trained)."""

import re
from pathlib import Path

import pytest
import yaml

from relkt.config import StudentConfig, TeacherConfig, load_config, to_dict
from relkt.config.config_io import apply_overrides, from_dict, read_config_file
from relkt.recipes.setups import get_setup
from relkt.training.run_folder import flat_keys, read_as_today, settings_before_they_existed

ROOT = Path(__file__).resolve().parents[1]
SETUPS = "setups.yaml"  # the list of setups (relkt reproduce --list), not a config
CONFIGS = sorted(p for p in (ROOT / "configs").rglob("*.yaml") if p.name != SETUPS)
BEFORE = ROOT / "tests" / "config" / "configs_before_base"
COMMAND = re.compile(r"^#\s+(python -m relkt\.train_(teacher|student)|relkt reproduce |python trainers/)")


def test_the_configs_are_found():
    assert len(CONFIGS) >= 10 and any(
        p.relative_to(ROOT / "configs").as_posix() == "xquad_muse_guarded/student.yaml" for p in CONFIGS
    )


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


MOVED = {  # the snapshots' names -> where each config lives now, one folder a setup
    "ablation_muse_student.yaml": "ablation_muse/student.yaml",
    "new_languages_roman_student.yaml": "teach_questions/student_roman.yaml",
    "new_languages_student.yaml": "new_languages/student.yaml",
    "new_languages_xor_bank_student.yaml": "teach_questions/student_xor_bank.yaml",
    "new_languages_xor_contrast_student.yaml": "teach_questions/student_xor_contrast.yaml",
    "new_languages_xor_student.yaml": "teach_questions/student_xor.yaml",
    "paper_muse_reference_student.yaml": "paper_muse_reference/student.yaml",
    "paper_muse_reference_teacher.yaml": "paper_muse_reference/teacher.yaml",
    "paper_muse_student.yaml": "paper_muse/student.yaml",
    "paper_muse_student_apertium.yaml": "paper_muse/student_apertium.yaml",
    "paper_muse_student_bank.yaml": "paper_muse/student_bank.yaml",
    "paper_muse_student_codeswitch.yaml": "paper_muse/student_codeswitch.yaml",
    "paper_muse_student_codeswitch_bank.yaml": "paper_muse/student_codeswitch_bank.yaml",
    "paper_muse_teacher.yaml": "paper_muse/teacher.yaml",
    "quickstart.yaml": "quickstart/teacher.yaml",
    "quickstart_muse_table_student.yaml": "sparse_rows/student.yaml",
    "quickstart_student.yaml": "quickstart/student.yaml",
    "sparse_rows_teacher.yaml": "sparse_rows/teacher.yaml",
    "xquad_minilm_student.yaml": "xquad_minilm/student.yaml",
    "xquad_minilm_student_contrast.yaml": "xquad_minilm/student_contrast.yaml",
    "xquad_minilm_student_contrast_pieces_han.yaml": "xquad_minilm/student_contrast_pieces_han.yaml",
    "xquad_minilm_student_vocab.yaml": "xquad_minilm/student_vocab.yaml",
    "xquad_minilm_teacher.yaml": "xquad_minilm/teacher.yaml",
    "xquad_muse_article_teacher.yaml": "xquad_muse_guarded/teacher.yaml",
    "xquad_muse_cpu_student.yaml": "xquad_muse_cpu/student.yaml",
    "xquad_muse_cpu_teacher.yaml": "xquad_muse_cpu/teacher.yaml",
    "xquad_muse_guarded_student.yaml": "xquad_muse_guarded/student.yaml",
    "xquad_muse_reference_student.yaml": "xquad_muse_reference/student.yaml",
    "xquad_muse_reference_teacher.yaml": "xquad_muse_reference/teacher.yaml",
    "xquad_muse_student.yaml": "xquad_muse/student.yaml",
    "xquad_muse_teacher.yaml": "xquad_muse/teacher.yaml",
    "xquad_muse_xy_teacher.yaml": "xquad_muse_xy/teacher.yaml",
}


def config_class(path: Path):
    return StudentConfig if "student" in path.stem else TeacherConfig


@pytest.mark.parametrize("before", sorted(BEFORE.glob("*.yaml")), ids=lambda p: p.name)
def test_every_config_resolves_to_what_it_was_before_bases(before):
    now = ROOT / "configs" / MOVED.get(before.name, before.name)
    assert now.exists(), (
        f"configs/{MOVED.get(before.name, before.name)} is gone: retire it in docs/results/README.md and drop its "
        "snapshot"
    )
    cls = config_class(before)
    # Settings added since then read as the runs of that time trained (schedule.sparse_rows: dense, or lazy for
    # language rows), and an empty language list then meant `all`, as a resumed run from then reads them.
    saved = flat_keys(yaml.safe_load(before.read_text()) or {})
    then = {**settings_before_they_existed(saved), **{k: v for k, v in read_as_today(cls, saved).items() if v == "all"}}
    data = apply_overrides(read_config_file(before), [f"{key}={value}" for key, value in then.items()])
    assert to_dict(load_config(cls, now)) == to_dict(from_dict(cls, data))


def test_configs_stay_small():
    configs = [p for p in (ROOT / "configs").rglob("*.yaml") if p.name != "setups.yaml"]  # the list, not a config
    lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in configs)
    # A variant writes only what it changes from its base; bases are at most two levels deep, so a variant of a
    # variant spells out what its parent changed. The bound is a budget: raise it for a setup a chapter needs.
    assert lines <= 740, f"configs/ holds {lines} lines: write a variant as its base plus what it changes"


# The reference code's settings (2_use_finetune_teacher / 3_use_finetune_distillation .sh/.py), which both reference
# setups must hold whatever their bases say: paper_muse_reference's teacher once inherited eval.at_start from
# paper_muse/teacher.yaml, which the reference never does (its first evaluation is one step in).
REFERENCE = {
    "teacher": {
        ("eval", "at_start"): False,
        ("eval", "per_epoch"): 4,
        ("schedule", "learning_rate"): 1e-5,
        ("schedule", "lr_patience"): 1,
        ("schedule", "min_learning_rate"): 0.0,
        ("schedule", "early_stop_patience"): 20,
        ("triplet", "margin"): 0.24,
        ("triplet", "batch_size"): 16,
        ("triplet", "distance"): "cosine",
        ("mining", "bm25_top_end"): 3,
        ("mining", "hard"): 1,
        ("mining", "semi_hard"): 1,
        ("data", "answer_unit"): "passage",
    },
    "student": {
        ("eval", "at_start"): False,
        ("eval", "within_epoch"): True,
        ("eval", "every_steps"): 100,
        ("schedule", "learning_rate"): 1e-3,
        ("schedule", "lr_patience"): 1,
        ("schedule", "min_learning_rate"): 0.0,
        ("schedule", "early_stop_patience"): 20,
        ("distill", "batch_size"): 16,
        ("distill", "epochs"): 30,
        ("distill", "gamma"): 1000.0,
        ("distill", "distance"): "mean_squared",
        ("distill", "weights"): {"beta": 1e-3, "lam": 0.1, "omega": 1e-2},
    },
}


@pytest.mark.parametrize("setup", ["xquad_muse_reference", "paper_muse_reference"])
@pytest.mark.parametrize("stage", ["teacher", "student"])
def test_reference_setups_hold_the_reference_codes_settings(setup, stage):
    path = ROOT / "configs" / setup / f"{stage}.yaml"
    config = load_config(config_class(path), path)
    held = {key: getattr(getattr(config, key[0]), key[1]) for key in REFERENCE[stage]}
    assert held == REFERENCE[stage]
    if stage == "student":
        assert not config.student.options.get("freeze_token_embedding"), "the whole mUSE trains"


@pytest.mark.parametrize("name,under", [("xquad_muse_reference_questions", "xquad_muse_reference")])
def test_question_split_setups_are_their_article_setups_cut_by_question(name, under):
    setups = ROOT / "configs" / "setups.yaml"
    setup, article = get_setup(name, setups), get_setup(under, setups)
    assert (setup.teacher, setup.student, setup.folds, setup.student_groups) == (
        article.teacher,
        article.student,
        article.folds,
        article.student_groups,
    )
    assert setup.set == ("data.split_unit=question", "data.allow_test_overlap=true") and not article.set


def test_no_config_is_more_than_two_bases_deep():
    def depth(path: Path) -> int:
        base = (yaml.safe_load(path.read_text(encoding="utf-8")) or {}).get("base")
        return 0 if not base else 1 + depth(path.parent / base)

    deep = {p.name: depth(p) for p in CONFIGS if depth(p) > 2}
    assert not deep, f"configs more than two base: levels deep (read eight files to know a run): {deep}"


@pytest.mark.parametrize("path", [p for p in CONFIGS if "student" in p.stem], ids=lambda p: p.name)
def test_language_rows_left_lazy_say_why_first(path):
    """Dense Adam on language rows measured better (docs/results/scale.md): a config keeping them lazy says so and why
    in its first line (#60)."""
    config = load_config(StudentConfig, path)
    if config.student.language_rows.langs and config.schedule.sparse_rows == "lazy":
        assert "lazy" in path.read_text(encoding="utf-8").splitlines()[0], f"{path.name}: first line: why lazy?"
