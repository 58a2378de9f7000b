"""Every export carries its model card (`README.md`): languages, base model, training data, dev metric, and how to
load it; `hub.load` still reads the folder."""

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
        assert dev and all(f"| {name} | {value} |" in body for name, value in dev.items())
        assert f'hub.load("{folder}")' in body and "relkt evaluate --config" in body
        assert hub.load(str(folder))(tf.constant(["a question"])).shape[0] == 1
