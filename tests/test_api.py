"""relkt driven from Python alone (relkt.api): configs built in code, teacher, student, scores and a 2-fold
cross-validation on tiny models, no argv anywhere; each call returns paths and metrics."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from relkt import api
from relkt.config import save_config
from relkt.errors import ConfigError, DataError
from relkt.jobs.results import RunResult
from tests.helpers.data import make_synthetic_lareqa

TINY_TEACHER = {
    "seed": 0,
    "verbose": 0,
    "data.train_langs": ["en"],
    "data.answer_langs": ["en"],
    "encoder.spec": "ngram",
    "encoder.options": {"dim": 16, "num_buckets": 512},
    "mining.bm25_epochs": 1,
    "mining.online_epochs": 0,
    "mining.bm25_top_end": 10,
    "triplet.batch_size": 4,
    "eval.every_steps": 50,
    "eval.primary_metric": "lareqa/mAP",
    "schedule.learning_rate": 0.01,
    "schedule.early_stop_patience": 0,
}


def tiny_student(teacher_spec: str, data_dir) -> dict:
    return {
        "seed": 0,
        "verbose": 0,
        "teacher.spec": teacher_spec,
        "data.data_dir": str(data_dir),
        "data.student_langs": ["de"],
        "distill.batch_size": 4,
        "distill.epochs": 1,
        "distill.document": "parallel",
        "eval.every_steps": 50,
        "eval.primary_metric": "xx_en/de/P@1",
        "schedule.learning_rate": 0.01,
        "schedule.early_stop_patience": 0,
    }


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_teacher_student_scores_and_crossval_from_python(synthetic_data, tmp_path):
    teacher_cfg = api.config(
        "teacher", set={**TINY_TEACHER, "data.data_dir": str(synthetic_data), "output_dir": str(tmp_path / "t")}
    )
    teacher = api.train_teacher(teacher_cfg)
    assert teacher.best.is_dir() and teacher.spec == f"hub:{tmp_path / 't' / 'best'}"
    assert teacher.summary["anchors"] == 42 and 0 < teacher.best_metric <= 1

    student_cfg = api.config(
        "student", set={**tiny_student(teacher.spec, synthetic_data), "output_dir": str(tmp_path / "s")}
    )
    student = api.train_student(student_cfg)
    assert student.summary["stage"] == "student" and student.summary["teacher_unchanged"]

    scores = api.score(student.spec, student_cfg.data, split="test", xx_en_units=["article"], progress=False)
    flat = scores.flat()
    assert scores.metric("xx_en_article/de/P@1") == scores.results["xx_en_article"]["de"]["P@1"]
    assert 0 <= flat["lareqa/mAP"] <= 1 and scores.output is None
    with pytest.raises(KeyError, match="no metric 'xx_en/fr/P@1'"):
        scores.metric("xx_en/fr/P@1")
    written = api.score("ngram", student_cfg.data, split="test", progress=False, output=tmp_path / "zs.json")
    assert json.loads(written.output.read_text())["setup"]["encoder"] == "ngram"

    # a 2-fold cross-validation of the same two stages: configs saved as files, the recipe called, pooled results
    save_config(
        api.config(
            "teacher",
            set={**TINY_TEACHER, "data.data_dir": str(synthetic_data), "output_dir": str(tmp_path / "cvt" / "run")},
        ),
        tmp_path / "t.yaml",
    )
    student_for_cv = tiny_student(f"hub:{tmp_path / 'cvt' / 'run'}/best", synthetic_data)
    save_config(api.config("student", set={**student_for_cv, "output_dir": str(tmp_path / "cvs")}), tmp_path / "s.yaml")
    first = api.cross_validate(tmp_path / "t.yaml", tmp_path / "s.yaml", tmp_path / "cv", folds=2, only_folds=[0])
    assert not first.complete and (tmp_path / "cv" / "fold0" / "student.json").exists()
    cv = api.cross_validate(tmp_path / "t.yaml", tmp_path / "s.yaml", tmp_path / "cv", folds=2)
    assert cv.complete and set(cv.pooled) == {"zero_shot", "teacher", "student", "student_last"}
    with np.load(tmp_path / "cv" / "student.per_question.npz") as z:
        qs = sorted(zip(z["qas_id"].tolist(), z["lang"].tolist()))
    assert len(qs) == len(set(qs)) and {lang for _, lang in qs} == {"en", "de"}  # every question once
    assert "XX->EN (article) P@1 McNemar" in cv.tables["comparison.md"].read_text()


def test_a_bad_setting_is_refused_in_python_as_on_the_command_line():
    with pytest.raises(ConfigError, match="distill.epochs must be >= 1"):
        api.config("student", set={"distill.epochs": 0})
    with pytest.raises(ConfigError, match="stage 'teachr'"):
        api.config("teachr")


def test_every_argument_of_the_api_is_checked_before_anything_runs(synthetic_data, tmp_path):
    data = api.config("student", set={"data.data_dir": synthetic_data}).data  # a Path in set= is its string
    assert data.data_dir == str(synthetic_data)
    bad = {
        "batch_size": (0, "batch_size: expected a whole number >= 1, got int 0"),
        "output": (123, "output: expected a file's path or None, got int 123"),
        "langs": ("en", "langs: expected a list of codes or None, got str 'en'"),
        "bogus": (1, "bogus: not an option of score; valid: langs, "),
    }
    for name, (value, message) in bad.items():
        with pytest.raises(ConfigError, match=re.escape(message)):
            api.score("ngram", data, split="all", progress=False, **{name: value})
    with pytest.raises(ConfigError, match=r"output_dir: object <object object at .*> is no setting value"):
        api.config("student", set={"output_dir": object()})

    with pytest.raises(DataError, match="no best step in its summary"):
        _ = RunResult(tmp_path / "run", {}, "ngram").best_metric

    changed = api.config("student", set={"data.data_dir": synthetic_data, "output_dir": str(tmp_path / "s")})
    changed.distill.epochs = -3  # changed after loading: checked again before anything is built
    with pytest.raises(ConfigError, match=r"config \(as changed after loading\): distill.epochs must be >= 1"):
        api.train_student(changed)
    assert not (tmp_path / "s").exists()


def test_compare_names_a_file_that_is_no_results_and_warns_when_languages_differ(tmp_path):
    two = make_synthetic_lareqa(tmp_path / "two", n_articles=6)
    three = make_synthetic_lareqa(tmp_path / "three", n_articles=6, langs=("en", "de", "fr"))
    for name, folder in (("two", two), ("three", three)):
        data = api.config("student", set={"data.data_dir": folder}).data
        api.score("ngram", data, split="all", progress=False, output=tmp_path / f"{name}.json")
    (tmp_path / "other.json").write_text('{"x": 1}')
    with pytest.raises(DataError, match="other.json: not a results JSON of relkt evaluate"):
        api.compare([tmp_path / "two.json", tmp_path / "other.json"])
    table = api.compare([tmp_path / "three.json", tmp_path / "two.json"])
    assert "**Not like for like**: the files score different languages (`three`: de, en, fr; `two`: de, en)" in table
    assert re.search(r"^\| fr \| [\d.]+ \| - \|", table, re.M)  # a language one file lacks reads '-'


def test_retrieve_ranks_a_users_own_pool_and_adjusts_within_languages():
    from relkt.errors import ConfigError

    questions = ["where is the river", "what is the number"]
    candidates = ["the river is here", "the number is seven", "der fluss ist hier", "die zahl ist sieben"]
    ranked = api.retrieve("ngram", questions, candidates, langs=["en", "en", "de", "de"], top_k=3)
    assert len(ranked.hits) == 2 and all(len(h) == 3 for h in ranked.hits)
    assert ranked.hits[0][0].text == "the river is here" and ranked.hits[1][0].text == "the number is seven"
    assert all(a.score >= b.score for h in ranked.hits for a, b in zip(h, h[1:]))  # best first
    centred = api.retrieve("ngram", questions, candidates, langs=["en", "en", "de", "de"], top_k=4, margin="center")
    by_lang = {h.index: h.score for h in centred.hits[0]}
    assert abs(by_lang[0] + by_lang[1]) < 1e-5 and abs(by_lang[2] + by_lang[3]) < 1e-5  # each language's mean 0
    for bad in ({"top_k": 0}, {"margin": "nearest"}, {"langs": ["en"]}):
        with pytest.raises(ConfigError):
            api.retrieve("ngram", questions, candidates, **bad)
    with pytest.raises(ConfigError, match=r"candidates\[1\]"):
        api.retrieve("ngram", questions, ["fine", "   "])
    again = api.retrieve("ngram", [questions[0]] * 3, candidates, top_k=1)  # one question asked thrice: no "collapse"
    assert [h[0].text for h in again.hits] == ["the river is here"] * 3


def test_score_refuses_a_language_named_twice_before_anything_loads():
    from relkt.errors import ConfigError

    with pytest.raises(ConfigError, match="langs: names de, en more than once"):
        api.score("ngram", None, "all", langs=["de", "en"] * 50000, progress=False)


class _Own:
    """A caller's own encoder: `encode(texts)` and nothing else, answering what `answer(n)` gives."""

    def __init__(self, answer):
        self.answer = answer

    def encode(self, texts):
        return self.answer(len(texts))


@pytest.mark.parametrize(
    "answer, message",
    [
        (lambda n: None, r"encode\(\) of \d+ texts returned None; expected an array of \d+ rows"),
        (lambda n: np.ones((n - 1, 4)), r"returned shape \(\d+, 4\)"),
        (lambda n: np.ones((n, 8, 1)), r"returned shape \(\d+, 8, 1\)"),
        (lambda n: np.full((n, 4), np.nan), r"NaN or infinite"),
        (lambda n: [["a"] * 4] * n, r"returned list"),  # of words: no numbers
    ],
)
def test_a_callers_own_encoder_is_asked_what_relkts_promise(tiny_data, answer, message):
    from relkt.config import PoolSection
    from relkt.errors import EncoderError

    with pytest.raises(EncoderError, match=message):
        api.score(_Own(answer), PoolSection(data_dir=str(tiny_data)), split="all")


def test_a_callers_own_encoder_answering_lists_is_scored(tiny_data):
    from relkt.config import PoolSection

    rng = np.random.default_rng(0)
    result = api.score(_Own(lambda n: rng.normal(size=(n, 8)).tolist()), PoolSection(data_dir=str(tiny_data)), "all")
    assert 0 < result.flat()["lareqa/mAP"] <= 1


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda d: api.score("ngram", _pool(d, split_fractions=[float("nan"), 0.5, 0.5])), r"not a finite number"),
        (lambda d: api.score("ngram", _pool(d), output="a\x00b"), r"holds a NUL byte"),
        (lambda d: api.score("ngram", _pool(d), output="x" * 300 + ".json"), r"a name of 305 bytes"),
        (lambda d: api.reproduce("x", setups=123), r"setups: expected the setups file's path, got int 123"),
        (lambda d: api.setups(["a"]), r"setups: expected the setups file's path, got list"),
    ],
)
def test_arguments_that_cannot_mean_anything_are_one_relkt_error(tiny_data, call, message):
    from relkt.errors import RelktError

    with pytest.raises(RelktError, match=message):
        call(tiny_data)


def _pool(data, **changes):
    from relkt.config import PoolSection

    return PoolSection(data_dir=str(data), **changes)


def test_a_run_folder_no_file_system_can_hold_is_one_relkt_error(tmp_path, tiny_data):
    import dataclasses

    from relkt.errors import WriteError
    from tests.helpers.runs import tiny_config

    config = api.config("teacher", tiny_config(tmp_path, tiny_data))
    for bad, message in (("a\x00b", "holds a NUL byte"), ("x" * 300, "a name of 300 bytes")):
        with pytest.raises(WriteError, match=message):
            api.train_teacher(dataclasses.replace(config, output_dir=str(tmp_path / bad)))
