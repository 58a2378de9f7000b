from relkt.training.plateau_policy import PlateauPolicy


def test_halves_every_lr_patience_and_stops_at_stop_patience():
    p = PlateauPolicy(lr_patience=2, stop_patience=5)
    decisions = [p.update(v, step) for step, v in enumerate([0.1, 0.3, 0.2, 0.25, 0.3, 0.29, 0.1, 0.2])]
    assert [d.improved for d in decisions] == [True, True, False, False, False, False, False, False]
    # Evaluations without a new best: 1, 2 (halve), 3, 4 (halve), 5 (stop) ...
    assert [d.reduce_lr for d in decisions] == [False, False, False, True, False, True, False, True]
    assert [d.stop for d in decisions][:7] == [False] * 6 + [True]
    assert (p.best, p.best_step) == (0.3, 1)  # ties do not count as improvement


def test_state_round_trip():
    p = PlateauPolicy(lr_patience=3, stop_patience=4)
    p.update(0.5, 10)
    p.update(0.4, 20)
    q = PlateauPolicy(**p.state())
    assert q == p


def test_a_baseline_sets_the_value_to_beat_but_not_the_patience():
    p = PlateauPolicy(lr_patience=2, stop_patience=3)
    base = p.update(0.5, 0, schedule=False)  # the untrained model
    assert base.improved and (p.best, p.best_step) == (0.5, 0)
    # Training dips below the baseline, then climbs: patience counts against the best training evaluation
    # (0.3, then 0.4), so nothing is halved; only 0.6 beats the baseline and is kept.
    decisions = [p.update(v, step) for step, v in ((1, 0.3), (2, 0.4), (3, 0.45), (4, 0.6))]
    assert [d.improved for d in decisions] == [False, False, False, True]
    assert not any(d.reduce_lr or d.stop for d in decisions) and (p.best, p.best_step) == (0.6, 4)
    # Without the baseline flag the same values would have halved the rate at the second evaluation.
    q = PlateauPolicy(lr_patience=2, stop_patience=3)
    assert [q.update(v, s).reduce_lr for s, v in enumerate((0.5, 0.3, 0.4))] == [False, False, True]


def test_a_score_equal_but_for_float_noise_is_no_improvement():
    """A mean of per-language P@1 with the same 756 of 1,104 questions right, split differently across languages,
    came out 0.6847826086956521 then 0.6847826086956522 in a real run: a tie, so the rate halves; a real gain (one
    more question, +1/1104) is kept."""
    p = PlateauPolicy(lr_patience=1, stop_patience=5)
    decisions = [p.update(v, s) for s, v in enumerate((0.6847826086956521, 0.6847826086956522, 757 / 1104))]
    assert [d.improved for d in decisions] == [True, False, True]
    assert [d.reduce_lr for d in decisions] == [False, True, False] and p.best_step == 2
