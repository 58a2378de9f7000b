import keras
import numpy as np
import pytest

from relkt.losses import DistillationLoss, TripletLoss, distillation_loss, row_distance, triplet_loss

ONES = {"beta": 1, "lam": 1, "omega": 1}


def unit(*rows):
    x = np.array(rows, np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_triplet_loss_by_hand():
    # a = [1, 0]; p at 60 degrees (cos 0.5), n at 90 degrees (cos 0): cosine distances 0.5 and 1.0.
    # margin 0.6: max(0.5 - 1.0 + 0.6, 0) = 0.1. Second row: p = a, n = -a: max(0 - 2 + 0.6, 0) = 0.
    a = unit([1, 0], [1, 0])
    p = unit([0.5, np.sqrt(3) / 2], [1, 0])
    n = unit([0, 1], [-1, 0])
    np.testing.assert_allclose(triplet_loss(a, p, n, margin=0.6), [0.1, 0.0], atol=1e-6)
    # Squared L2 for unit vectors is 2 - 2cos: 1.0 and 2.0 -> max(1 - 2 + 0.6, 0) = 0 for row one.
    np.testing.assert_allclose(triplet_loss(a, p, n, margin=0.6, distance="squared_l2"), [0.0, 0.0], atol=1e-6)
    # The Loss class takes (batch, 3, dim) and averages over the batch: (0.1 + 0) / 2.
    y = np.stack([a, p, n], axis=1)
    assert float(TripletLoss(margin=0.6)(np.zeros(2), y)) == pytest.approx(0.05, abs=1e-6)


def test_mean_squared_is_keras_mse_the_squared_l2_over_the_dimensions():
    # [3, 0, 0, 0] vs [1, 0, 0, 2]: squared L2 4 + 0 + 0 + 4 = 8; over 4 dimensions: 2 (keras.losses.MSE's value).
    x, y = np.array([[3, 0, 0, 0]], np.float32), np.array([[1, 0, 0, 2]], np.float32)
    np.testing.assert_allclose(row_distance(x, y, "squared_l2"), [8.0])
    np.testing.assert_allclose(row_distance(x, y, "mean_squared"), [2.0])
    np.testing.assert_allclose(row_distance(x, y, "mean_squared"), keras.losses.MeanSquaredError(reduction=None)(x, y))


def test_distillation_reduction_sum_over_embedding_mean_over_batch():
    # One example: T(q_en) = [1, 0], S(q_x) = [0, 1]  -> ||.||^2 = 2
    #              T(d)    = [1, 0], S(d)   = [1, 0]  -> 0;   ||T(d) - S(q_x)||^2 = 2
    # Second example: everything equal -> 0.
    # gamma=10, beta=1, lambda=1, omega=0.5: example 1 = 10 * (2 + 0 + 1) = 30, example 2 = 0; mean 15.
    tq = np.array([[1, 0], [1, 0]], np.float32)
    sq = np.array([[0, 1], [1, 0]], np.float32)
    td = np.array([[1, 0], [1, 0]], np.float32)
    sd = np.array([[1, 0], [1, 0]], np.float32)
    np.testing.assert_allclose(
        distillation_loss(tq, sq, td, sd, gamma=10, weights={"beta": 1, "lam": 1, "omega": 0.5}), [30, 0]
    )
    loss = DistillationLoss(gamma=10, weights={"beta": 1, "lam": 1, "omega": 0.5})
    assert float(loss(np.stack([tq, td], 1), np.stack([sq, sd], 1))) == pytest.approx(15.0)
    # Table 6 variants switch terms off: "q" keeps beta only -> 10 * 2 / 2 = 10.
    assert float(
        DistillationLoss(gamma=10, weights={"beta": 1, "lam": 1, "omega": 0.5}, objective="q")(
            np.stack([tq, td], 1), np.stack([sq, sd], 1)
        )
    ) == pytest.approx(10.0)


@pytest.mark.parametrize(
    "cls, kwargs",
    [
        (TripletLoss, {"margin": 0.13, "distance": "squared_l2"}),
        (
            DistillationLoss,
            {
                "gamma": 100,
                "weights": {"beta": 0.1, "lam": 1, "omega": 0.01},
                "distance": "cosine",
                "objective": "q+d",
                "contrast": 0.5,
                "temperature": 0.1,
                "negatives": "bank",
            },
        ),
    ],
)
def test_config_round_trip(cls, kwargs):
    loss = cls(**kwargs)
    clone = cls.from_config(loss.get_config())
    assert clone.get_config() == loss.get_config()
    restored = keras.saving.deserialize_keras_object(keras.saving.serialize_keras_object(loss))
    assert isinstance(restored, cls) and restored.get_config() == loss.get_config()


def test_invalid_options_list_valid_ones():
    with pytest.raises(ValueError, match="valid: cosine, squared_l2"):
        TripletLoss(distance="l1")
    with pytest.raises(ValueError, match="unknown: qq; valid: q, d, dq"):
        DistillationLoss(objective="q+qq")
    with pytest.raises(ValueError, match="distinct loss terms"):
        DistillationLoss(objective="q+q")


def test_in_batch_infonce_by_hand_and_duplicates_masked():
    from relkt.losses.distances import in_batch_infonce

    # Anchors = keys = [e1, e2], temperature 1: logits [[1, 0], [0, 1]];
    # each row: -log(e^1 / (e^1 + e^0)) = log(1 + e^-1) = 0.3133.
    e = np.eye(2, dtype=np.float32)
    np.testing.assert_allclose(in_batch_infonce(e, e, 1.0), [np.log1p(np.exp(-1))] * 2, rtol=1e-5)
    # Both rows share the key e1 (one answer met in two languages): it is no negative of either row,
    # so each row's only candidate is its own key and the loss is 0 whatever the anchor.
    keys = np.array([[1, 0], [1, 0]], np.float32)
    np.testing.assert_allclose(in_batch_infonce(e, keys, 1.0), [0.0, 0.0], atol=1e-6)
    # Unnormalised inputs are compared by cosine: scaling changes nothing.
    np.testing.assert_allclose(in_batch_infonce(3 * e, 0.5 * e, 1.0), in_batch_infonce(e, e, 1.0), rtol=1e-5)


def test_contrast_adds_ranking_term_to_each_distance():
    # Orthogonal teacher targets, student = teacher: every distance is 0, each ranking term is
    # log(1 + e^(-1/0.5)) at temperature 0.5; contrast 2, gamma 1, beta = lambda = omega = 1:
    # per example 2 * (3 * log(1 + e^-2)) = 0.7616.
    t = np.eye(2, dtype=np.float32)
    per = np.log1p(np.exp(-2.0))
    y = np.stack([t, t], axis=1)
    parts = DistillationLoss(contrast=2.0, temperature=0.5).components(y, y)[1]
    for name in ("q_rank", "d_rank", "dq_rank"):
        np.testing.assert_allclose(parts[name], [per, per], rtol=1e-5)
    got = distillation_loss(t, t, t, t, gamma=1, weights=ONES, contrast=2.0, temperature=0.5)
    np.testing.assert_allclose(got, [6 * per] * 2, rtol=1e-5)
    # contrast = 0 is the paper's loss: exactly 0 here.
    np.testing.assert_allclose(distillation_loss(t, t, t, t, gamma=1, weights=ONES), [0, 0])
    with pytest.raises(ValueError, match="contrast must be >= 0"):
        DistillationLoss(contrast=-1)


def test_bank_negatives_rank_against_every_target():
    # One example, student = teacher = e1. In-batch there is nothing to rank against: loss 0.
    # Against a bank [e1, e2] (temperature 1): -log(e^1 / (e^1 + e^0)) = log(1 + e^-1) per ranking term;
    # gamma = beta = 1, lambda = omega = 0: the q term only.
    e1 = np.array([[1.0, 0.0]], np.float32)
    bank = np.eye(2, dtype=np.float32)
    y = np.stack([e1, e1], axis=1)
    batch = DistillationLoss(gamma=1, weights={"beta": 1, "lam": 0, "omega": 0}, contrast=1.0, temperature=1.0)
    assert float(batch(y, y)) == pytest.approx(0.0, abs=1e-6)
    loss = DistillationLoss(
        gamma=1, weights={"beta": 1, "lam": 0, "omega": 0}, contrast=1.0, temperature=1.0, negatives="bank"
    )
    with pytest.raises(ValueError, match="needs set_banks"):
        loss(y, y)
    loss.set_banks({"q_en": bank, "d": bank})
    assert float(loss(y, y)) == pytest.approx(np.log1p(np.exp(-1)), rel=1e-5)
    with pytest.raises(ValueError, match="valid: batch, bank"):
        DistillationLoss(negatives="all")


def test_components_are_the_terms_the_loss_is_made_of():
    """The columns the term table names, and the measurements the loss returns for logging (computed once).
    Rows: T(q_en) = (1, 0), S(q_x) = (0, 1), T(d) = (1, 0), S(d) = (1, 0): q = ||(1,-1)||^2 = 2, d = 0,
    dq = ||T(d) - S(q_x)||^2 = 2; loss = gamma (beta 2 + lam 0 + omega 2) = 10 (1 * 2 + 0 + 0.5 * 2) = 30."""
    tq, sq, td, sd = (np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), np.array([[1.0, 0.0]]), np.array([[1.0, 0.0]]))
    loss = DistillationLoss(gamma=10, weights={"beta": 1, "lam": 1, "omega": 0.5})
    assert loss.teacher_targets == ["q_en", "d"] and loss.student_inputs == ["q", "d"]
    y_true, y_pred = np.stack([tq, td], axis=1), np.stack([sq, sd], axis=1)
    per_example, parts = loss.components(y_true.astype("float32"), y_pred.astype("float32"))
    np.testing.assert_allclose(per_example, [30.0])
    assert set(parts) == {"q", "d", "dq"}
    np.testing.assert_allclose([float(parts[k][0]) for k in ("q", "d", "dq")], [2.0, 0.0, 2.0])
    np.testing.assert_allclose(loss.call(y_true.astype("float32"), y_pred.astype("float32")), per_example)
    ranked = DistillationLoss(contrast=1.0).components(y_true.astype("float32"), y_pred.astype("float32"))[1]
    assert set(ranked) == {"q", "d", "dq", "q_rank", "d_rank", "dq_rank"}


def test_a_row_without_a_document_contributes_its_question_term_only():
    """Row 0 is a QA triple, row 1 a corpus pair (T(d) = 0): its d and dq terms are 0, whatever S(d) is.
    Row 1: q = ||(0.6,0.8) - (0,1)||^2 = 0.36 + 0.04 = 0.4 -> loss = gamma * beta * 0.4 = 0.4; row 0:
    q = 2, d = 0, dq = ||(1,0) - (0,1)||^2 = 2 -> 2 + 0 + 0.5 * 2 = 3."""
    t_q = np.array([[1.0, 0.0], [0.6, 0.8]], "float32")
    s_q = np.array([[0.0, 1.0], [0.0, 1.0]], "float32")
    t_d = np.array([[1.0, 0.0], [0.0, 0.0]], "float32")
    s_d = np.array([[1.0, 0.0], [0.0, 1.0]], "float32")
    loss = DistillationLoss(gamma=1, weights={"beta": 1, "lam": 1, "omega": 0.5}, contrast=1.0, temperature=1.0)
    per_example, parts = loss.components(np.stack([t_q, t_d], 1), np.stack([s_q, s_d], 1))
    assert float(parts["d"][1]) == 0 and float(parts["dq"][1]) == 0
    assert float(parts["d_rank"][1]) == 0 and float(parts["dq_rank"][1]) == 0 and float(parts["q_rank"][1]) > 0
    plain = DistillationLoss(gamma=1, weights={"beta": 1, "lam": 1, "omega": 0.5})
    np.testing.assert_allclose(
        plain.components(np.stack([t_q, t_d], 1), np.stack([s_q, s_d], 1))[0], [3.0, 0.4], rtol=1e-6
    )
