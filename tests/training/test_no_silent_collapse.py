"""No silent collapse: a degenerate model, an empty language, a failed write or Ctrl-C ends a command with one line
and a non-zero exit code, never a result (issue "No silent collapse"). Each case is made here on tiny data: OS errors
through a real file-size limit where a test can set one, else a fault injected at the write call."""

import errno
import json
import resource
import sys
from pathlib import Path

import numpy as np
import pytest

from relkt.cli import evaluate, train_teacher
from relkt.cli.common import final_line
from relkt.encoders.export import export_encoder
from relkt.encoders.ngram_encoder import NgramEncoder
from tests.helpers.runs import tiny_config


def leftovers(folder: Path) -> list[str]:
    """Temporary files and folders a failed write could leave behind (atomic writes and exports name them so)."""
    return sorted(
        str(p.relative_to(folder))
        for p in folder.rglob("*")
        if p.name.endswith(".tmp") or ".writing" in p.name or p.name.endswith(".old")
    )


def one_error_line(err: str) -> str:
    """stderr of a failed command: exactly one line, no traceback."""
    lines = [x for x in err.splitlines() if x.strip()]
    assert "Traceback" not in err and len(lines) == 1, err
    return lines[0]


def test_a_teacher_that_collapses_stops_naming_the_step_and_exports_nothing(synthetic_data, tmp_path, capsys):
    # Learning rate 1e12, evaluated every step: one step maps every text to the zero vector (finite: the NaN
    # guard does not see it). Before, this ended "teacher done" with exit 0 and a best/ of zeros.
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.learning_rate": 1e12, "eval.every_steps": 1})
    assert train_teacher.main(["--config", str(cfg)]) == 2
    line = one_error_line(capsys.readouterr().err)
    assert line.startswith("error: step 1: dev evaluation: ") and "the model has collapsed" in line
    assert "has no best/: no evaluation before this one was good" in line  # it says what is (not) on disk
    out = tmp_path / "run"
    assert not (out / "best").exists() and not (out / "summary.json").exists() and not leftovers(out)


def test_with_a_starting_point_the_collapsed_teacher_leaves_a_finite_unit_norm_best(synthetic_data, tmp_path, capsys):
    import tensorflow as tf

    cfg = tiny_config(
        tmp_path, synthetic_data, **{"schedule.learning_rate": 1e12, "eval.every_steps": 1, "eval.at_start": True}
    )
    assert train_teacher.main(["--config", str(cfg)]) == 2
    assert "keeps the best/ of step 0" in one_error_line(capsys.readouterr().err)
    emb = tf.saved_model.load(str(tmp_path / "run" / "best"))(tf.constant(["alpha bravo", "delta echo golf"])).numpy()
    assert np.isfinite(emb).all() and np.allclose(np.linalg.norm(emb, axis=1), 1.0, atol=1e-5)


def test_evaluate_refuses_an_export_that_maps_text_to_zero_vectors(tiny_data, tmp_path, capsys):
    encoder = NgramEncoder(dim=8, num_buckets=64)
    encoder.embed(["build"])
    for w in encoder.weights:
        w.assign(np.zeros(w.shape, np.float32))
    export_encoder(encoder, tmp_path / "zeros")
    out = tmp_path / "scores.json"
    code = evaluate.main(
        [
            "--encoder",
            f"hub:{tmp_path / 'zeros'}",
            "--data-dir",
            str(tiny_data),
            "--split",
            "all",
            "--xx-en-unit",
            "none",
            "--output",
            str(out),
            "--no-progress",
        ]
    )
    assert code == 2
    line = one_error_line(capsys.readouterr().err)
    assert (
        line == "error: 12 of 12 question embeddings are zero vectors (first: row 0); the model has collapsed, "
        "and its scores would all tie"
    )
    assert not out.exists() and not evaluate.per_question_path(out).exists()


def test_a_language_file_with_no_questions_is_an_error_in_the_scoring_cli(tiny_data, capsys):
    doc = json.loads((tiny_data / "de.json").read_text())
    for article in doc["data"]:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = []
    (tiny_data / "de.json").write_text(json.dumps(doc))
    code = evaluate.main(["--encoder", "ngram", "--data-dir", str(tiny_data), "--split", "all", "--xx-en-unit", "none"])
    assert code == 2
    assert "de.json: no questions (every qas list is empty)" in one_error_line(capsys.readouterr().err)


@pytest.fixture
def file_size_limit():
    """Set a file-size limit (RLIMIT_FSIZE) inside the test; restored after. Python ignores SIGXFSZ, so a write
    past the limit fails with EFBIG, as under `ulimit -f`."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def set_limit(n_bytes: int) -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (n_bytes, hard))

    yield set_limit
    resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))


def test_a_failed_export_under_a_file_size_limit_ends_the_run_with_one_line(
    synthetic_data, tmp_path, capsys, file_size_limit
):
    # The export's variables (16 x 512 floats, 32 KB) exceed a 24 KB limit; config, log and metrics do not. Before,
    # TensorFlow's EFBIG (an OutOfRangeError) was taken by Keras for the end of the data and training went on.
    cfg = tiny_config(tmp_path, synthetic_data, **{"eval.every_steps": 3})
    file_size_limit(24_000)
    code = train_teacher.main(["--config", str(cfg)])
    file_size_limit(resource.RLIM_INFINITY)
    assert code == 1
    line = one_error_line(capsys.readouterr().err)
    out = tmp_path / "run"
    assert line == f"error: {out / 'best'}: cannot write the export (File too large)"
    assert not leftovers(out) and not (out / "best").exists() and not (out / "summary.json").exists()
    assert json.loads((out / "metrics.jsonl").read_text().splitlines()[-1])["step"] == 3  # it went no further


def fail_with(error_number: int):
    def fail(*args, **kwargs):
        raise OSError(error_number, __import__("os").strerror(error_number))

    return fail


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_full_disk_at_a_checkpoint_ends_the_run_with_one_line_and_a_rerun_finishes(
    synthetic_data, tmp_path, capsys, monkeypatch
):
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 6, "eval.every_steps": 3})
    monkeypatch.setattr("relkt.training.checkpoint.np.savez", fail_with(errno.ENOSPC))
    assert train_teacher.main(["--config", str(cfg)]) == 1
    out = tmp_path / "run"
    assert (
        one_error_line(capsys.readouterr().err)
        == f"error: {out / 'checkpoint'}: cannot write the checkpoint (No space left on device)"
    )
    assert not leftovers(out) and not (out / "checkpoint").exists()
    monkeypatch.undo()  # space again: the same command runs the run to its end
    assert train_teacher.main(["--config", str(cfg)]) == 0
    assert json.loads((out / "summary.json").read_text())["steps"] == 6


def test_a_read_only_output_folder_is_one_line(synthetic_data, tmp_path, capsys, monkeypatch):
    # Tests run as root here, for whom chmod does not make a folder read-only: the fault is injected where the run
    # folder is made, as a read-only filesystem answers it.
    out = tmp_path / "run"
    original = Path.mkdir

    def read_only(self, *args, **kwargs):
        if self == out:
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", read_only)
    assert train_teacher.main(["--config", str(tiny_config(tmp_path, synthetic_data))]) == 1
    assert one_error_line(capsys.readouterr().err) == f"error: {out}: Read-only file system"


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_evaluate_writes_its_json_and_per_question_file_both_or_neither(tiny_data, tmp_path, capsys, monkeypatch):
    out = tmp_path / "results" / "scores.json"
    args = [
        "--encoder",
        "ngram",
        "--data-dir",
        str(tiny_data),
        "--split",
        "all",
        "--xx-en-unit",
        "none",
        "--output",
        str(out),
        "--no-progress",
    ]
    monkeypatch.setattr("relkt.metrics.result_files.np.savez", fail_with(errno.ENOSPC))
    assert evaluate.main(args) == 1
    assert one_error_line(capsys.readouterr().err).endswith("cannot write (No space left on device)")
    assert sorted(p.name for p in out.parent.iterdir()) == []  # neither file, no temporary one
    monkeypatch.undo()
    assert evaluate.main(args) == 0
    assert out.exists() and evaluate.per_question_path(out).exists()


# Ctrl-C as Python raises it, and as pybind11 does when it lands inside TensorFlow's C++ (seen in an export's trace)
CTRL_C = [
    KeyboardInterrupt,
    lambda: RuntimeError(
        "pybind11::error_already_set: MISMATCH of original and normalized active exception types: ORIGINAL "
        "InvalidArgumentError REPLACED BY KeyboardInterrupt: <EMPTY MESSAGE>"
    ),
]


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
@pytest.mark.parametrize("ctrl_c", CTRL_C, ids=["KeyboardInterrupt", "pybind11"])
def test_ctrl_c_in_training_is_one_line_exit_130_and_the_rerun_resumes(
    synthetic_data, tmp_path, capsys, monkeypatch, ctrl_c
):
    from relkt.training.run_harness import RunHarness

    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 8, "eval.every_steps": 3})
    after_step = RunHarness.after_step

    def interrupted_at_step_5(self, logs):
        if self.state.global_step == 4:  # the 5th step's end: Ctrl-C arrives
            raise ctrl_c()
        return after_step(self, logs)

    monkeypatch.setattr(RunHarness, "after_step", interrupted_at_step_5)
    assert train_teacher.main(["--config", str(cfg)]) == 130
    assert (
        one_error_line(capsys.readouterr().err)
        == "interrupted at step 4; rerun the same command to resume (from its checkpoint of step 3)"
    )
    assert not leftovers(tmp_path / "run")
    monkeypatch.undo()
    assert train_teacher.main(["--config", str(cfg)]) == 0
    assert "resumed from" in (tmp_path / "run" / "train.log").read_text()


class _SwallowsCtrlC:
    """A finalizer in which SIGINT lands, like TensorFlow's `AtomicFunction.__del__` in a CI run: Python prints
    "Exception ignored in ..." and the KeyboardInterrupt is gone."""

    def __del__(self):
        import signal

        signal.raise_signal(signal.SIGINT)
        for _ in range(10_000):  # the handler runs at a loop's back edge, here, inside the finalizer
            pass


@pytest.fixture
def python_sigint():
    """Python's own SIGINT handler for the test: a background job (CI's, `nohup`) starts with SIGINT ignored, where
    no Ctrl-C can arrive and `catch_sigint` rightly leaves the disposition alone."""
    import signal

    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_a_ctrl_c_a_finalizer_swallows_still_stops_training(
    synthetic_data, tmp_path, capsys, monkeypatch, python_sigint
):
    from relkt.training.run_harness import RunHarness

    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 8, "eval.every_steps": 3})
    after_step = RunHarness.after_step

    def swallowed_at_step_5(self, logs):
        if self.state.global_step == 4:
            _SwallowsCtrlC()  # dropped at once: its __del__ runs and eats the KeyboardInterrupt
        return after_step(self, logs)

    monkeypatch.setattr(RunHarness, "after_step", swallowed_at_step_5)
    ignored = []  # what Python would print as "Exception ignored in ..."
    monkeypatch.setattr(sys, "unraisablehook", lambda u: ignored.append(u.exc_type))
    assert train_teacher.main(["--config", str(cfg)]) == 130
    assert ignored == [KeyboardInterrupt]  # swallowed once; the latch raised it again
    err = capsys.readouterr().err
    assert (
        one_error_line(err) == "interrupted at step 4; rerun the same command to resume (from its checkpoint of step 3)"
    )


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_ctrl_c_tensorflow_turns_into_another_error_still_stops_training(
    synthetic_data, tmp_path, capsys, monkeypatch, python_sigint
):
    """A real SIGINT whose KeyboardInterrupt TensorFlow's tracing unwinds as another error (CI: an export interrupted
    mid-trace came out as "AssertionError: Nesting violated ... FuncGraph" and the trainer exited 1)."""
    import signal

    from relkt.training.run_harness import RunHarness

    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 8, "eval.every_steps": 3})
    after_step = RunHarness.after_step

    def replaced_at_step_5(self, logs):
        if self.state.global_step == 4:
            try:
                signal.raise_signal(signal.SIGINT)
            except KeyboardInterrupt:
                raise AssertionError("Nesting violated for default stack of FuncGraph objects") from None
        return after_step(self, logs)

    monkeypatch.setattr(RunHarness, "after_step", replaced_at_step_5)
    assert train_teacher.main(["--config", str(cfg)]) == 130
    assert (
        one_error_line(capsys.readouterr().err)
        == "interrupted at step 4; rerun the same command to resume (from its checkpoint of step 3)"
    )


def test_the_same_error_with_no_ctrl_c_is_raised_as_it_is(synthetic_data, tmp_path, monkeypatch, python_sigint):
    from relkt.training.run_harness import RunHarness

    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 8, "eval.every_steps": 3})

    def fails(self, logs):
        raise AssertionError("Nesting violated for default stack of FuncGraph objects")

    monkeypatch.setattr(RunHarness, "after_step", fails)
    with pytest.raises(AssertionError, match="Nesting violated"):
        train_teacher.main(["--config", str(cfg)])


def test_catch_sigint_puts_back_the_handler_before_and_leaves_a_callers_own_alone(python_sigint):
    import signal

    from relkt.errors import catch_sigint, raise_if_interrupted

    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with catch_sigint():
        assert signal.getsignal(signal.SIGINT) is not signal.default_int_handler
        with pytest.raises(KeyboardInterrupt):
            signal.raise_signal(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):  # latched: raised again at the next check
            raise_if_interrupted()
        raise_if_interrupted()  # once only
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler

    def own(signum, frame):
        own.calls += 1

    own.calls = 0
    previous = signal.signal(signal.SIGINT, own)
    try:
        with catch_sigint():
            signal.raise_signal(signal.SIGINT)
            raise_if_interrupted()  # the caller's handler took it; nothing latched
        assert own.calls == 1 and signal.getsignal(signal.SIGINT) is own
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.parametrize("ctrl_c", CTRL_C, ids=["KeyboardInterrupt", "pybind11"])
def test_ctrl_c_in_evaluation_is_one_line_exit_130(tiny_data, tmp_path, capsys, monkeypatch, ctrl_c):
    def interrupt(*args, **kwargs):
        raise ctrl_c()

    monkeypatch.setattr("relkt.metrics.lareqa_evaluator.LareqaEvaluator.compute", interrupt)
    out = tmp_path / "scores.json"
    assert evaluate.main(["--encoder", "ngram", "--data-dir", str(tiny_data), "--output", str(out)]) == 130
    assert one_error_line(capsys.readouterr().err) == "interrupted; nothing was written"
    assert not out.exists()


def test_another_runtime_error_is_not_taken_for_ctrl_c(tiny_data, tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("something else")

    monkeypatch.setattr("relkt.metrics.lareqa_evaluator.LareqaEvaluator.compute", broken)
    with pytest.raises(RuntimeError, match="something else"):
        evaluate.main(["--encoder", "ngram", "--data-dir", str(tiny_data)])


def test_the_final_line_says_when_best_is_worse_than_the_starting_point(tmp_path):
    best = tmp_path / "best"
    summary = {"best": {"metric": "lareqa/mAP", "value": 0.05, "step": 4}}
    assert final_line("student", summary, best) == f"student done: best dev lareqa/mAP = 0.05 at step 4; model: {best}"
    worse = {**summary, "start": {"metric": "lareqa/mAP", "value": 0.211, "step": 0}}
    assert "WORSE than its starting point (dev lareqa/mAP = 0.211 at step 0)" in final_line("student", worse, best)
    kept = {"best": {"metric": "lareqa/mAP", "value": 0.211, "step": 0}, "start": worse["start"]}
    assert final_line("student", kept, best).endswith(
        "No trained step beat its starting point: best/ is the model it started from"
    )
    better = {"best": {"metric": "lareqa/mAP", "value": 0.3, "step": 8}, "start": worse["start"]}
    assert final_line("student", better, best) == final_line("student", {"best": better["best"]}, best)


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_a_student_records_its_starting_point_without_eval_at_start(synthetic_data, tmp_path, capsys):
    from tests.helpers.runs import finished_student

    finished_student(tmp_path, synthetic_data, **{"schedule.max_steps": 2, "eval.at_start": False})
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    history = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert summary["start"]["step"] == 0 and 0 < summary["start"]["value"] <= 1
    assert [h["step"] for h in history] == [2]  # recorded for the final line, not as an evaluation, nor exported
    assert "student done: best dev" in capsys.readouterr().out


def test_a_corrupt_language_file_the_run_never_reads_is_not_fingerprinted(synthetic_data, tmp_path):
    # An English-only teacher evaluated in English reads en.json alone; de.json is not its input.
    (synthetic_data / "de.json").write_text("{ broken")
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 2, "eval.langs": ["en"]})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    assert set(json.loads((tmp_path / "run" / "fingerprints.json").read_text())) == {"data/en.json"}


def test_progress_ends_at_the_steps_run(synthetic_data, tmp_path, capsys):
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 1, "verbose": 1})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    bars = [x for x in capsys.readouterr().out.splitlines() if " - loss: " in x]
    assert bars and bars[-1].strip().startswith("1/21 ")  # 1 step of the pass's 21, not "21/21"


@pytest.mark.slow
def test_a_real_sigint_stops_training_with_one_line_and_exit_130(synthetic_data, tmp_path):
    """The signal itself, not an injected KeyboardInterrupt: a trainer process gets SIGINT mid-run."""
    import signal
    import subprocess
    import time

    cfg = tiny_config(tmp_path, synthetic_data, **{"mining.online_epochs": 50, "eval.every_steps": 10})
    proc = subprocess.Popen(
        [sys.executable, "-m", "relkt.train_teacher", "--config", str(cfg)],
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=Path(__file__).resolve().parents[2],
        # A shell's background job inherits SIGINT ignored, and Python then never raises KeyboardInterrupt: give
        # the trainer the disposition a terminal's Ctrl-C meets.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    metrics = tmp_path / "run" / "metrics.jsonl"
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None and not (metrics.exists() and metrics.read_text().strip()):
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    last = err.strip().splitlines()[-1]
    assert last.startswith("interrupted at step ") and last.endswith(")") and "Traceback" not in err
    assert not leftovers(tmp_path / "run")
