"""The `README.md` model card every export carries, in the shape Hugging Face and Kaggle Models show: YAML front matter
(languages, base model, training data, license, tags), then what the model is for, how to load it, and its metrics
with the command that made them. Written from the export's own `relkt.json`, so the card says only what the export
records."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from relkt.io import read_json

CARD_FILE = "README.md"


# Data sets relkt's runs read, by the folder name they ship under (../shared/data/README.md): name and license.
KNOWN_DATASETS = {
    "xquad-r": ("XQuAD-R (google-research-datasets/lareqa)", "cc-by-sa-4.0"),
    "xquad": ("XQuAD (deepmind/xquad)", "cc-by-sa-4.0"),
    "squad-train-full": ("SQuAD v1.1 train (rajpurkar/SQuAD-explorer)", "cc-by-sa-4.0"),
    "squad-train": ("SQuAD v1.1 train, its first 11 articles", "cc-by-sa-4.0"),
    "mlqa": ("MLQA v1 (facebookresearch/MLQA)", "cc-by-sa-3.0"),
    "parallel": ("OPUS-MT test sets: Tatoeba (CC BY 2.0 FR), NTREX-128 (CC BY-SA 4.0), TICO-19 (CC0)", "various"),
    "xor-questions": ("XOR-TyDi QA questions (AkariAsai/XORQA)", "mit"),
    "arcd": ("ARCD (husseinmozannar/SOQAL)", "mit"),
    "cmrc2018": ("CMRC 2018 (ymcui/cmrc2018)", "cc-by-sa-4.0"),
    "drcd": ("DRCD (DRCKnowledgeTeam/DRCD)", "cc-by-sa-3.0"),
    "iapp": ("iApp Wiki QA (iapp-technology/iapp-wiki-qa-dataset)", "mit"),
    "tquad": ("TQuAD (TQuad/turkish-nlp-qa-dataset)", "unknown"),
}
# Pretrained bases by relkt's spec: the name a hub shows, its license, the languages it was trained to read.
KNOWN_BASES = {
    "muse": (
        "google/universal-sentence-encoder-multilingual/3 (mUSE-small v3)",
        "apache-2.0",
        ["ar", "de", "en", "es", "fr", "it", "ja", "ko", "nl", "pl", "pt", "ru", "th", "tr", "zh"],
    ),
    "minilm": ("sentence-transformers/all-MiniLM-L6-v2", "apache-2.0", ["en"]),
}
LANG_CODE = re.compile(r"^[a-z]{2,3}$")


def _section(config: dict[str, Any], name: str) -> dict[str, Any]:
    value = config.get(name)
    return value if isinstance(value, dict) else {}


def _codes(value: Any) -> list[str]:
    """Language codes of a setting: a list of codes, never the letters of `all`."""
    return [x for x in value if isinstance(x, str) and LANG_CODE.match(x)] if isinstance(value, list) else []


def dataset_of(path: str) -> tuple[str, str]:
    """(name, license) of a data folder relkt knows by its folder name, else (the path, "unknown")."""
    for part in reversed(Path(str(path)).parts):
        if part in KNOWN_DATASETS:
            return KNOWN_DATASETS[part]
    return str(path), "unknown"


def base_of(spec: str, depth: int = 0) -> str:
    """The pretrained model a spec comes from: a relkt export's own base (read from its relkt.json), followed back."""
    kind, _, arg = str(spec).partition(":")
    if not arg and kind in KNOWN_BASES:
        return kind
    meta_file = Path(arg).expanduser() / "relkt.json"
    if arg and depth < 8 and meta_file.is_file():
        try:
            meta = read_json(meta_file, "relkt.json")
        except (OSError, ValueError):
            return str(spec)
        upstream = card_facts(meta)["base_spec"]
        return base_of(upstream, depth + 1) if upstream else str(spec)
    return str(spec)


def card_facts(metadata: dict[str, Any]) -> dict[str, Any]:
    """What the card states, read off `relkt.json`: stage, base model, languages, training data, dev metric."""
    training = metadata.get("training") or {}
    config = training.get("config") if isinstance(training.get("config"), dict) else {}
    data = _section(config, "data")
    stage = training.get("stage", "export")
    if stage == "student":
        base = training.get("student_base") or training.get("teacher") or ""
        langs = [data.get("source_lang", "en"), *_codes(data.get("student_langs"))]
    elif stage == "teacher":
        base = training.get("base_encoder") or _section(config, "encoder").get("spec", "")
        langs = [*_codes(data.get("train_langs")), *_codes(data.get("answer_langs"))]
    else:
        base = training.get("teacher") or training.get("base_encoder") or ""
        langs = []
    langs += _codes(training.get("languages"))  # what the run read, when its settings said `all`
    sources = [data.get("data_dir"), data.get("corpus_dir"), *(data.get("more_qa") or [])]
    sources += [*(data.get("more_pairs") or {}), *(data.get("native_qa") or {})]
    sources += [_section(config, "align").get("pairs_dir")]
    named = dict(dataset_of(str(x)) for x in sources if x)
    dev = training.get("dev") or {}
    return {
        "stage": stage,
        "kind": metadata.get("kind", ""),
        "dim": metadata.get("dim"),
        "base_spec": str(base),
        "base_model": base_of(str(base)) if base else "",
        "languages": [x for x in dict.fromkeys(langs) if LANG_CODE.match(str(x))],
        "datasets": named,
        "step": training.get("step"),
        "epoch": training.get("epoch"),
        "dev": {k: round(float(v), 4) for k, v in dev.items() if isinstance(v, (int, float))},
        "relkt_version": metadata.get("relkt_version", ""),
    }


def model_card(metadata: dict[str, Any], folder: str | Path, test: dict[str, Any] | None = None) -> str:
    """The card of the export at `folder` whose `relkt.json` is `metadata`; `test`: its test scores ({"metrics":
    {name: value}, "command": the command that made them}), when a recipe computed them."""
    facts = card_facts(metadata)
    folder = Path(folder)
    base_name, base_license, base_reads = KNOWN_BASES.get(facts["base_model"], (facts["base_model"], "", []))
    front = {
        "library_name": "relkt",
        "tags": ["sentence-embeddings", "cross-lingual-retrieval", "question-answering", "cl-relkt", facts["stage"]],
        "language": facts["languages"] or None,
        "base_model": base_name or None,
        "datasets": list(facts["datasets"]) or None,
        "license": base_license or "other",
        "license_details": "the base model's license; each training data set keeps its own: "
        + (", ".join(f"{name}: {lic}" for name, lic in facts["datasets"].items()) or "none recorded"),
    }
    front = {k: v for k, v in front.items() if v is not None}
    spec = f"{facts['kind']}:{folder}" if facts["kind"] in ("muse", "bert") else f"hub:{folder}"
    dev = "\n".join(f"| {name} | {value:.4f} |" for name, value in facts["dev"].items()) or "| (none recorded) | |"
    unseen = [x for x in facts["languages"] if base_reads and x not in base_reads]
    run = folder.parent
    lines = [
        "---",
        yaml.safe_dump(front, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# relkt {facts['stage']}: {run.name}/{folder.name}",
        "",
        f"A {facts['kind'] or 'relkt'} sentence encoder ({facts['dim']} dimensions) trained by relkt "
        f"{facts['relkt_version']} the CL-ReLKT way ({facts['stage']} stage), from {base_name or '?'}: "
        "questions and answer sentences or passages in "
        f"{', '.join(facts['languages']) or 'the languages of its data'} embedded in one space, for cross-lingual "
        "answer retrieval (rank candidates by cosine similarity).",
        "",
        "Training data: "
        + ("; ".join(f"{name} ({lic})" for name, lic in facts["datasets"].items()) or "none recorded")
        + ". The run's whole config is in this folder's `relkt.json` (`training.config`) and in `../config.yaml`.",
        "",
        "## Intended use and limitations",
        "",
        "Retrieving answer sentences or passages for questions across languages (LAReQA's pools, XX->EN search). "
        + (
            f"The base model was never trained on {', '.join(unseen)}: those languages come from this run's own "
            "data alone and score well below the others. "
            if unseen
            else ""
        )
        + "Only what the metrics below name was measured: other domains, languages and tasks were not. It inherits "
        "its base model's and its data's biases.",
        "",
        "## Load it",
        "",
        "```python",
        "import tensorflow as tf, tensorflow_hub as hub, tensorflow_text  # noqa: F401 (its ops)",
        f'model = hub.load("{folder}")',
        'embeddings = model(tf.constant(["Where is the river?"]))   # (1, D), unit length',
        *(
            [
                "# answers: each sentence with its paragraph, mixed as it learned "
                f"(weight {metadata['answer_context']['weight']:.3g})",
                'answers = model.response_encoder(tf.constant(["It flows north."]), tf.constant(["The river ..."]))',
            ]
            if isinstance(metadata.get("answer_context"), dict)
            else []
        ),
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
    ]
    if test:
        lines += ["Test (never read in training), as fractions:", "", "| metric | value |", "|---|---|"]
        lines += [f"| {k} | {float(v):.4f} |" for k, v in test.get("metrics", {}).items()]
        lines += ["", f"Made by: `{test.get('command', '')}`", ""]
    else:
        lines += ["Test metrics were not computed for this export. Score them with:", ""]
    lines += [
        f"    relkt evaluate --config {run}/config.yaml --split test --output {run}/test.{folder.name}.json",
        "",
    ]
    return "\n".join(lines)
