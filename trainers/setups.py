"""The setups relkt reproduces, read from one data file (configs/setups.yaml) by reproduce.sh and crossval.py.

    python trainers/setups.py --list              # name, recipe, configs, what it shows
    python trainers/setups.py shell NAME [SEED]   # the setup as shell assignments (what reproduce.sh evals)

A setup names its configs relative to configs/; `shell` resolves each config's `base` chain, so the shell script
never reads YAML itself.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from relkt.config import StudentConfig, TeacherConfig, load_config
from relkt.errors import ConfigError
from relkt.recipes import setups as _setups
from relkt.recipes.setups import RECIPES, Setup  # noqa: F401 (this script's readers import them from here)

ROOT = Path(__file__).resolve().parents[1]
SETUPS_FILE = ROOT / "configs" / "setups.yaml"


def load_setups(path: Path = SETUPS_FILE) -> dict[str, Setup]:
    """Every setup of the checkout's setups file (relkt.recipes.setups.load_setups; scripts under the checkout)."""
    return _setups.load_setups(path, ROOT)


def get_setup(name: str, path: Path = SETUPS_FILE) -> Setup:
    return _setups.get_setup(name, path, ROOT)


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
