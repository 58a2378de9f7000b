"""The setups file (`configs/setups.yaml` in a checkout): each experiment's recipe and configs, read and checked in
one place (known keys, a known recipe, what that recipe needs, configs that exist; a `steps` setup's step recipe is
looked up where it runs, relkt.recipes.reproduce, so this table stays below the recipes that read it).
`relkt reproduce` runs them; crossval and the group students read a setup's folds, configs, `set` and
`student_groups` from here."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from relkt.config.student_groups import StudentGroup, read_student_groups
from relkt.errors import ConfigError
from relkt.io import read_yaml

RECIPES = ("pipeline", "crossval", "steps")
# what a setup is for: the recipe relkt recommends, a paper's protocol, an ablation of one piece, a recipe a later one
# replaced (kept while a chapter's figure needs its command), or a check of the plumbing
STATUSES = ("recommended", "paper", "ablation", "superseded", "check")


@dataclasses.dataclass(frozen=True)
class Setup:
    """One reproducible experiment: which recipe runs which configs."""

    name: str
    about: str
    recipe: str
    status: str = ""  # one of STATUSES
    teacher: str = ""  # stage-1 config, relative to configs/
    student: str = ""  # stage-2 config
    # pipeline and crossval: the encoder spec scored before training (crossval's default: the teacher's encoder.spec,
    # which a teacher fine-tuned from another run's export replaces)
    zero_shot: str = ""
    folds: int = 0  # crossval: article folds
    more_students: tuple[str, ...] = ()  # further students of the same teacher
    grow_students: tuple[str, ...] = ()  # pipeline: students trained on to 4 epochs in a copy
    interpolate: bool = False  # pipeline: also score each student mixed with its teacher (relkt interpolate)
    expected: str = ""  # pipeline: ranges the scores are checked against (trainers/check_expected.py)
    steps: str = ""  # steps: the step recipe that lists its commands (relkt.recipes.step_recipes)
    # crossval: one student per group of languages from each fold's teacher, each language scored by its group's
    # (relkt.config.student_groups); () = one student for every language
    student_groups: tuple[StudentGroup, ...] = ()
    # crossval: KEY=VALUE overrides for both stages, before the command line's --set (e.g. data.split_unit=question)
    set: tuple[str, ...] = ()
    teacher_set: tuple[str, ...] = ()  # crossval: KEY=VALUE overrides for the teacher alone
    student_set: tuple[str, ...] = ()  # crossval: KEY=VALUE overrides for the student(s) alone
    # the docs page that reads the setup's results: its scored models are kept as records (docs/results/records/)
    chapter: str = ""

    def configs(self) -> list[str]:
        """The setup's config files, each once, in order: teacher, student, more students, grown students."""
        return [c for c in dict.fromkeys((self.teacher, self.student, *self.more_students, *self.grow_students)) if c]


def load_setups(path: Path) -> dict[str, Setup]:
    """Every setup in `path`, checked: known keys, a known recipe, what that recipe needs, configs that exist."""
    raw = read_yaml(path, "setups file", ConfigError)  # the read door: a name given twice is refused
    if not isinstance(raw, dict) or not raw:
        got = "nothing" if raw is None or raw == {} else type(raw).__name__
        raise ConfigError(f"{path}: expected a mapping of setup names to setups, got {got}")
    fields = {f.name for f in dataclasses.fields(Setup)} - {"name"}
    setups = {}
    for name, entry in raw.items():
        where = f"{path}: setup {name}"
        if not isinstance(entry, dict):
            raise ConfigError(f"{where}: expected a mapping of {', '.join(sorted(fields))}")
        unknown = sorted(set(entry) - fields)
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(fields))}")
        entry = {k: tuple(v) if isinstance(v, list) else v for k, v in entry.items()}
        entry["student_groups"] = read_student_groups(entry.get("student_groups"), where)
        setup = Setup(name=name, **{"about": "", "recipe": "", **entry})
        needs = {"pipeline": ("teacher", "student"), "crossval": ("teacher", "student", "folds"), "steps": ("steps",)}
        if setup.status not in STATUSES:
            raise ConfigError(f"{where}: status {setup.status!r} is not valid; valid: {', '.join(STATUSES)}")
        if setup.recipe not in RECIPES:
            raise ConfigError(f"{where}: recipe {setup.recipe!r} is not valid; valid: {', '.join(RECIPES)}")
        missing = [k for k in needs[setup.recipe] if not getattr(setup, k)]
        if missing:
            raise ConfigError(f"{where}: a {setup.recipe} setup needs {', '.join(missing)}")
        for config in setup.configs():
            if not (path.parent / config).is_file():
                raise ConfigError(f"{where}: config {config} not found in {path.parent}")
        setups[name] = setup
    return setups


def listing(setups: dict[str, Setup]) -> str:
    """Every setup, the recommended first: name, status, recipe, what it shows, its configs."""
    width = max((len(n) for n in setups), default=0)
    lines = []
    for s in sorted(setups.values(), key=lambda s: STATUSES.index(s.status)):
        configs = ", ".join(s.configs()[:2]) + (f" (+{len(s.configs()) - 2})" if len(s.configs()) > 2 else "")
        recipe = f"crossval {s.folds}" if s.recipe == "crossval" else s.recipe
        lines.append(
            f"{s.name:<{width}}  {s.status:<11}  {recipe:<10}  {s.about}\n{'':<{width}}  {'':<11}  {'':<10}  "
            f"configs: {configs}"
        )
    return "\n".join(lines)


def get_setup(name: str, path: Path) -> Setup:
    """The setup `name` of the setups file `path`, checked; a ConfigError listing the valid names otherwise."""
    setups = load_setups(path)
    if name not in setups:
        raise ConfigError(f"unknown setup {name!r}; valid: {', '.join(setups)} (relkt reproduce --list)")
    return setups[name]
