"""A fold's scores: a model on a run's own test split, kept while the export it scored is the one there (a run trained
on to more epochs has a new `best/`; its score is then redone, never reported stale). Crossval and the group students
score through here."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from relkt.io import read_bytes, read_json
from relkt.jobs.pool import run_pool
from relkt.jobs.scoring import read_per_question, score, write_evaluation, write_result_pair


@dataclass(frozen=True)
class FoldScore:
    """One score of a fold: `spec` on the test split of the run whose config is `run_config`, written to `output`.
    `best_of`: for a run's `last/`, the score of its `best/`, taken over (marked so) when the two are one export."""

    spec: str
    run_config: Path
    output: Path
    best_of: FoldScore | None = None
    max_length: int | None = None  # tokens a text (relkt.recipes.fold_scores.length_for)


def score_fold(scores: Sequence[FoldScore], langs: Sequence[str] | None = None) -> None:
    """Every score of a fold in one pass, in order (a `last/` after its `best/`)."""
    for job in scores:
        if job.best_of is not None and export_identity(job.spec) == export_identity(job.best_of.spec):
            take_over(job.best_of.output, job.output)
        else:
            score_run(job.spec, job.run_config, job.output, langs, job.max_length)


def take_over(best_score: Path, output: Path) -> None:
    """`best_score`'s results written again at `output`, marked as the same export's (a `last/` that is `best/`)."""
    results = read_json(best_score, "results JSON")
    setup = {k: v for k, v in results["setup"].items() if k not in ("encode_seconds", "score_seconds")}
    results["setup"] = {**setup, "same_export_as": best_score.name}
    write_result_pair(results, read_per_question(best_score), output)


def score_run(
    spec: str,
    run_config_path: Path,
    output: Path,
    langs: Sequence[str] | None = None,
    max_length: int | None = None,
) -> None:
    """`spec` on a run's test split (its own split, from its config.yaml), at `max_length` tokens a text when given
    (`length_for`: only a kind that takes one). A score already written is kept while
    the model it scored is the one there now (a run trained on to more epochs may have a new `best/`, a fold's
    zero-shot may now be another base; its score is then redone, never reported stale)."""
    identity = export_identity(spec)
    if output.exists():
        scored = read_json(output, "results JSON").get("setup", {})
        # An export is known by its relkt.json (a copy linked in from another fold folder is the same model); a base
        # model (`muse`, `minilm`: no relkt.json) by its spec.
        if scored.get("export") == identity and (identity is not None or scored.get("encoder") == spec):
            print(f"kept {output}")
            return
        print(f"rescoring {output}: {spec} is not the model it scored")
    data = run_pool(run_config_path)
    result = score(spec, data, "test", langs, max_length=max_length, progress=False)
    result.results["setup"]["config"] = str(run_config_path)
    result.results["setup"]["export"] = identity
    write_evaluation(result, output)


def length_for(spec: str, max_length: int | None) -> int | None:
    """`max_length` where `spec`'s kind takes one (a hub export keeps the length it was exported with): None else."""
    from relkt.encoders.encoder_kind import kind_of  # deferred: TensorFlow

    return max_length if max_length and kind_of(spec).takes_max_length else None


def rebuild_spec(base_spec: str, export: Path) -> str:
    """A trained export as the spec its base's kind reads it by (muse:DIR, bert:DIR: their length still chooseable)."""
    from relkt.encoders.encoder_kind import kind_of  # deferred: TensorFlow

    return kind_of(base_spec).rebuild_spec(str(export))


def export_identity(spec: str) -> str | None:
    """sha256 of the `relkt.json` of the export `spec` names (every export writes a new one: its time and training
    step); None for a base model (`muse`, `minilm`)."""
    path = spec.partition(":")[2]
    metadata = Path(path) / "relkt.json" if path else None
    return hashlib.sha256(read_bytes(metadata, "relkt.json")).hexdigest() if metadata and metadata.exists() else None
