import keras
import pytest

from relkt.config.sections import ScheduleSection
from relkt.errors import ConfigError
from relkt.training.run_harness import RunHarness


def harness(tmp_path, **schedule):
    return RunHarness(tmp_path, encoder=None, optimizer=keras.optimizers.Adam(1.0), evaluate=dict,
                      primary_metric="m", eval_every=10_000, schedule=ScheduleSection(**schedule),
                      training_info={}, checkpoint_every=10_000)


def rates(h, steps):
    seen = []
    for _ in range(steps):
        h.before_step()
        seen.append(float(h.optimizer.learning_rate.numpy()))
        h.after_step({})
    return seen


def test_warmup_ramps_linearly_then_holds_the_rate(tmp_path):
    # warmup 4 at rate 1.0: steps 1..4 use 1/4, 2/4, 3/4, 4/4, then the rate itself.
    assert rates(harness(tmp_path, learning_rate=1.0, warmup_steps=4), 6) == pytest.approx([0.25, 0.5, 0.75, 1, 1, 1])


def test_warmup_scales_a_halved_rate_and_no_warmup_keeps_it(tmp_path):
    h = harness(tmp_path / "a", learning_rate=1.0, warmup_steps=4)
    h.state.learning_rate = 0.5  # a plateau halved it during warmup: the ramp follows the new rate
    assert rates(h, 2) == pytest.approx([0.125, 0.25])
    assert rates(harness(tmp_path / "b", learning_rate=1.0), 3) == pytest.approx([1, 1, 1])


def test_negative_warmup_is_refused():
    with pytest.raises(ConfigError, match="warmup_steps"):
        ScheduleSection(warmup_steps=-1).validate()
