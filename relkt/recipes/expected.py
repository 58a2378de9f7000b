"""The expected ranges a pipeline's test scores are checked against (`trainers/expected/*.yaml`: ranges measured over
seeds, and the orderings the method predicts, e.g. student > teacher > zero-shot in a language)."""

from __future__ import annotations

from pathlib import Path

from relkt.errors import DataError
from relkt.io import read_json, read_yaml

MODELS = ("zero_shot", "teacher", "student")


def figure(results: dict, name: str) -> float:
    """`lareqa/LANG/mAP` (`lareqa/all/mAP`: the pool's) or `xx_en/LANG/P@1`, in %, from a relkt evaluate results
    JSON."""
    family, lang, metric = name.split("/")
    if family == "lareqa":
        return 100 * (results["lareqa"][metric] if lang == "all" else results["lareqa"]["per_language"][lang][metric])
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


def check_files(
    expected: str | Path, zero_shot: str | Path, teacher: str | Path, student: str | Path
) -> list[tuple[bool, str]]:
    """`check` on the files: the expected YAML and the three results JSONs; a DataError naming one that cannot be
    read."""
    paths = {"zero_shot": zero_shot, "teacher": teacher, "student": student}
    try:
        wanted = read_yaml(expected, "expected ranges")
        results = {m: read_json(p, "results JSON") for m, p in paths.items()}
    except (OSError, ValueError) as e:
        raise DataError(f"expected-range check: {e}") from None
    return check(wanted, results)


def verdict(lines: list[tuple[bool, str]]) -> str:
    """One line a check, then how many passed."""
    failed = sum(not ok for ok, _ in lines)
    out = [("ok    " if ok else "OUT   ") + line for ok, line in lines]
    out.append(
        f"{len(lines) - failed} of {len(lines)} checks inside the expected ranges"
        + (f"; {failed} outside" if failed else "")
    )
    return "\n".join(out)
