"""Issue #81, nothing silent (fourth round): every setting's range checked before anything is written, a folder
relkt did not make never taken over, no write through a link, two files written as one, the API's arguments
checked, a named pipe refused, causes named right. Each test here failed on the main before it."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from relkt import api
from relkt.cli import evaluate, train_teacher
from relkt.config import StudentConfig, TeacherConfig, load_config, read_config_file
from relkt.config.config_io import with_overrides
from relkt.errors import ConfigError, DataError
from relkt.jobs.scoring import PAIR_KEY, per_question_path, read_per_question, write_result_pair
from tests.helpers.runs import tiny_config


@pytest.mark.parametrize(
    "setting, message",
    [
        ("triplet.margin=-1", "triplet.margin: -1.0 is out of range; valid: > 0"),
        ("verbose=5", "verbose: 5 is out of range; valid: 0 .. 2"),
        ("seed=-1", "seed: -1 is out of range"),
        ("seed=18446744073709551617", "seed: 18446744073709551617 is out of range"),
        ("output_dir=", "output_dir: empty"),
        ("distribute.devices=[banana]", "distribute.devices: 'banana' is not a device name"),
        ("distribute.strategy=multi_worker", "multi_worker needs TF_CONFIG"),
    ],
)
def test_a_value_out_of_its_range_is_refused_when_the_config_loads(setting, message, monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    with pytest.raises(ConfigError, match=message.replace(".", r"\.").replace("(", r"\(")):
        with_overrides(load_config(TeacherConfig), [setting])


def test_print_config_runs_the_same_checks(tmp_path, capsys):
    cfg = tiny_config(tmp_path, tmp_path / "data")
    assert train_teacher.main(["--config", str(cfg), "--set", "verbose=5", "--print-config"]) == 2
    assert "verbose: 5 is out of range" in capsys.readouterr().err


def test_a_key_given_twice_and_a_file_not_utf8_are_refused(tmp_path):
    twice = tmp_path / "twice.yaml"
    twice.write_text("output_dir: runs/a\nseed: 1\noutput_dir: runs/b\n")
    with pytest.raises(ConfigError, match="'output_dir' appears twice"):
        read_config_file(twice)
    latin = tmp_path / "latin.yaml"
    latin.write_bytes("output_dir: runs/caf\xe9\n".encode("latin-1"))
    with pytest.raises(ConfigError, match="not UTF-8 text"):
        read_config_file(latin)


def test_a_folder_relkt_did_not_make_is_never_written_into(synthetic_data, tmp_path, capsys):
    mine = tmp_path / "mine"
    (mine / "best").mkdir(parents=True)
    (mine / "best" / "notes.txt").write_text("my notes")
    (mine / "metrics.jsonl").write_text("{}")
    cfg = tiny_config(tmp_path, synthetic_data, output_dir=str(mine), **{"schedule.max_steps": 2})
    assert train_teacher.main(["--config", str(cfg)]) == 2
    assert "not a relkt run folder (it holds best, metrics.jsonl" in capsys.readouterr().err
    assert sorted(p.name for p in mine.rglob("*")) == ["best", "metrics.jsonl", "notes.txt"]
    assert (mine / "best" / "notes.txt").read_text() == "my notes"


def test_a_link_where_relkt_writes_is_refused_and_its_target_untouched(synthetic_data, tmp_path, capsys):
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me")
    for name in (".lock", "train.log"):
        run = tmp_path / f"run_{name.strip('.')}"
        run.mkdir()
        (run / ".relkt-run").write_text("a relkt run folder\n")
        (run / name).symlink_to(outside)
        cfg = tiny_config(tmp_path, synthetic_data, output_dir=str(run), **{"schedule.max_steps": 2})
        assert train_teacher.main(["--config", str(cfg)]) == 2
        assert f"holds symbolic links ({name})" in capsys.readouterr().err
        assert outside.read_text() == "keep me"


def test_a_run_refused_before_training_leaves_nothing_behind(synthetic_data, tmp_path, capsys):
    run = tmp_path / "new_run"
    cfg = tiny_config(tmp_path, synthetic_data, output_dir=str(run), **{"encoder.options": {"dim": 16, "bogus": 3}})
    assert train_teacher.main(["--config", str(cfg)]) == 2
    assert "of encoder ngram: it cannot be built with them (Unrecognized keyword arguments" in capsys.readouterr().err
    assert not run.exists()
    empty = tmp_path / "empty_run"
    empty.mkdir()
    cfg = tiny_config(tmp_path, synthetic_data, output_dir=str(empty), **{"encoder.options": {"dim": "abc"}})
    assert train_teacher.main(["--config", str(cfg)]) == 2
    assert "of encoder ngram: it cannot be built" in capsys.readouterr().err
    assert empty.is_dir() and not list(empty.iterdir())


def test_a_device_that_is_not_there_is_refused(synthetic_data, tmp_path, capsys):
    cfg = tiny_config(
        tmp_path,
        synthetic_data,
        **{"distribute.strategy": "mirrored", "distribute.devices": ["/gpu:7"], "schedule.max_steps": 2},
    )
    assert train_teacher.main(["--config", str(cfg)]) == 2
    assert "distribute.devices: /gpu:7 not on this machine" in capsys.readouterr().err


def test_scores_and_their_per_question_arrays_are_one_pair(tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    arrays = {"qas_id": np.array(["q1"]), "lang": np.array(["en"]), "AP": np.array([1.0])}
    write_result_pair({"lareqa": {"mAP": 0.5}}, arrays, a)
    write_result_pair({"lareqa": {"mAP": 0.9}}, arrays, b)
    assert PAIR_KEY not in read_per_question(a) and json.loads(a.read_text())[PAIR_KEY]
    per_question_path(a).write_bytes(per_question_path(b).read_bytes())  # b's arrays beside a's JSON
    with pytest.raises(DataError, match="are not one pair"):
        read_per_question(a)
    from relkt.recipes.comparison import load_per_question  # what trainers/compare.py and api.compare read

    with pytest.raises(DataError, match="are not one pair"):
        load_per_question(a)


def test_evaluate_config_checks_the_runs_data_fingerprints(synthetic_data, tmp_path, capsys):
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 2})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    en = synthetic_data / "en.json"
    doc = json.loads(en.read_text())
    doc["data"].pop()
    en.write_text(json.dumps(doc))
    run_config = tmp_path / "run" / "config.yaml"
    assert evaluate.main(["--config", str(run_config), "--split", "dev", "--no-progress"]) == 2
    assert "en.json: changed since the run" in capsys.readouterr().err


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: api.config("teacher", None, smoke="no"), "smoke: expected True or False"),
        (lambda: api.config("teacher", None, set="seed=3"), "set: expected a mapping"),
        (lambda: api.config("teacher", None, set=[1, 2]), "set: a list of 'key=value' strings"),
        (lambda: api.train_teacher({"output_dir": "x"}), "config: expected a TeacherConfig"),
        (lambda: api.train_student("x.yaml"), "config: expected a StudentConfig"),
        (lambda: api.train_teacher(load_config(StudentConfig)), "config: expected a TeacherConfig"),
        (lambda: api.score(42, None), "encoder: expected"),
        (lambda: api.coverage({"langs": "bn"}), "request: expected a CoverageRequest"),
        (lambda: api.CoverageRequest(langs="bn,fi"), r"CoverageRequest\.langs: expected list\[str\] \| None"),
        (lambda: api.TeachRequest(langs=["bn"], controls="ja"), r"TeachRequest\.controls: expected list\[str\]"),
    ],
)
def test_the_api_answers_a_wrong_argument_with_one_config_error_naming_it(call, message):
    with pytest.raises(ConfigError, match=message):
        call()


def test_a_jsonl_answer_offset_below_zero_is_refused(tmp_path):
    from relkt.data.jsonl_reader import read_jsonl_file

    row = {"id": "q", "lang": "en", "question": "Who?", "answer": "it.", "context": "Who wrote it.", "answer_start": -3}
    path = tmp_path / "qa.jsonl"
    path.write_text(json.dumps(row) + "\n")
    with pytest.raises(DataError, match=r"qa\.jsonl:1\.answer_start: -3 does not point at the answer"):
        read_jsonl_file(path)


def test_a_named_pipe_is_refused_not_read_forever(tmp_path):
    fifo = tmp_path / "en.json"
    os.mkfifo(fifo)
    code = (
        "import sys; from relkt.data.qa_source import QaSource\n"
        "try:\n    QaSource.open(sys.argv[1])\nexcept Exception as e:\n    print(e)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(fifo)], capture_output=True, text=True, timeout=60)
    assert "not a regular file or folder" in out.stdout


def test_an_empty_split_names_the_split_not_the_file(synthetic_data):
    from relkt.data.lareqa_pool import LareqaPool

    with pytest.raises(DataError, match="its test split is empty"):
        LareqaPool.load(synthetic_data, split="test", fractions=(1.0, 0.0, 0.0))


def test_a_pair_folder_that_gives_no_training_row_is_an_error_naming_it(tmp_path):
    from relkt.config.student_config import StudentDataSection
    from relkt.data.parallel import corpus_examples

    questions = tmp_path / "questions"
    questions.mkdir()
    (questions / "fi.tsv").write_text("id\tsplit\txx\ten\na\t\tMissä?\tWhere?\nb\t\tKuka?\tWho?\n", encoding="utf-8")
    data = StudentDataSection(student_langs=["fi"], more_pairs={str(questions): 0})
    with pytest.raises(DataError, match=r"more_pairs\..*fi\.tsv gives no training row"):
        corpus_examples(data, ["fi"], seed=0)


def test_a_users_format_taking_a_builtin_name_is_refused_when_it_registers():
    from relkt.data.qa_format import QaFormat, register_qa_format

    class Squad(QaFormat):
        name = "squad"

    with pytest.raises(ConfigError, match="'squad' is taken by relkt.data.qa_formats.squad"):
        register_qa_format(Squad)


def test_a_stray_summary_is_named_not_read_as_a_finished_run(synthetic_data, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    (run / ".relkt-run").write_text("a relkt run folder\n")
    (run / "summary.json").write_text("{}")
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 2})
    assert train_teacher.main(["--config", str(cfg)]) == 2
    assert "summary.json: not a relkt run summary" in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["float_input", "rank_one_output", "string_output"])
def test_a_savedmodel_that_is_no_sentence_encoder_is_named_at_load(tmp_path, kind):
    import tensorflow as tf

    from relkt.encoders import build_encoder
    from relkt.errors import EncoderError

    class FloatModel(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.float32)])
        def __call__(self, x):
            return tf.stack([x, x], axis=1)

    class RankOne(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def __call__(self, x):
            return tf.cast(tf.strings.length(x), tf.float32)

    class Strings(tf.Module):
        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def __call__(self, x):
            return tf.stack([x, x], axis=1)

    model = {"float_input": FloatModel, "rank_one_output": RankOne, "string_output": Strings}[kind]()
    path = tmp_path / kind
    tf.saved_model.save(model, str(path))
    message = {
        "float_input": "does not take a batch of strings",
        "rank_one_output": r"gives shape \(1,\) for one text",
        "string_output": r"gives string for one text; relkt needs float embeddings",
    }[kind]
    with pytest.raises(EncoderError, match=message):
        build_encoder(f"hub:{path}")


def test_a_tpu_strategy_with_no_tpu_is_one_config_error():
    from relkt.config.sections import DistributeSection
    from relkt.training.distribute import make_strategy

    with pytest.raises(ConfigError, match="distribute.strategy=tpu: no TPU to connect to"):
        make_strategy(DistributeSection(strategy="tpu"))


def test_print_config_refuses_a_weight_no_loss_term_reads(tmp_path, capsys):
    from relkt.cli import train_student
    from relkt.losses.loss_terms import TERMS
    from relkt.names import PAPER_WEIGHTS, TERM_OF_WEIGHT

    assert {t.weight: t.name for t in TERMS} == TERM_OF_WEIGHT and set(TERM_OF_WEIGHT) == set(PAPER_WEIGHTS)
    args = ["--set", "distill.weights.zeta=1", "--set", f"output_dir={tmp_path / 's'}", "--print-config"]
    assert train_student.main(args) == 2
    assert "distill.weights.zeta: no loss term reads this weight" in capsys.readouterr().err
    assert not (tmp_path / "s").exists()


def test_a_student_groups_message_names_the_group_once(tiny_data):
    from relkt.config.student_groups import StudentGroup
    from relkt.recipes.crossval import check_groups

    student = load_config(StudentConfig, None, [f"data.data_dir={tiny_data}", "data.student_langs=[de]"])
    groups = (StudentGroup("a", ("en",)), StudentGroup("b", ("de",)))
    with pytest.raises(ConfigError) as raised:
        check_groups(groups, student, student.data, ["en", "de"], lambda g: g.overrides("en", "out"), "setup x")
    assert str(raised.value).count("student_groups.a") == 1 and "hold only the source language" in str(raised.value)


def test_the_last_lines_print_absolute_paths_whatever_folder_ran_them(synthetic_data, tmp_path, capsys, monkeypatch):
    """output_dir and --output are read from the current folder (base: from the config file); what relkt wrote is
    printed absolute, so a relative path given never leaves where the files went unsaid."""
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 2, "output_dir": "run"})
    monkeypatch.chdir(tmp_path)
    assert train_teacher.main(["--config", str(cfg)]) == 0
    assert f"model: {tmp_path / 'run' / 'best'}" in capsys.readouterr().out
    args = ["--encoder", "hub:run/best", "--data-dir", str(synthetic_data), "--split", "dev", "--no-progress"]
    assert evaluate.main([*args, "--output", "scores.json"]) == 0
    assert f"wrote {tmp_path / 'scores.json'} and {tmp_path / 'scores.per_question.npz'}" in capsys.readouterr().out


def test_a_fold_score_of_a_base_model_is_kept_only_for_the_same_base(synthetic_data, tmp_path, capsys):
    """A base model has no relkt.json to know it by: a zero-shot score written for one base (here one marked as
    muse's) is redone when the fold's zero-shot is now another, never reported as the new one's."""
    from relkt.recipes.fold_scores import score_run

    cfg = tiny_config(tmp_path, synthetic_data)
    out = tmp_path / "zero_shot.json"
    score_run("ngram", cfg, out)
    score_run("ngram", cfg, out)
    assert f"kept {out}" in capsys.readouterr().out
    written = json.loads(out.read_text())
    written["setup"]["encoder"] = "muse"
    out.write_text(json.dumps(written))
    score_run("ngram", cfg, out)
    assert f"rescoring {out}: ngram is not the model it scored" in capsys.readouterr().out
    assert json.loads(out.read_text())["setup"]["encoder"] == "ngram"
