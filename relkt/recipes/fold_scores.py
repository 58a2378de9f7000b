"""A fold's scores: a model on a run's own test split, kept while the export it scored is the one there (a run trained
on to more epochs has a new `best/`; its score is then redone, never reported stale). Crossval and the group students
score through here."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from relkt.io import read_bytes, read_json
from relkt.jobs.pool import run_pool
from relkt.jobs.scoring import score, write_evaluation


def score_run(
    spec: str,
    run_config_path: Path,
    output: Path,
    langs: Sequence[str] | None = None,
    max_length: int | None = None,
) -> None:
    """`spec` on a run's test split (its own split, from its config.yaml). A score already written is kept while
    the model it scored is the one there now (a run trained on to more epochs may have a new `best/`, a fold's
    zero-shot may now be another base; its score is then redone, never reported stale)."""
    from relkt.encoders.encoder_kind import kind_of  # deferred: TensorFlow

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
    takes = kind_of(spec).takes_max_length  # a hub export keeps its length
    result = score(spec, data, "test", langs, max_length=max_length if takes else None, progress=False)
    result.results["setup"]["config"] = str(run_config_path)
    result.results["setup"]["export"] = identity
    write_evaluation(result, output)


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
