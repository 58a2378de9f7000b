"""Check a quickstart's test scores against the ranges the README states (measured over seeds): each figure inside
its range, and the order the method predicts (e.g. student > teacher > zero-shot in a language). Prints one line
per check and exits 1 when any fails; no test framework needed.

    python trainers/check_expected.py trainers/expected/quickstart_muse.yaml \
        --zero-shot runs/quickstart_muse/zero_shot_test.json --teacher runs/quickstart_muse/teacher/test.json \
        --student runs/quickstart_muse/student/test.json
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import yaml

MODELS = ("zero_shot", "teacher", "student")


def figure(results: dict, name: str) -> float:
    """`lareqa/LANG/mAP` or `xx_en/LANG/P@1` (in %) from a relkt evaluate results JSON."""
    family, lang, metric = name.split("/")
    if family == "lareqa":
        return 100 * results["lareqa"]["per_language"][lang][metric]
    return 100 * results[family][lang][metric]


def check(expected: dict, results: dict[str, dict]) -> list[tuple[bool, str]]:
    """(passed, line) for every range and every ordering in `expected`."""
    out = []
    for model, ranges in expected.get("ranges", {}).items():
        for name, (low, high) in ranges.items():
            value = figure(results[model], name)
            out.append((low <= value <= high, f"{model} {name} = {value:.2f} (expected {low} to {high})"))
    for name in expected.get("increasing", []):
        values = [figure(results[m], name) for m in MODELS]
        ok = values[0] < values[1] < values[2]
        out.append((ok, f"{name}: zero-shot {values[0]:.2f} < teacher {values[1]:.2f} < student {values[2]:.2f}"))
    for name in expected.get("student_above_teacher", []):
        t, s = figure(results["teacher"], name), figure(results["student"], name)
        out.append((s > t, f"{name}: teacher {t:.2f} < student {s:.2f}"))
    for name in expected.get("teacher_above_zero_shot", []):
        z, t = figure(results["zero_shot"], name), figure(results["teacher"], name)
        out.append((t > z, f"{name}: zero-shot {z:.2f} < teacher {t:.2f}"))
    return out


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python trainers/check_expected.py", description=__doc__.split("\n")[0])
    p.add_argument("expected", help="YAML of ranges and orderings (trainers/expected/*.yaml)")
    for model in MODELS:
        p.add_argument(
            f"--{model.replace('_', '-')}", required=True, help=f"the {model} results JSON of relkt evaluate"
        )
    args = p.parse_args(argv)
    try:
        expected = yaml.safe_load(Path(args.expected).read_text())
        results = {m: json.loads(Path(getattr(args, m)).read_text()) for m in MODELS}
    except (OSError, ValueError, yaml.YAMLError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    lines = check(expected, results)
    for ok, line in lines:
        print(("ok    " if ok else "OUT   ") + line)
    failed = sum(not ok for ok, _ in lines)
    print(
        f"{len(lines) - failed} of {len(lines)} checks inside the expected ranges"
        + (f"; {failed} outside" if failed else "")
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
