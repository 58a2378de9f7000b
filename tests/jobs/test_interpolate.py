"""relkt interpolate: teacher/student weight mixing, alpha chosen on dev, exported in hub format."""

import json

import numpy as np
import pytest

from relkt.cli import interpolate as interpolate_cli
from relkt.encoders import build_encoder
from relkt.encoders.export import export_encoder, read_metadata
from relkt.errors import EncoderError
from relkt.jobs import interpolate
from tests.helpers.tiny_bert import tiny_bert


def test_interpolate_weights_by_hand_and_extended_rows_kept():
    # teacher 0, student 4: alpha 0.25 -> 0.75 * 0 + 0.25 * 4 = 1.
    t, s = [np.zeros((2, 3))], [np.full((2, 3), 4.0)]
    np.testing.assert_allclose(interpolate.interpolate_weights(t, s, 0.25)[0], np.ones((2, 3)))
    np.testing.assert_allclose(interpolate.interpolate_weights(t, s, 0.0)[0], t[0])
    np.testing.assert_allclose(interpolate.interpolate_weights(t, s, 1.0)[0], s[0])
    # An extended vocabulary: the student's third row is new; it is kept, the shared rows are mixed.
    s_ext = [np.array([[4.0] * 3, [4.0] * 3, [7.0] * 3])]
    mixed = interpolate.interpolate_weights(t, s_ext, 0.5)[0]
    np.testing.assert_allclose(mixed, [[2.0] * 3, [2.0] * 3, [7.0] * 3])
    with pytest.raises(EncoderError, match="weight emb: teacher shape \\(2, 3\\), student \\(2, 4\\)"):
        interpolate.interpolate_weights(t, [np.zeros((2, 4))], 0.5, names=["emb"])
    with pytest.raises(EncoderError, match="not the same architecture"):
        interpolate.interpolate_weights(t, t + t, 0.5)


def test_choose_alpha_prefers_the_student_on_ties():
    assert interpolate.choose_alpha({0.0: 0.3, 0.5: 0.4, 1.0: 0.4}) == 1.0
    assert interpolate.choose_alpha({0.0: 0.5, 0.5: 0.4, 1.0: 0.1}) == 0.0


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_cli_scores_every_alpha_on_dev_and_exports_the_chosen_mix(synthetic_data, tmp_path, capsys):
    from tests.helpers.data import SYNTH_WORDS

    words = (*SYNTH_WORDS, "##en")  # the synthetic texts read as words, not [UNK]s
    teacher = export_encoder(tiny_bert(seed=0, extra_vocab=words), tmp_path / "teacher")
    student = export_encoder(tiny_bert(seed=1, extra_vocab=words), tmp_path / "student")
    out = tmp_path / "wise"
    rc = interpolate_cli.main(
        [
            "--teacher",
            f"bert:{teacher}",
            "--student",
            f"bert:{student}",
            "--alphas",
            "0,0.5,1",
            "--output",
            str(out),
            "--data-dir",
            str(synthetic_data),
            "--primary-metric",
            "lareqa/mAP",
        ]
    )
    assert rc == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "wise.interpolation.json").read_text())
    scores = {float(a): s for a, s in report["scores"].items()}
    assert set(scores) == {0.0, 0.5, 1.0} and report["alpha"] == interpolate.choose_alpha(scores)
    assert read_metadata(out)["training"]["alpha"] == report["alpha"]
    # The export is the mix itself: same embeddings as the two models' weights mixed by hand.
    t, s = build_encoder(f"bert:{teacher}", trainable=False), build_encoder(f"bert:{student}", trainable=False)
    texts = ["how long does the cat sleep ?", "the river flows into the sea ."]
    t.embed(texts), s.embed(texts)
    a = report["alpha"]
    for w, value in zip(
        s.weights, interpolate.interpolate_weights([x.numpy() for x in t.weights], [x.numpy() for x in s.weights], a)
    ):
        w.assign(value)
    np.testing.assert_allclose(build_encoder(f"hub:{out}", trainable=False).embed(texts), s.embed(texts), atol=1e-5)
    # alpha 0 is the teacher: its dev score is the teacher's own.
    assert report["dev"]["0.0"]["lareqa/mAP"] == pytest.approx(dev_map(t, synthetic_data), abs=1e-6)


def dev_map(encoder, data_dir) -> float:
    from relkt.data.lareqa_pool import LareqaPool
    from relkt.encoders import QuietEncoder
    from relkt.metrics.lareqa_evaluator import LareqaEvaluator

    pool = LareqaPool.load(str(data_dir), split="dev", fractions=(0.7, 0.1, 0.2), seed=0)
    return LareqaEvaluator(pool)(QuietEncoder(encoder, 128))["lareqa/mAP"]


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_muse_pair_is_mixed_and_chosen_on_dev_article_p1_as_relkt_evaluate_scores_it(synthetic_data, tmp_path, capsys):
    """WiSE-FT as its paper means it: a trained muse model mixed with the model it started from, alpha picked by the
    paper's unit (dev questions ranking every English article, read whole as relkt evaluate reads them)."""
    from relkt.cli import evaluate
    from tests.helpers.tiny_muse import tiny_muse_encoder

    base = tiny_muse_encoder(seed=0, max_length=32)  # articles run past 32 pieces: only whole reading scores them right
    teacher = export_encoder(base, tmp_path / "base")
    rng = np.random.default_rng(1)
    for w in base.weights:  # "trained": every weight moved
        w.assign(w.numpy() + rng.normal(0, 0.3, w.shape).astype(np.float32))
    student = export_encoder(base, tmp_path / "trained")
    out = tmp_path / "wise"
    rc = interpolate_cli.main(
        [
            "--teacher",
            f"muse:{teacher}",
            "--student",
            f"muse:{student}",
            "--alphas",
            "0,0.5,1",
            "--output",
            str(out),
            "--data-dir",
            str(synthetic_data),
            "--xx-en-unit",
            "article",
            "--primary-metric",
            "xx_en_article/P@1",
        ]
    )
    assert rc == 0, capsys.readouterr().err
    report = json.loads((tmp_path / "wise.interpolation.json").read_text())
    scores = {float(a): s for a, s in report["scores"].items()}
    assert report["alpha"] == interpolate.choose_alpha(scores) and report["primary_metric"] == "xx_en_article/P@1"
    # alpha 0 and 1 are the two exports themselves, scored on dev as relkt evaluate scores them.
    for alpha, export in ((0.0, teacher), (1.0, student)):
        res = tmp_path / f"eval{alpha}.json"
        assert (
            evaluate.main(
                [
                    "--encoder",
                    f"muse:{export}",
                    "--data-dir",
                    str(synthetic_data),
                    "--split",
                    "dev",
                    "--xx-en-unit",
                    "article",
                    "--output",
                    str(res),
                    "--no-progress",
                ]
            )
            == 0
        )
        expected = json.loads(res.read_text())["xx_en_article"]
        dev = report["dev"][str(alpha)]
        for lang in ("de", "en"):
            assert dev[f"xx_en_article/{lang}/P@1"] == pytest.approx(expected[lang]["P@1"], abs=1e-9)
            assert dev[f"xx_en_article/{lang}/MRR"] == pytest.approx(expected[lang]["MRR"], abs=1e-6)
    assert (
        scores[0.0] != scores[1.0]
        or report["dev"]["0.0"]["xx_en_article/MRR"] != report["dev"]["1.0"]["xx_en_article/MRR"]
    )
    # The export is a muse model holding the chosen mix.
    texts = ["cat dog river", "katze hund fluss brot"]
    t, s = build_encoder(f"muse:{teacher}", trainable=False), build_encoder(f"muse:{student}", trainable=False)
    t.embed(texts), s.embed(texts)
    for w, value in zip(
        s.weights,
        interpolate.interpolate_weights(
            [x.numpy() for x in t.weights], [x.numpy() for x in s.weights], report["alpha"]
        ),
    ):
        w.assign(value)
    mixed = build_encoder(f"muse:{out}", trainable=False)
    np.testing.assert_allclose(mixed.embed(texts), s.embed(texts), atol=1e-5)


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--primary-metric", "xx_en_article/P@1"], "--primary-metric xx_en_article/P@1: add --xx-en-unit article"),
        (["--split", "test"], "--split test: alpha is chosen on held-out data that is not the test split"),
        (["--split", "all"], "--split all: alpha is chosen on held-out data that is not the test split"),
    ],
)
def test_choosing_on_test_questions_or_an_unscored_unit_is_a_usage_error(capsys, extra, message):
    with pytest.raises(SystemExit):
        interpolate_cli.parse_args(["--teacher", "muse", "--student", "muse:x", "--output", "o"] + extra)
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--teacher", "hub:x", "--student", "bert:y"], "teacher hub:x: interpolation needs"),
        (
            ["--teacher", "bert:/no/such/dir", "--student", "bert:/no/such/dir"],
            "bert:/no/such/dir: no such model directory",
        ),
    ],
)
def test_cli_bad_input_is_one_clear_error(tmp_path, capsys, args, message):
    assert interpolate_cli.main(args + ["--output", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err


def test_alphas_outside_zero_one_are_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit):
        interpolate_cli.main(["--teacher", "bert:x", "--student", "bert:y", "--alphas", "0,2", "--output", "o"])
    assert "--alphas: comma-separated numbers in [0, 1]" in capsys.readouterr().err
