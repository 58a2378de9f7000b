import json

import keras
import numpy as np
import pytest

from relkt.config.sections import ScheduleSection
from relkt.errors import ConfigError
from relkt.training.run_harness import RunHarness


class Fixed:
    """An evaluator (relkt.metrics.evaluator's protocol) that gives the same metrics whatever it is shown."""

    name, primary_metric = "fixed", "m"

    def __init__(self, metrics):
        self.metrics = metrics

    def __call__(self, encoder):
        return dict(self.metrics)


class Scores(Fixed):
    """Each call the next of `scores` as `m`."""

    def __init__(self, scores):
        self.scores = iter(scores)

    def __call__(self, encoder):
        return {"m": next(self.scores)}


def harness(tmp_path, eval_every=10_000, timing=None, **schedule):
    """A harness without a model; `timing`: its evaluation-timing arguments (eval_within_epoch, eval_per_epoch)."""
    return RunHarness(
        tmp_path,
        encoder=None,
        optimizer=keras.optimizers.Adam(1.0),
        evaluators=[],
        primary_metric="m",
        eval_every=eval_every,
        schedule=ScheduleSection(**schedule),
        training_info={},
        checkpoint_every=10_000,
        **(timing or {}),
    )


def rates(h, steps):
    seen = []
    for _ in range(steps):
        h.before_step()
        seen.append(float(h.optimizer.learning_rate.numpy()))
        h.after_step({})
    return seen


@pytest.mark.parametrize(
    "within_epoch, per_epoch, evaluated", [(False, 0, [3, 6, 9]), (True, 0, [1, 4, 6, 9]), (False, 2, [1, 3, 6, 8])]
)
def test_evaluation_steps_count_globally_or_within_each_epoch(tmp_path, within_epoch, per_epoch, evaluated):
    """Two epochs of 5 steps, eval_every 3. Counted globally: after global steps 3, 6, 9. Within each epoch, as
    CL-ReLKT's scripts do (batch i evaluated when i % 3 == 0, i from 0): after steps 1 and 4 of each epoch, i.e.
    global 1, 4 and 6, 9. Twice an epoch (the teacher script's `i % (5 // 2) == 0`, at most 2): batches 0 and 2, not
    4: global 1, 3 and 6, 8."""
    h = harness(tmp_path, eval_every=3, timing={"eval_within_epoch": within_epoch, "eval_per_epoch": per_epoch})
    h.epoch_steps = 5
    seen = []
    h.evaluate = lambda schedule=True: seen.append(h.state.global_step) or False
    for _ in range(2):
        for _ in range(5):
            h.after_step({})
        h.state.epoch, h.state.step_in_epoch = h.state.epoch + 1, 0  # end_epoch, less its checkpoint
    assert seen == evaluated


def test_warmup_ramps_linearly_then_holds_the_rate(tmp_path):
    # warmup 4 at rate 1.0: steps 1..4 use 1/4, 2/4, 3/4, 4/4, then the rate itself.
    assert rates(harness(tmp_path, learning_rate=1.0, warmup_steps=4), 6) == pytest.approx([0.25, 0.5, 0.75, 1, 1, 1])


def test_warmup_scales_a_halved_rate_and_no_warmup_keeps_it(tmp_path):
    h = harness(tmp_path / "a", learning_rate=1.0, warmup_steps=4)
    h.state.learning_rate = 0.5  # a plateau halved it during warmup: the ramp follows the new rate
    assert rates(h, 2) == pytest.approx([0.125, 0.25])
    assert rates(harness(tmp_path / "b", learning_rate=1.0), 3) == pytest.approx([1, 1, 1])


def test_decay_falls_to_zero_at_the_runs_end_after_warmup_and_follows_a_halved_rate(tmp_path):
    """Warmup 2, 6 steps in all, rate 1.0: steps 0, 1 ramp (1/2, 2/2); steps 2..5 decay over the 4 left, progress
    0, 1/4, 2/4, 3/4: linear 1, 3/4, 1/2, 1/4; cosine (1 + cos(pi p)) / 2 = 1, 0.854, 0.5, 0.146."""
    for decay, expected in (("linear", [0.5, 1, 1, 0.75, 0.5, 0.25]), ("cosine", [0.5, 1, 1, 0.8536, 0.5, 0.1464])):
        h = harness(tmp_path / decay, learning_rate=1.0, warmup_steps=2, decay=decay)
        h.total_steps = 6
        assert rates(h, 6) == pytest.approx(expected, abs=1e-4)
    h = harness(tmp_path / "halved", learning_rate=1.0, decay="linear")
    h.total_steps = 4
    h.state.learning_rate = 0.5  # a plateau halving multiplies the decayed rate
    assert rates(h, 4) == pytest.approx([0.5, 0.375, 0.25, 0.125])


def test_decay_without_the_runs_length_or_on_a_teacher_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="needs the run's length"):
        rates(harness(tmp_path, learning_rate=1.0, decay="linear"), 1)
    with pytest.raises(ConfigError, match="decay must be none, linear or cosine"):
        ScheduleSection(decay="step").validate()
    from relkt.config import TeacherConfig
    from relkt.config.config_io import from_dict

    with pytest.raises(ConfigError, match="schedule.decay: linear is a student's setting"):
        from_dict(TeacherConfig, {"schedule": {"decay": "linear"}})


def test_negative_warmup_is_refused():
    with pytest.raises(ConfigError, match="warmup_steps"):
        ScheduleSection(warmup_steps=-1).validate()


def trained_harness(tmp_path):
    from relkt.encoders.ngram_encoder import NgramEncoder

    enc = NgramEncoder(dim=4, num_buckets=16)
    enc.embed(["x"])
    optimizer = keras.optimizers.Adam(0.1)
    optimizer.build(enc.trainable_variables)
    return RunHarness(
        tmp_path,
        encoder=enc,
        optimizer=optimizer,
        evaluators=[],
        primary_metric="m",
        eval_every=10_000,
        schedule=ScheduleSection(learning_rate=0.1),
        training_info={},
        checkpoint_every=10_000,
    )


def test_a_truncated_checkpoint_falls_back_to_the_previous_one(tmp_path):
    h = trained_harness(tmp_path)
    h.state.global_step = 3
    h.save_checkpoint()
    h.state.global_step = 5
    h.save_checkpoint()
    arrays = tmp_path / "checkpoint" / "arrays.npz"
    arrays.write_bytes(arrays.read_bytes()[:100])  # a disk that lost the end of the newest checkpoint
    again = trained_harness(tmp_path)
    again.restore()
    assert again.state.global_step == 3  # the previous checkpoint, not a traceback
    (tmp_path / "checkpoint.prev" / "state.json").write_text("{")
    from relkt.errors import CheckpointError

    with pytest.raises(CheckpointError, match="neither checkpoint can be read"):
        trained_harness(tmp_path).restore()


def test_wall_time_sums_the_processes_of_a_resumed_run_up_to_each_checkpoint(tmp_path, monkeypatch):
    """A fake clock: the first process starts at t=100 and checkpoints at 130 (30 s); work after that checkpoint is
    lost with the process. The second starts at 1,000 (the gap between sessions does not count), resumes and
    checkpoints at 1,020: 30 + 20 = 50 s."""
    clock = iter([100.0, 130.0, 1_000.0, 1_020.0])
    monkeypatch.setattr("relkt.training.run_harness.time.monotonic", lambda: next(clock))
    first = trained_harness(tmp_path)
    first.save_checkpoint()
    again = trained_harness(tmp_path)
    again.restore()
    assert again.state.wall_seconds == 30.0
    again.save_checkpoint()
    assert again.state.wall_seconds == 50.0


def test_a_non_finite_loss_stops_before_anything_is_saved(tmp_path):
    from relkt.errors import NonFiniteError

    h = trained_harness(tmp_path)
    h.after_step({"loss": 1.0})
    with pytest.raises(NonFiniteError, match="step 2: the training loss is nan"):
        h.after_step({"loss": float("nan")})
    assert not (tmp_path / "checkpoint").exists()
    h.encoder.weights[0].assign(h.encoder.weights[0].numpy() * float("nan"))
    with pytest.raises(NonFiniteError, match="ngram_embedding.* holds NaN or inf"):
        h.check_finite_weights()


def finished_run(tmp_path, dev_scores):
    """A run evaluated once per step with `dev_scores`, then finished; its folder."""
    h = trained_harness(tmp_path)
    h.evaluators = [Scores(dev_scores)]
    for step in range(1, len(dev_scores) + 1):
        h.encoder.weights[0].assign(np.roll(h.encoder.weights[0].numpy(), 1, axis=-1))  # each step changes the model
        h.state.global_step = step
        h.evaluate()
        h.save_checkpoint()
    h.finish({})
    return h


def embed_export(path, texts):
    from relkt.encoders.registry import build_encoder

    return build_encoder(f"hub:{path}").embed(texts)


def test_a_run_ending_at_its_best_step_links_last_to_best_and_drops_the_spare_checkpoint(tmp_path):
    h = finished_run(tmp_path, [0.1, 0.3])  # step 2, the last, is the best
    best, last = tmp_path / "best", tmp_path / "last"
    own = ("relkt.json", "README.md")  # each export's record and model card are its own
    variables = sorted(p.relative_to(best) for p in best.rglob("*") if p.is_file() and p.name not in own)
    assert variables and all((best / v).stat().st_ino == (last / v).stat().st_ino for v in variables)
    assert json.loads((last / "relkt.json").read_text())["training"]["step"] == 2
    assert not (tmp_path / "checkpoint.prev").exists() and (tmp_path / "checkpoint").exists()
    texts = ["a question", "an answer"]
    np.testing.assert_allclose(embed_export(last, texts), h.encoder.embed(texts), rtol=1e-6)
    # A later best/ (a run trained on) is swapped in, never written in place: last/ keeps its model.
    h.encoder.weights[0].assign(np.roll(h.encoder.weights[0].numpy(), 1, axis=-1))
    h.state.global_step = 3
    h.evaluators = [Fixed({"m": 0.9})]
    h.evaluate()
    assert not np.allclose(embed_export(best, texts), embed_export(last, texts))


def test_a_run_ending_past_its_best_step_exports_last_in_full(tmp_path):
    h = finished_run(tmp_path, [0.3, 0.1])  # best at step 1, training ended at step 2
    best, last = tmp_path / "best", tmp_path / "last"
    assert (best / "saved_model.pb").stat().st_ino != (last / "saved_model.pb").stat().st_ino
    texts = ["a question"]
    np.testing.assert_allclose(embed_export(last, texts), h.encoder.embed(texts), rtol=1e-6)
    assert not np.allclose(embed_export(best, texts), embed_export(last, texts))
    assert json.loads((best / "relkt.json").read_text())["training"]["step"] == 1


def test_a_checkpoint_written_before_the_optimizer_was_built_resumes(tmp_path):
    """`eval.at_start` checkpoints step 0 before the first step builds the optimizer; a run killed before its next
    checkpoint (a full disk at the first best/ export did it) resumes from there with a fresh optimizer."""
    from relkt.encoders.ngram_encoder import NgramEncoder

    def unbuilt():
        enc = NgramEncoder(dim=4, num_buckets=16)
        enc.embed(["x"])
        return RunHarness(
            tmp_path,
            encoder=enc,
            optimizer=keras.optimizers.Adam(0.1),
            evaluators=[Fixed({"m": 0.5})],
            primary_metric="m",
            eval_every=10_000,
            schedule=ScheduleSection(learning_rate=0.1),
            training_info={},
            checkpoint_every=10_000,
            eval_at_start=True,
        )

    h = unbuilt()
    h.evaluate_at_start()
    assert not h.optimizer.built and (tmp_path / "checkpoint").exists()
    again = unbuilt()
    again.restore()
    assert again.state.global_step == 0 and len(again.state.history) == 1 and again.optimizer.built
    assert [v.path.split("/")[-1] for v in again.optimizer.variables[:2]] == ["iteration", "learning_rate"]
    assert all(not np.any(v.numpy()) for v in again.optimizer.variables[2:])  # Adam's moments: fresh zeros
    # A checkpoint past step 0 that lacks optimizer state is another optimizer: refused, not half-restored.
    again.state.global_step = 4
    again.optimizer = keras.optimizers.Adam(0.1)
    again.save_checkpoint()
    from relkt.errors import CheckpointError

    with pytest.raises(CheckpointError, match="optimizer variables"):
        unbuilt().restore()


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_the_training_log_has_the_loss_every_ten_steps_between_evaluations(synthetic_data, tmp_path):
    """curves.png once drew the loss from the evaluations alone (a short student: two points); train.jsonl and the
    curves now hold it every TRAIN_LOG_EVERY steps, with the rate, whatever eval.every_steps is."""
    from relkt.cli import train_teacher
    from relkt.training.run_harness import TRAIN_LOG_EVERY
    from tests.helpers.runs import tiny_config

    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 25, "eval.every_steps": 100})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    log = [json.loads(line) for line in (tmp_path / "run" / "train.jsonl").read_text().splitlines()]
    assert TRAIN_LOG_EVERY == 10 and [entry["step"] for entry in log] == [10, 20]
    assert all(np.isfinite(entry["train/loss"]) and entry["learning_rate"] > 0 for entry in log)
    evaluations = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [e["step"] for e in evaluations] == [25]  # the step budget's one evaluation
    assert (tmp_path / "run" / "curves.png").stat().st_size > 0 and any((tmp_path / "run" / "tensorboard").iterdir())


def test_the_training_log_averages_fixed_windows_that_a_resume_continues(tmp_path):
    """Entries every 10 steps, each the mean of its 10 steps' losses; a run checkpointed at step 13 and resumed in a
    new process logs the same entries as one that never stopped (before, the first window after a resume averaged
    only the steps since it)."""
    from relkt.training.run_harness import TRAIN_LOG_EVERY

    losses = [float(i % 7) for i in range(1, 31)]
    whole = trained_harness(tmp_path / "whole")
    for x in losses:
        whole.after_step({"loss": x})
    first = trained_harness(tmp_path / "resumed")
    for x in losses[:13]:
        first.after_step({"loss": x})
    first.save_checkpoint()
    again = trained_harness(tmp_path / "resumed")
    again.restore()
    for x in losses[13:]:
        again.after_step({"loss": x})
    expected = [np.mean(losses[i - TRAIN_LOG_EVERY : i]) for i in (10, 20, 30)]
    assert [e["train/loss"] for e in whole.state.train_log] == pytest.approx(expected)
    assert again.state.train_log == whole.state.train_log


def test_keras_logs_reach_the_harness_as_each_batch_s_own_values(tmp_path):
    """Keras's batch logs are means since the pass began; HarnessCallback resets the model's metrics after each
    batch, so the harness receives every batch's own loss (what the fixed windows average)."""
    from relkt.training.run_harness import HarnessCallback

    seen = []

    class Recorder(RunHarness):
        def after_step(self, logs):
            seen.append(float(logs["loss"]))
            return False

    h = trained_harness(tmp_path)
    h.__class__ = Recorder
    model = keras.Sequential([keras.Input((1,)), keras.layers.Dense(1, use_bias=False, kernel_initializer="zeros")])
    model.compile(optimizer=keras.optimizers.SGD(0.0), loss="mse")  # the rate 0 keeps every batch's loss its own
    x = np.zeros((3, 1), "float32")
    y = np.array([[1.0], [2.0], [3.0]], "float32")
    history = model.fit(x, y, batch_size=1, shuffle=False, verbose=0, callbacks=[HarnessCallback(h)])
    assert seen == pytest.approx([1.0, 4.0, 9.0])  # not the running means 1, 2.5, 4.67
    assert history.history["loss"] == pytest.approx([14 / 3])  # the pass's mean, as the progress line shows it
