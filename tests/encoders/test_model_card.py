"""Every export carries its model card (`README.md`): languages, base model, training data, dev metric, and how to
load it; `hub.load` still reads the folder."""

import json

import yaml

from relkt.encoders.export import read_metadata
from tests.helpers.runs import finished_student


def test_a_tiny_runs_best_carries_its_model_card(synthetic_data, tmp_path):
    import tensorflow as tf
    import tensorflow_hub as hub

    cfg, teacher = finished_student(tmp_path, synthetic_data, **{"schedule.max_steps": 3})
    for export in ("best", "last"):
        folder = tmp_path / "run" / export
        card = (folder / "README.md").read_text(encoding="utf-8")
        _, front, body = card.split("---", 2)
        meta = yaml.safe_load(front)
        assert meta["language"] == ["en", "de"] and meta["library_name"] == "relkt"
        assert meta["base_model"] == f"hub:{teacher}" and meta["datasets"] == [str(synthetic_data)]
        assert "student" in meta["tags"] and meta["license"] == "other"
        dev = read_metadata(folder)["training"]["dev"]
        assert dev and all(f"| {name} | {value:.4f} |" in body for name, value in dev.items())
        assert f'hub.load("{folder}")' in body and "relkt evaluate --config" in body
        assert hub.load(str(folder))(tf.constant(["a question"])).shape[0] == 1


def test_the_card_names_codes_data_sets_licenses_its_base_and_its_test_scores(tmp_path):
    from relkt.encoders.model_card import model_card

    teacher = tmp_path / "teacher" / "best"
    teacher.mkdir(parents=True)
    (teacher / "relkt.json").write_text(
        json.dumps({"kind": "muse", "training": {"stage": "teacher", "base_encoder": "muse"}})
    )
    metadata = {
        "kind": "muse",
        "dim": 512,
        "training": {
            "stage": "student",
            "teacher": f"muse:{teacher}",
            "languages": ["de", "el", "en"],
            "dev": {"xx_en/P@1": 0.123456789},
            "config": {"data": {"data_dir": "../shared/data/xquad-r", "student_langs": "all", "source_lang": "en"}},
        },
    }
    card = model_card(metadata, tmp_path / "student" / "best", test={"metrics": {"lareqa/mAP": 0.3}, "command": "c"})
    _, front, body = card.split("---", 2)
    meta = yaml.safe_load(front)
    assert meta["language"] == ["en", "de", "el"]  # codes, never the letters of `all`
    assert meta["base_model"].startswith("google/universal-sentence-encoder-multilingual/3")
    assert (
        meta["license"] == "apache-2.0"
        and "XQuAD-R (google-research-datasets/lareqa): cc-by-sa-4.0" in (meta["license_details"])
    )
    assert meta["datasets"] == ["XQuAD-R (google-research-datasets/lareqa)"]
    assert "| xx_en/P@1 | 0.1235 |" in body and "| lareqa/mAP | 0.3000 |" in body and "Made by: `c`" in body
    assert "never trained on el" in body  # a language mUSE cannot read, said as a limitation
    assert "--output " in body and "test.best.json" in body  # a command that writes beside test.json, never over
