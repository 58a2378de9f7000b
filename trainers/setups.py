"""The setups relkt reproduces, read from one data file (configs/setups.yaml) by reproduce.sh and crossval.py.

    python trainers/setups.py --list              # name, recipe, configs, what it shows
    python trainers/setups.py shell NAME [SEED]   # the setup as shell assignments (what reproduce.sh evals)

A setup names its configs relative to configs/; `shell` resolves each config's `base` chain, so the shell script
never reads YAML itself.
"""

from __future__ import annotations

import argparse
import dataclasses
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

from relkt.config import StudentConfig, TeacherConfig, load_config
from relkt.config.student_groups import StudentGroup, read_student_groups
from relkt.errors import ConfigError

ROOT = Path(__file__).resolve().parents[1]
SETUPS_FILE = ROOT / "configs" / "setups.yaml"
RECIPES = ("pipeline", "crossval", "script")


@dataclasses.dataclass(frozen=True)
class Setup:
    """One reproducible experiment: which recipe runs which configs."""

    name: str
    about: str
    recipe: str
    teacher: str = ""  # stage-1 config, relative to configs/
    student: str = ""  # stage-2 config
    zero_shot: str = ""  # pipeline: the encoder spec scored before training
    folds: int = 0  # crossval: article folds
    more_students: tuple[str, ...] = ()  # further students of the same teacher
    grow_students: tuple[str, ...] = ()  # pipeline: students trained on to 4 epochs in a copy
    interpolate: bool = False  # pipeline: also score each student mixed with its teacher (relkt.interpolate)
    expected: str = ""  # pipeline: ranges the scores are checked against (trainers/check_expected.py)
    script: str = ""  # script: the recipe that runs it
    # crossval: one student per group of languages from each fold's teacher, each language scored by its group's
    # (relkt.config.student_groups); () = one student for every language
    student_groups: tuple[StudentGroup, ...] = ()
    # crossval: KEY=VALUE overrides for both stages, before the command line's --set (e.g. data.split_unit=question)
    set: tuple[str, ...] = ()

    def configs(self) -> list[str]:
        return [c for c in dict.fromkeys((self.teacher, self.student, *self.more_students, *self.grow_students)) if c]


def load_setups(path: Path = SETUPS_FILE) -> dict[str, Setup]:
    """Every setup in `path`, checked: known keys, a known recipe, what that recipe needs, configs that exist."""
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as e:
        raise ConfigError(f"{path}: cannot read the setups ({e})") from None
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
        needs = {"pipeline": ("teacher", "student"), "crossval": ("teacher", "student", "folds"), "script": ("script",)}
        if setup.recipe not in RECIPES:
            raise ConfigError(f"{where}: recipe {setup.recipe!r} is not valid; valid: {', '.join(RECIPES)}")
        missing = [k for k in needs[setup.recipe] if not getattr(setup, k)]
        if missing:
            raise ConfigError(f"{where}: a {setup.recipe} setup needs {', '.join(missing)}")
        for config in setup.configs():
            if not (path.parent / config).is_file():
                raise ConfigError(f"{where}: config {config} not found in {path.parent}")
        if setup.script and not (ROOT / setup.script).is_file():
            raise ConfigError(f"{where}: script {setup.script} not found")
        setups[name] = setup
    return setups


def get_setup(name: str, path: Path = SETUPS_FILE) -> Setup:
    setups = load_setups(path)
    if name not in setups:
        raise ConfigError(f"unknown setup {name!r}; valid: {', '.join(setups)} (python trainers/setups.py --list)")
    return setups[name]


def listing(setups: dict[str, Setup]) -> str:
    width = max(len(n) for n in setups)
    lines = []
    for s in setups.values():
        configs = ", ".join(s.configs()[:2]) + (f" (+{len(s.configs()) - 2})" if len(s.configs()) > 2 else "")
        recipe = f"crossval {s.folds}" if s.recipe == "crossval" else s.recipe
        lines.append(f"{s.name:<{width}}  {recipe:<10}  {s.about}\n{'':<{width}}  {'':<10}  configs: {configs}")
    return "\n".join(lines)


def _output_dir(config: Path) -> str:
    cls = StudentConfig if "student" in config.stem else TeacherConfig
    return load_config(cls, config).output_dir


def _relative(path: Path) -> str:
    """A config path as the shell sees it: under the checkout, relative to its root."""
    path = path.resolve()
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def shell(setup: Setup, configs_dir: Path = SETUPS_FILE.parent) -> str:
    """`setup` as bash assignments: paths under configs/, run folders resolved through each config's base chain."""
    values: dict[str, str | list[str]] = {
        "recipe": setup.recipe,
        "folds": str(setup.folds),
        "zero_shot": setup.zero_shot,
        "expected": setup.expected,
        "script": setup.script,
        "interpolate": "yes" if setup.interpolate else "no",
    }
    for key in ("more_students", "grow_students"):
        configs = getattr(setup, key)
        values[key] = [_relative(configs_dir / c) for c in configs]
        values[key.replace("students", "outs")] = [_output_dir(configs_dir / c) for c in configs]
    for key in ("teacher", "student"):
        config = getattr(setup, key)
        values[key] = _relative(configs_dir / config) if config else ""
        values[f"{key}_out"] = _output_dir(configs_dir / config) if config else ""
    if setup.student:
        spec = load_config(StudentConfig, configs_dir / setup.student).teacher.spec
        values["teacher_kind"] = spec.split(":", 1)[0]
    out = []
    for key, value in values.items():
        if isinstance(value, list):
            out.append(f"{key}=({' '.join(shlex.quote(v) for v in value)})")
        else:
            out.append(f"{key}={shlex.quote(value)}")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python trainers/setups.py", description=__doc__.split("\n")[0])
    p.add_argument("--list", action="store_true", help="print every setup")
    p.add_argument("--file", type=Path, default=SETUPS_FILE, help="the setups file (default: configs/setups.yaml)")
    p.add_argument("command", nargs="?", choices=["shell"], help="shell NAME: the setup as bash assignments")
    p.add_argument("name", nargs="?", help="a setup name")
    args = p.parse_args(argv)
    try:
        if args.list or not args.command:
            print(listing(load_setups(args.file)))
            return 0
        if not args.name:
            p.error("shell needs a setup NAME")
        print(shell(get_setup(args.name, args.file), args.file.parent.resolve()))
        return 0
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
