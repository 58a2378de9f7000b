"""The files a scoring writes: a results JSON and its per-question arrays beside it (`x.json`, `x.per_question.npz`),
written and read back as one pair (a shared random key), and the language-aware ranking's pair beside the raw one
(`x.adjusted.json`). Scoring, crossval, comparisons and records all read and write them here."""

from __future__ import annotations

import uuid
from pathlib import Path

import numpy as np

from relkt.errors import DataError
from relkt.io import atomic_files, claim_file, json_keys, json_text, npz_keys, read_json, read_npz
from relkt.metrics.evaluation import Evaluation

PAIR_KEY = "per_question_key"  # one random key in the results JSON and its .per_question.npz: the two belong together


def write_result_pair(results: dict, per_question: dict, output: str | Path) -> Path:
    """`results` as JSON at `output` and `per_question` beside it, both or neither, sharing a new key, so that a JSON
    left beside another run's arrays (a write interrupted between its two renames) is told apart."""
    output = Path(output)
    npz = per_question_path(output)
    claim_file(output, is_result_file, "results JSON")
    claim_file(npz, is_per_question_file, "per-question file")
    key = uuid.uuid4().hex
    arrays = {k: v for k, v in per_question.items() if k != PAIR_KEY}
    with atomic_files([npz, output]) as (per_question_file, json_file):
        np.savez(per_question_file, **arrays, **{PAIR_KEY: np.array(key)})
        json_file.write(json_text({**results, PAIR_KEY: key}).encode("utf-8"))
    return output


def is_result_file(path: Path) -> bool:
    """Whether `path` holds results relkt wrote (a JSON object carrying its pair key)."""
    return PAIR_KEY in json_keys(path)


def is_per_question_file(path: Path) -> bool:
    """Whether `path` holds per-question scores relkt wrote (an npz carrying the pair key)."""
    try:
        return PAIR_KEY in npz_keys(path, "per-question file")
    except DataError:
        return False


def read_per_question(output: str | Path) -> dict[str, np.ndarray]:
    """The per-question arrays beside the results JSON at `output`; a DataError when the two do not carry the same
    key (files of two runs), naming both. Files written before the key existed are read as they are."""
    output = Path(output)
    npz = per_question_path(output)
    arrays = read_npz(npz, "per-question file")
    theirs = str(arrays.pop(PAIR_KEY)) if PAIR_KEY in arrays else None
    try:
        ours = read_json(output, "results JSON").get(PAIR_KEY) if output.exists() else None
    except (DataError, AttributeError):
        ours = None
    if ours is not None and theirs is not None and ours != theirs:
        raise DataError(
            f"{output} and {npz} are not one pair (keys {ours[:8]} and {theirs[:8]}): the scoring that wrote them was "
            "interrupted between its two files; score again"
        )
    if (ours is None) != (theirs is None) and output.exists():
        raise DataError(f"{output} and {npz} are not one pair (only one of them carries {PAIR_KEY}); score again")
    return arrays


def read_results_file(path: str | Path) -> dict:
    """One results JSON of relkt evaluate; a DataError naming it when it is missing, not JSON, or not scores (no
    `lareqa` block)."""
    if not Path(path).exists():
        raise DataError(f"{path}: no such results file (write it with python -m relkt.cli.evaluate --output {path})")
    try:
        results = read_json(path, "results JSON")
    except DataError as e:
        raise DataError(f"{path}: not a results JSON ({str(e).removeprefix(f'{path}: ')})") from None
    if not isinstance(results, dict) or not isinstance(results.get("lareqa"), dict):
        raise DataError(f"{path}: not a results JSON of relkt evaluate (no 'lareqa' block of scores)")
    return results


def per_question_path(output: str | Path) -> Path:
    """Where results keep their per-question scores: `x.json` -> `x.per_question.npz`."""
    output = Path(output)
    return output.with_name(output.stem + ".per_question.npz")


def adjusted_path(output: str | Path) -> Path:
    """Where the language-aware ranking's results go beside the raw ones: `x.json` -> `x.adjusted.json`."""
    output = Path(output)
    return output.with_name(output.stem + ".adjusted.json")


def write_evaluation(result: Evaluation, output: str | Path) -> Path:
    """The results JSON at `output` and its per-question scores beside it (`per_question_path`), as one unit; the
    language-aware ranking's, when scored, at `adjusted_path(output)` the same way (written first: the raw pair is
    the one a rerun looks for)."""
    pairs = [(result.adjusted, adjusted_path(output))] if result.adjusted is not None else []
    for scored, path in [*pairs, (result, output)]:
        written = write_result_pair(scored.results, scored.per_question, path)
    return written
