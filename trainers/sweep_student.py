"""Grid sweep / ablation of the student: one train_student run per combination, then a table of dev results.

    # the paper's grid over loss weights and learning rate
    python trainers/sweep_student.py --config configs/quickstart/student.yaml \
        --grid distill.gamma=100,1000,10000 --grid distill.beta=1,0.01,0.0001 --grid distill.omega=1,0.01,0.0001 \
        --grid schedule.learning_rate=1e-3,1e-4
    # Table 6 ablation (q / q+d / q+d+dq) and the distance choice
    python trainers/sweep_student.py --config configs/quickstart/student.yaml \
        --grid distill.objective=q,q+d,q+d+dq --grid distill.distance=squared_l2,cosine

Each run gets its own output_dir under `<output_dir>/sweep/`, holding its full config.yaml; reruns
resume or skip finished runs. The table (sweep.md, sweep.json) lists the best dev metric per run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from pathlib import Path

from relkt.cli import train_student
from relkt.cli.common import Parser, run_cli
from relkt.config import StudentConfig, load_config
from relkt.errors import ConfigError
from relkt.io import atomic_write_json, atomic_write_text


def parse_grid(items: list[str]) -> dict[str, list[str]]:
    grid = {}
    for item in items:
        key, sep, values = item.partition("=")
        if not sep or not values:
            raise ConfigError(f"--grid {item!r}: expected key=v1,v2,...")
        grid[key] = values.split(",")
    return grid


def main(argv: list[str] | None = None) -> int:
    p = Parser(prog="python trainers/sweep_student.py", description=__doc__.split("\n")[0])
    p.add_argument("--config", required=True)
    p.add_argument("--set", action="append", default=[], help="fixed overrides for every run")
    p.add_argument("--grid", action="append", default=[], help="key=v1,v2,... (repeat for more keys)")
    args = p.parse_args(argv)
    return run_cli(lambda: sweep(args), verbose=False)


def sweep(args: argparse.Namespace) -> int:
    """One student a combination of the grid, then the table of their best dev metrics."""
    grid = parse_grid(args.grid)
    base = load_config(StudentConfig, args.config, args.set)
    root = Path(base.output_dir) / "sweep"
    rows = []
    for values in itertools.product(*grid.values()):
        combo = dict(zip(grid, values))
        name = "__".join(f"{k.split('.')[-1]}={v}" for k, v in combo.items()) or "base"
        sets = [*args.set, *(f"{k}={v}" for k, v in combo.items()), f"output_dir={root / name}"]
        rc = train_student.main(["--config", args.config, *[x for s in sets for x in ("--set", s)]])
        summary_path = root / name / "summary.json"
        summary = json.loads(summary_path.read_text()) if summary_path.exists() else {}
        rows.append(
            {
                **combo,
                "returncode": rc,
                "best": summary.get("best", {}).get("value"),
                "best_step": summary.get("best", {}).get("step"),
                "output_dir": str(root / name),
            }
        )
    atomic_write_json(root / "sweep.json", rows)
    keys = list(grid) + ["best", "best_step"]
    table = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    table += ["| " + " | ".join(str(r.get(k)) for k in keys) + " |" for r in rows]
    atomic_write_text(root / "sweep.md", "\n".join(table) + "\n")
    print("\n".join(table))
    return 0 if all(r["returncode"] == 0 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
