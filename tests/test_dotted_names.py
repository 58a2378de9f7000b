"""Every dotted `relkt.` name the docs and the config help strings give a reader resolves: a module that imports, or
a name inside one (a renamed or removed module named in prose is caught here, not by a user)."""

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAME = re.compile(r"\brelkt(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
NOT_NAMES = {"relkt.json"}  # an export's metadata file


def named_in(paths) -> dict[str, str]:
    found = {}
    for path in paths:
        for name in NAME.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name.rstrip("."), str(path.relative_to(ROOT)))
    return {k: v for k, v in found.items() if k not in NOT_NAMES}


def resolves(name: str) -> bool:
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def test_every_relkt_name_in_the_docs_and_config_help_resolves():
    paths = [
        ROOT / "README.md",
        *sorted((ROOT / "docs").rglob("*.md")),
        *sorted((ROOT / "relkt" / "config").glob("*.py")),
    ]
    names = named_in(paths)
    assert len(names) > 30  # the docs do name the package's parts
    broken = sorted(f"{name} (in {where})" for name, where in names.items() if not resolves(name))
    assert not broken, "names that do not resolve:\n" + "\n".join(broken)
