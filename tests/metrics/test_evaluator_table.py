"""One evaluator table: an evaluator added by its module and one registration is asked for by name and seen in a
stage's dev evaluation (metrics log, primary metric), in scoring (API and results JSON), in the printed tables and on
the command line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from relkt import api
from relkt.cli import evaluate, train_teacher
from relkt.config import PoolSection
from relkt.errors import ConfigError
from relkt.metrics.evaluator import EVALUATORS, named_evaluators, register_evaluator
from relkt.reports.tables import evaluation_table
from tests.helpers.runs import tiny_config


class QuestionSpreadEvaluator:
    """A toy: how far apart the pool's questions lie (1 - mean cosine of each to the mean question)."""

    name = "toy_spread"
    primary_metric = "toy_spread/spread"

    def __init__(self, questions: list[str], batch_size: int = 64):
        self.questions, self.batch_size = questions, batch_size

    @classmethod
    def for_pool(cls, pool, batch_size: int) -> QuestionSpreadEvaluator:
        return cls(pool.question_texts(), batch_size)

    def __call__(self, encoder) -> dict[str, float]:
        q = encoder.encode(self.questions, batch_size=self.batch_size)
        mean = q.mean(axis=0)
        spread = 1.0 - float(np.mean(q @ (mean / np.linalg.norm(mean))))
        return {"toy_spread/spread": spread, "toy_spread/n": float(len(self.questions))}


@pytest.fixture(autouse=True)
def toy():
    """The one registration (`@register_evaluator` on the class, here undone after each test so that the table the
    other tests see holds only relkt's own)."""
    register_evaluator(QuestionSpreadEvaluator)
    yield
    EVALUATORS.pop("toy_spread")


def test_the_toy_is_in_the_table_by_its_one_registration():
    assert "toy_spread" in named_evaluators()


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_dev_evaluation_logs_it_and_can_select_on_it(synthetic_data, tmp_path):
    changes = {"eval.evaluators": ["toy_spread"], "eval.primary_metric": "toy_spread/spread", "mining.online_epochs": 0}
    cfg = tiny_config(tmp_path, synthetic_data, **changes)
    assert train_teacher.main(["--config", str(cfg)]) == 0
    history = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert {"dev/toy_spread/spread", "dev/toy_spread/n", "dev/lareqa/mAP"} <= set(history[0])
    assert history[0]["primary"] == history[0]["dev/toy_spread/spread"]


def test_scoring_the_tables_and_the_command_line_show_it(synthetic_data, tmp_path, capsys):
    data = PoolSection(data_dir=str(synthetic_data))
    result = api.score("ngram", data, "all", xx_en_units=[], progress=False, evaluators=["toy_spread"])
    assert 0 < result.metric("toy_spread/spread") < 2 and result.metric("toy_spread/n") > 0
    assert "toy_spread/spread" in evaluation_table(result.results)
    out = tmp_path / "scored.json"
    argv = ["--encoder", "ngram", "--data-dir", str(synthetic_data), "--split", "all", "--xx-en-unit", "none"]
    assert evaluate.main([*argv, "--no-progress", "--evaluator", "toy_spread", "--output", str(out)]) == 0
    assert "toy_spread/spread" in capsys.readouterr().out
    assert json.loads(out.read_text())["more_metrics"]["toy_spread/spread"] == pytest.approx(
        result.metric("toy_spread/spread"), abs=1e-6
    )


def test_a_name_no_evaluator_holds_is_refused_naming_the_setting(synthetic_data, tmp_path):
    with pytest.raises(ConfigError, match=r"evaluators: 'nope' is not an evaluator that can be asked for by name"):
        api.score("ngram", PoolSection(data_dir=str(synthetic_data)), "all", evaluators=["nope"])
    cfg = tiny_config(tmp_path, synthetic_data, **{"eval.evaluators": ["nope"]})
    assert train_teacher.main(["--config", str(cfg)]) == 2
