"""The `README.md` model card every export carries, in the shape Hugging Face and Kaggle Models show: YAML front matter
(languages, base model, training data, license, tags), then what the model is for, how to load it, and its metrics
with the command that made them. Written from the export's own `relkt.json`, so the card says only what the export
records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

CARD_FILE = "README.md"


def _section(config: dict[str, Any], name: str) -> dict[str, Any]:
    value = config.get(name)
    return value if isinstance(value, dict) else {}


def card_facts(metadata: dict[str, Any]) -> dict[str, Any]:
    """What the card states, read off `relkt.json`: stage, base model, languages, training data, dev metric."""
    training = metadata.get("training") or {}
    config = training.get("config") if isinstance(training.get("config"), dict) else {}
    data = _section(config, "data")
    stage = training.get("stage", "export")
    if stage == "student":
        base = training.get("student_base") or training.get("teacher") or ""
        langs = [data.get("source_lang", "en"), *(data.get("student_langs") or [])]
    elif stage == "teacher":
        base = training.get("base_encoder") or _section(config, "encoder").get("spec", "")
        langs = [*(data.get("train_langs") or []), *(data.get("answer_langs") or [])]
    else:
        base = training.get("teacher") or training.get("base_encoder") or ""
        langs = []
    sources = [data.get("data_dir"), data.get("corpus_dir"), *(data.get("more_qa") or [])]
    sources += [*(data.get("more_pairs") or {}), *(data.get("native_qa") or {})]
    return {
        "stage": stage,
        "kind": metadata.get("kind", ""),
        "dim": metadata.get("dim"),
        "base_model": str(base),
        "languages": [x for x in dict.fromkeys(langs) if isinstance(x, str) and x != "all"],
        "datasets": [str(x) for x in sources if x],
        "step": training.get("step"),
        "epoch": training.get("epoch"),
        "dev": training.get("dev") or {},
        "relkt_version": metadata.get("relkt_version", ""),
    }


def model_card(metadata: dict[str, Any], folder: str | Path) -> str:
    """The card of the export at `folder` whose `relkt.json` is `metadata`."""
    facts = card_facts(metadata)
    folder = Path(folder)
    front = {
        "library_name": "relkt",
        "tags": ["sentence-embeddings", "cross-lingual-retrieval", "question-answering", "cl-relkt", facts["stage"]],
        "language": facts["languages"] or None,
        "base_model": facts["base_model"] or None,
        "datasets": facts["datasets"] or None,
        "license": "other",
        "license_details": "the base model's license and each training data set's own apply",
    }
    front = {k: v for k, v in front.items() if v is not None}
    spec = f"{facts['kind']}:{folder}" if facts["kind"] in ("muse", "bert") else f"hub:{folder}"
    dev = "\n".join(f"| {name} | {value} |" for name, value in facts["dev"].items()) or "| (none recorded) | |"
    run = folder.parent
    lines = [
        "---",
        yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# relkt {facts['stage']}: {run.name}/{folder.name}",
        "",
        f"A {facts['kind'] or 'relkt'} sentence encoder ({facts['dim']} dimensions) trained by relkt "
        f"{facts['relkt_version']} the CL-ReLKT way ({facts['stage']} stage), from `{facts['base_model'] or '?'}`: "
        "questions and answer sentences or passages in "
        f"{', '.join(facts['languages']) or 'the languages of its data'} embedded in one space, for cross-lingual "
        "answer retrieval (rank candidates by cosine similarity).",
        "",
        f"Training data: {', '.join(f'`{x}`' for x in facts['datasets']) or 'see relkt.json'}. The run's whole "
        "config is in this folder's `relkt.json` (`training.config`) and beside it in `../config.yaml`.",
        "",
        "## Load it",
        "",
        "```python",
        "import tensorflow as tf, tensorflow_hub as hub, tensorflow_text  # noqa: F401 (its ops)",
        f'model = hub.load("{folder}")',
        'embeddings = model(tf.constant(["Where is the river?"]))   # (1, D), unit length',
        "```",
        "",
        f'From relkt: `relkt evaluate --encoder {spec} ...`, or `relkt.api.score("{spec}", ...)`; as a next stage\'s '
        f"teacher: `--set teacher.spec={spec}`.",
        "",
        "## Metrics",
        "",
        f"Dev, at step {facts['step']} (epoch {facts['epoch']}), the metric the run chose its export by:",
        "",
        "| metric | value |",
        "|---|---|",
        dev,
        "",
        "Test metrics are not part of an export (a run never reads its test split while training). Score them with:",
        "",
        f"    relkt evaluate --config {run}/config.yaml --encoder {spec} --split test --output {run}/test.json",
        "",
    ]
    return "\n".join(lines)
