"""The stage-2 loss terms are one table: a term added here, in the test, trains with the paper's three."""

import json

import numpy as np
import pytest

from relkt.config import StudentConfig, load_config
from relkt.encoders.export import export_encoder
from relkt.encoders.ngram_encoder import NgramEncoder
from relkt.errors import ConfigError
from relkt.losses import TERMS, DistillationLoss, LossTerm
from relkt.stages.student_trainer import StudentTrainer
from tests.helpers.runs import student_config

# Not in the paper: the student's own English question stays on the teacher's, d(T(q_en), S(q_en)).
KEEP_EN = LossTerm("keep_en", student="q_en", teacher="q_en", weight="keep_en")


def test_an_added_term_is_measured_weighted_and_serialized():
    # T(q_en) = (1, 0), S(q_x) = (0, 1), T(d) = S(d) = (1, 0), S(q_en) = (0.6, 0.8):
    # q = 2, d = 0, dq = 2, keep_en = 0.16 + 0.64 = 0.8; gamma 10, beta 1, lambda 1, omega 0.5, keep_en 2:
    # 10 * (2 + 0 + 1 + 1.6) = 46. The student's outputs are [S(q_x), S(d), S(q_en)]: inputs in table order.
    loss = DistillationLoss(
        gamma=10,
        weights={"beta": 1, "lam": 1, "omega": 0.5, "keep_en": 2},
        objective="q+d+dq+keep_en",
        terms=(*TERMS, KEEP_EN),
    )
    assert loss.student_inputs == ["q", "d", "q_en"] and loss.teacher_targets == ["q_en", "d"]
    y_true = np.array([[[1, 0], [1, 0]]], np.float32)
    y_pred = np.array([[[0, 1], [1, 0], [0.6, 0.8]]], np.float32)
    per_example, parts = loss.components(y_true, y_pred)
    np.testing.assert_allclose(per_example, [46.0], rtol=1e-6)
    np.testing.assert_allclose(float(parts["keep_en"][0]), 0.8, rtol=1e-6)
    # Off (not in the objective) it does not train: 10 * 3 = 30.
    off = DistillationLoss(gamma=10, weights={"beta": 1, "lam": 1, "omega": 0.5}, terms=(*TERMS, KEEP_EN))
    # keep_en off: its student input S(q_en) is no column (no forward pass) and it is not measured.
    assert off.student_inputs == ["q", "d"] and off.measurement_names() == ["q", "d", "dq"]
    np.testing.assert_allclose(off.components(y_true, y_pred)[0], [30.0], rtol=1e-6)
    clone = DistillationLoss.from_config(loss.get_config())
    assert clone.terms == loss.terms and clone.get_config() == loss.get_config()


def test_a_term_needs_known_columns_and_a_weight():
    with pytest.raises(ValueError, match="student input 'q_de'; valid: q, d, q_en"):
        LossTerm("x", student="q_de", teacher="q_en", weight="x")
    with pytest.raises(ValueError, match="distill.weights has no 'keep_en'"):
        DistillationLoss(objective="q+keep_en", terms=(*TERMS, KEEP_EN))


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_the_trainer_trains_a_step_with_a_term_the_test_added(synthetic_data, tmp_path):
    teacher = export_encoder(NgramEncoder(dim=16, num_buckets=512, seed=1), tmp_path / "teacher")
    changes = {"distill.objective": "q+d+dq+keep_en", "distill.weights": {"keep_en": 2.0}, "distill.epochs": 1}
    cfg = load_config(StudentConfig, student_config(tmp_path, synthetic_data, teacher, **changes))
    with pytest.raises(ConfigError, match=r"distill.objective .*unknown: keep_en; valid: q, d, dq"):
        StudentTrainer(cfg)  # the shipped table lacks it: refused before any data loads
    trainer = StudentTrainer(cfg, terms=(*TERMS, KEEP_EN))
    assert trainer.model.columns == ["q", "d", "q_en"]
    assert trainer.run()["steps"] > 0
    history = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert all(np.isfinite(h["train/keep_en"]) for h in history if "train/keep_en" in h)
    assert any("train/keep_en" in h for h in history)
    # The trained student's loss on a batch is the table's weighted sum, keep_en at weight 2.
    ex, rows = trainer.examples, list(range(4))
    features = {
        "q": trainer.student.preprocess([ex.q_target[i] for i in rows]),
        "d": trainer.student.preprocess([ex.d_student[i] for i in rows]),
        "q_en": trainer.student.preprocess([ex.q_source[i] for i in rows]),
    }
    y_pred = np.asarray(trainer.model(features))
    per_example, parts = trainer.loss.components(trainer.example_targets()[rows], y_pred)
    d, w = cfg.distill, cfg.distill.weights
    by_hand = d.gamma * (
        w["beta"] * parts["q"] + w["lam"] * parts["d"] + w["omega"] * parts["dq"] + 2.0 * parts["keep_en"]
    )
    np.testing.assert_allclose(per_example, by_hand, rtol=1e-5)
    assert float(np.max(parts["keep_en"])) > 0  # the student moved off the teacher's English


def test_the_modules_table_is_the_table_the_code_reads():
    from relkt.losses import loss_terms

    rows = [line.split("|")[1:5] for line in loss_terms.__doc__.splitlines() if line.startswith("| ")][1:]
    documented = [(name.strip(), s.split(":")[0].strip(), t.split(":")[0].strip(), w.strip()) for name, s, t, w in rows]
    assert documented == [(t.name, t.student, t.teacher, t.weight) for t in TERMS]
