"""Slow: learn from SQuAD train, be judged on XQuAD-R whole; a student for Finnish, which has no QA file at all."""

import json

import pytest
import yaml

from relkt.cli import evaluate, train_student
from relkt.encoders.export import export_encoder
from relkt.encoders.ngram_encoder import NgramEncoder
from tests.helpers.data import SHARED_DATA

pytestmark = pytest.mark.slow


@pytest.fixture
def shared():
    for sub in ("squad-train/en.json", "xquad-r/en.json", "parallel/fi.tsv"):
        if not (SHARED_DATA / sub).exists():
            pytest.skip(f"{SHARED_DATA / sub} not found (the shared data folder beside the checkout)")
    return SHARED_DATA


def test_a_finnish_student_from_parallel_text_alone_scored_on_xquad_r_whole(shared, tmp_path):
    teacher = export_encoder(NgramEncoder(dim=32, num_buckets=4096), tmp_path / "teacher")
    run = tmp_path / "student"
    config = {
        "output_dir": str(run),
        "seed": 0,
        "verbose": 0,
        "teacher": {"spec": f"hub:{teacher}"},
        "data": {
            "data_dir": str(shared / "squad-train"),
            "split_fractions": [0.8, 0.2, 0.0],
            "test_dir": str(shared / "xquad-r"),
            "student_langs": ["fi"],
            "corpus_dir": str(shared / "parallel"),
            "corpus_pairs_per_lang": 200,
            "corpus_dev_pairs": 100,
            "max_train_questions": 100,
        },
        "distill": {"batch_size": 16, "epochs": 1},
        "eval": {"every_steps": 10, "primary_metric": "corpus/fi/P@1", "max_questions": 50},
        "schedule": {"learning_rate": 0.01},
    }
    (tmp_path / "student.yaml").write_text(yaml.safe_dump(config))
    assert train_student.main(["--config", str(tmp_path / "student.yaml")]) == 0
    summary = json.loads((run / "summary.json").read_text())
    assert summary["examples"] == 300 and summary["corpus_pairs"] == 200  # 100 English QA examples + 200 Finnish pairs
    assert "dev/corpus/fi/P@1" in json.loads((run / "metrics.jsonl").read_text().splitlines()[-1])
    out = tmp_path / "test.json"
    assert (
        evaluate.main(
            [
                "--config",
                str(run / "config.yaml"),
                "--split",
                "test",
                "--xx-en-unit",
                "article",
                "--no-progress",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert result["setup"]["scored_whole"] and result["setup"]["source"].endswith("xquad-r")
    assert all(result["lareqa"]["per_language"][lang]["n_questions"] == 1190 for lang in result["setup"]["langs"])
    assert result["setup"]["xx_en_units"]["article"] == 48  # XQuAD-R's English articles, not SQuAD train's
