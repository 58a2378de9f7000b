import json

import pytest

from relkt.cli import evaluate
from relkt.data.english_answer_units import SCORING_MAX_LENGTH
from relkt.io import RUN_MARKER


def test_cli_scores_a_tiny_pool_and_writes_json(tiny_data, tmp_path, capsys):
    out = tmp_path / "res" / "results.json"
    rc = evaluate.main(
        ["--encoder", "ngram", "--data-dir", str(tiny_data), "--split", "all", "--output", str(out), "--no-progress"]
    )
    assert rc == 0
    printed = capsys.readouterr().out
    assert "LAReQA" in printed and "\nall " in printed
    results = json.loads(out.read_text())
    lareqa = results["lareqa"]
    for key in ("mAP", "mAP@20", "P@1", "P@5", "P@10", "MRR", "n_questions", "n_candidates", "per_language"):
        assert key in lareqa
    assert lareqa["n_questions"] == 12 and lareqa["n_candidates"] == 12
    assert 0 < lareqa["mAP"] <= 1
    assert set(results["xx_en"]) == {"de", "en"} and set(results["xx_en"]["de"]) >= {"P@1", "P@5", "P@10"}
    assert results["setup"]["encoder"] == "ngram"


def test_xx_en_units_score_the_test_split_against_every_english_unit(tiny_data, tmp_path, capsys):
    """The paper's XX->EN candidates are every English unit of the data set, whichever split is scored: the test
    split's questions rank all three articles (and all six sentences), while LAReQA keeps to the split."""
    import numpy as np

    out = tmp_path / "r.json"
    args = [
        "--encoder",
        "ngram",
        "--data-dir",
        str(tiny_data),
        "--split",
        "test",
        "--split-fractions",
        "0.34,0.33,0.33",
        "--output",
        str(out),
        "--no-progress",
    ]
    assert evaluate.main(args) == 0
    printed = capsys.readouterr().out
    assert "XX->EN by answer unit" in printed and "3 articles, 3 paragraphs, 6 sentences" in printed
    results = json.loads(out.read_text())
    assert results["lareqa"]["n_candidates"] == 4  # one test article, two languages, two sentences each
    # scored_*: the reference code's pool, the test questions' own article and paragraph alone
    assert results["setup"]["xx_en_units"] == {
        "article": 3,
        "paragraph": 3,
        "sentence": 6,
        "scored_article": 1,
        "scored_paragraph": 1,
    }
    assert results["xx_en_scored_article"]["de"]["P@1"] == 1.0  # one candidate: every question's gold ranks first
    assert results["setup"]["split_cut"]["unit"] == "article"
    assert results["setup"]["split_cut"]["overlap"] == {"context": 0.0, "article": 0.0}
    for unit in ("article", "paragraph", "sentence"):
        assert results[f"xx_en_{unit}"]["de"]["n_questions"] == 2
    with np.load(evaluate.per_question_path(out)) as z:
        assert z["xx_en_article_hit1"].shape == (4,) and set(np.unique(z["xx_en_article_hit1"])) <= {0.0, 1.0}
    assert evaluate.main(args + ["--xx-en-unit", "none"]) == 0
    assert "xx_en_article" not in json.loads(out.read_text()) and "XX->EN by answer unit" not in capsys.readouterr().out


def test_max_length_reaches_the_encoder_and_cut_units_are_counted(tiny_data, tmp_path, capsys, caplog):
    from relkt.encoders.export import export_encoder
    from tests.helpers.tiny_muse import tiny_muse_encoder

    muse = export_encoder(tiny_muse_encoder(max_length=32), tmp_path / "muse")
    out = tmp_path / "r.json"
    assert (
        evaluate.main(
            [
                "--encoder",
                f"muse:{muse}",
                "--data-dir",
                str(tiny_data),
                "--max-length",
                "5",
                "--xx-en-unit",
                "article",
                "--output",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["setup"]["max_length"] == 5
    assert "XX->EN article unit: 3 of 3 English articles are longer than max_length 5 and are cut" in caplog.text
    caplog.clear()  # muse reads whole texts when scoring (no position embeddings): no cut, whatever it trained with
    assert (
        evaluate.main(
            [
                "--encoder",
                f"muse:{muse}",
                "--data-dir",
                str(tiny_data),
                "--xx-en-unit",
                "article",
                "--output",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    assert json.loads(out.read_text())["setup"]["max_length"] == SCORING_MAX_LENGTH and "cut" not in caplog.text
    for spec, message in (
        ("hub:/nowhere", "max_length: hub:/nowhere takes none (its tokenizer's length was fixed"),
        ("ngram", "max_length: ngram takes none"),
    ):
        assert (
            evaluate.main(["--encoder", spec, "--data-dir", str(tiny_data), "--max-length", "64", "--no-progress"]) == 2
        )
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit):
        evaluate.parse_args(["--encoder", "ngram", "--xx-en-unit", "chapter"])
    assert "expected units among article, paragraph, sentence" in capsys.readouterr().err


def test_corpus_dir_scores_the_held_out_slice_a_student_never_trained_on(tiny_data, tmp_path, capsys):
    """--corpus-dir: translation retrieval on the same hash-chosen held-out pairs as data.corpus_dev_pairs."""
    from relkt.data.parallel_corpus import read_parallel_tsv
    from relkt.encoders import build_encoder
    from relkt.metrics import CorpusBitextEvaluator
    from tests.helpers.data import write_corpus

    write_corpus(tmp_path / "corpus", "de", 30)
    out = tmp_path / "r.json"
    base = ["--encoder", "ngram", "--data-dir", str(tiny_data), "--xx-en-unit", "none", "--no-progress"]
    assert (
        evaluate.main(
            base + ["--corpus-dir", str(tmp_path / "corpus"), "--corpus-dev-pairs", "6", "--output", str(out)]
        )
        == 0
    )
    assert "Held-out parallel text" in capsys.readouterr().out
    corpus = json.loads(out.read_text())["corpus"]
    held_out = read_parallel_tsv(tmp_path / "corpus" / "de.tsv", "de").split(6)[1]
    expected = CorpusBitextEvaluator({"de": held_out})(build_encoder("ngram", trainable=False))["corpus/de/P@1"]
    assert corpus == {"de": {"P@1": expected, "n_pairs": 6}}
    assert evaluate.main(base + ["--corpus-dir", str(tmp_path)]) == 2
    assert f"corpus_dir {tmp_path}: no {{lang}}.tsv for any of de, en" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--encoder", "nope"], "unknown encoder spec 'nope'"),
        (["--encoder", "ngram", "--langs", "en,xx"], "no data for language(s) xx"),
        (["--encoder", "ngram", "--data-dir", "/does/not/exist"], "/does/not/exist does not exist"),
    ],
)
def test_cli_bad_input_is_one_clear_error(tiny_data, capsys, args, message):
    if "--data-dir" not in args:
        args = args + ["--data-dir", str(tiny_data)]
    assert evaluate.main(args + ["--split", "all", "--no-progress"]) == 2
    assert message in capsys.readouterr().err


def test_cli_rejects_unknown_split(tiny_data):
    with pytest.raises(SystemExit):
        evaluate.main(["--encoder", "ngram", "--data-dir", str(tiny_data), "--split", "validation"])


def test_config_scores_a_run_on_the_split_it_trained_with(synthetic_data, tmp_path, capsys):
    """--config RUN/config.yaml: the run's data folder, article split and best export, unless flags say otherwise."""
    from relkt.data import LareqaPool
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder

    run = tmp_path / "run"
    export_encoder(NgramEncoder(dim=8, num_buckets=64), run / "best")
    (run / RUN_MARKER).write_text("a relkt run folder\n")
    (run / "config.yaml").write_text(
        f"data:\n  data_dir: {synthetic_data}\n  split_fractions: [0.5, 0.2, 0.3]\n"
        "  split_seed: 3\n  with_context: true\n"
    )
    out = tmp_path / "r.json"
    assert evaluate.main(["--config", str(run / "config.yaml"), "--output", str(out), "--no-progress"]) == 0
    setup = json.loads(out.read_text())["setup"]
    assert setup["encoder"] == f"hub:{run / 'best'}" and setup["split_fractions"] == [0.5, 0.2, 0.3]
    assert setup["split_seed"] == 3 and setup["with_context"] is True and setup["split"] == "test"
    expected = LareqaPool.load(str(synthetic_data), split="test", fractions=(0.5, 0.2, 0.3), seed=3)
    assert json.loads(out.read_text())["lareqa"]["n_questions"] == len(expected.questions)
    # A flag wins over the run's setting.
    assert (
        evaluate.main(
            ["--config", str(run / "config.yaml"), "--split-seed", "0", "--output", str(out), "--no-progress"]
        )
        == 0
    )
    assert json.loads(out.read_text())["setup"]["split_seed"] == 0


def test_config_without_a_data_section_is_one_clear_error(tmp_path, capsys):
    bad = tmp_path / "config.yaml"
    bad.write_text("seed: 1\n")
    assert evaluate.main(["--config", str(bad), "--no-progress"]) == 2
    assert f"--config {bad}: no `data` section" in capsys.readouterr().err


def test_encoder_or_config_is_required(capsys):
    with pytest.raises(SystemExit):
        evaluate.parse_args(["--split", "all"])
    assert "--encoder is required" in capsys.readouterr().err


def test_a_cli_run_prints_no_tensorflow_start_up_noise(tiny_data, tmp_path):
    """TensorFlow's C++ start-up lines (CUDA probe, oneDNN, absl) stay out of a CLI's output unless RELKT_VERBOSE=1."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in ("TF_CPP_MIN_LOG_LEVEL", "RELKT_VERBOSE")}
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "relkt.cli.evaluate",
            "--encoder",
            "ngram",
            "--data-dir",
            str(tiny_data),
            "--split",
            "all",
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert run.returncode == 0, run.stderr
    for noise in ("cuInit", "absl::InitializeLog", "cuda", "oneDNN", "I0000", "E0000", "W0000"):
        assert noise not in run.stderr and noise not in run.stdout, noise
    assert "LAReQA" in run.stdout


@pytest.mark.slow
def test_zero_shot_muse_article_p1_is_within_5_points_of_the_paper(shared_xquad_r):
    """CL-ReLKT's protocol on the offline mUSE-small v3: all 1190 questions per language rank the 48 English
    articles (encoded whole); each language's P@1 lies within 5 points of the paper's mUSEsmall row."""
    from pathlib import Path

    import yaml

    from relkt.data import EnglishAnswerUnits, LareqaPool
    from relkt.encoders import build_encoder
    from relkt.errors import EncoderError
    from relkt.metrics import XxEnUnitEvaluator

    paper = yaml.safe_load((Path(__file__).parents[2] / "relkt" / "recipes" / "cl_relkt_paper.yaml").read_text())
    try:
        encoder = build_encoder("muse", trainable=False, max_length=8192)
    except EncoderError as e:
        pytest.skip(str(e))
    pool = LareqaPool.load(shared_xquad_r, split="all")
    units = {
        "article": EnglishAnswerUnits.from_pool(pool.subset(question_langs=["en"], candidate_langs=["en"]), "article")
    }
    results = XxEnUnitEvaluator(pool.questions, units, batch_size=128).results(encoder)["article"]
    gaps = {lang: round(100 * results[lang]["P@1"] - p1, 2) for lang, p1 in paper["xquad_p1"]["muse_small"].items()}
    assert all(results[lang]["n_questions"] == 1190 for lang in gaps)
    assert all(abs(gap) <= 5 for gap in gaps.values()), gaps


def test_a_config_naming_only_data_dir_gives_the_numbers_it_gave_before_sources(synthetic_data, tmp_path):
    """Pinned: `relkt evaluate --encoder ngram` on the synthetic folder's test split, as relkt 7b7d96e (before
    training and test sources were apart) printed them; reading the folder through QaSource changes none."""
    out = tmp_path / "r.json"
    assert (
        evaluate.main(
            [
                "--encoder",
                "ngram",
                "--data-dir",
                str(synthetic_data),
                "--split",
                "test",
                "--output",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert result["lareqa"]["mAP"] == pytest.approx(0.568033187054916, abs=1e-6)
    assert result["lareqa"]["per_language"]["de"]["mAP"] == pytest.approx(0.5366956535994056, abs=1e-6)
    assert result["lareqa"]["n_questions"] == 24 and result["lareqa"]["n_candidates"] == 48
    assert result["xx_en"]["de"]["MRR"] == pytest.approx(0.7458333333333332, abs=1e-6)
    assert result["xx_en_article"]["en"]["MRR"] == pytest.approx(0.376984126984127, abs=1e-6)
    assert result["setup"]["format"] == "squad" and result["setup"]["scored_whole"] is False


def test_test_dir_is_scored_whole_and_refused_when_it_overlaps(synthetic_data, tiny_data, tmp_path, capsys):
    out = tmp_path / "r.json"
    assert (
        evaluate.main(
            [
                "--encoder",
                "ngram",
                "--data-dir",
                str(synthetic_data),
                "--test-dir",
                str(tiny_data),
                "--output",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    result = json.loads(out.read_text())
    assert (
        result["lareqa"]["n_questions"] == 12 and result["setup"]["scored_whole"] is True
    )  # all 3 articles x 2 langs x 2
    assert result["setup"]["xx_en_units"]["article"] == 3  # the test source's English articles, not the training's
    assert (
        evaluate.main(
            ["--encoder", "ngram", "--data-dir", str(tiny_data), "--test-dir", str(tiny_data), "--no-progress"]
        )
        == 2
    )
    assert "also occurs in the training source" in capsys.readouterr().err
    assert (
        evaluate.main(
            [
                "--encoder",
                "ngram",
                "--data-dir",
                str(synthetic_data),
                "--test-dir",
                str(tiny_data),
                "--split",
                "dev",
                "--no-progress",
            ]
        )
        == 2
    )
    assert "is scored as the test split, not --split dev" in capsys.readouterr().err


def test_a_muse_run_is_scored_through_muse_dir_which_reads_whole_articles(tmp_path):
    run = tmp_path / "run"
    (run / "best").mkdir(parents=True)
    cases = {
        "encoder:\n  spec: muse\n": "muse",
        "teacher:\n  spec: muse:t/best\nstudent:\n  spec: ''\n": "muse",
        "encoder:\n  spec: minilm\n": "hub",
        "data:\n  data_dir: x\n": "hub",
    }
    for text, kind in cases.items():
        (run / RUN_MARKER).write_text("a relkt run folder\n")
        (run / "config.yaml").write_text(text)
        assert evaluate.best_export(str(run / "config.yaml")) == f"{kind}:{run / 'best'}"


def test_more_test_sources_are_each_scored_whole_and_kept_unseen(synthetic_data, tiny_data, tmp_path, capsys):
    """--test-dir A --more-test B: one table and one result pair each, r.json for A and r.B.json for B, each pool the
    source's own; a teacher whose data.more_test shares an article with its training source is refused at start,
    naming both."""
    from relkt.cli import evaluate as evaluate_cli
    from relkt.cli import train_teacher
    from tests.helpers.data import make_synthetic_lareqa
    from tests.helpers.runs import tiny_config

    other = make_synthetic_lareqa(tmp_path / "other", n_articles=3, langs=("en",), seed=3)
    for path in other.glob("*.json"):  # titles and ids of its own
        doc = json.loads(path.read_text())
        for article in doc["data"]:
            article["title"] = "Other " + article["title"]
            for qa in article["paragraphs"][0]["qas"]:
                qa["id"] = "other-" + qa["id"]
        path.write_text(json.dumps(doc))
    out = tmp_path / "r.json"
    args = ["--encoder", "ngram", "--data-dir", str(synthetic_data), "--test-dir", str(tiny_data)]
    args += ["--more-test", str(other), "--split", "test", "--no-progress", "--output", str(out)]
    assert evaluate_cli.main(args) == 0
    printed = capsys.readouterr().out
    assert f"test source {tiny_data}:" in printed and f"test source {other}:" in printed
    first, second = json.loads(out.read_text()), json.loads((tmp_path / "r.other.json").read_text())
    assert first["lareqa"]["n_questions"] == 12 and second["lareqa"]["n_questions"] == 6  # 6 en+de, 6 en
    assert (tmp_path / "r.other.per_question.npz").is_file()
    assert first["setup"]["encoder"] == second["setup"]["encoder"] == "ngram"  # one encoder built, named by its spec
    cfg = tiny_config(
        tmp_path / "t", synthetic_data, **{"data.test_dir": str(tiny_data), "data.more_test": [str(synthetic_data)]}
    )
    assert train_teacher.main(["--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert "test source" in err and str(synthetic_data) in err and "also occurs in the training source" in err


def test_card_puts_the_test_scores_into_the_scored_exports_model_card(synthetic_data, tmp_path, capsys):
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder

    best = export_encoder(NgramEncoder(dim=8, num_buckets=64), tmp_path / "run" / "best")
    out = tmp_path / "run" / "test.json"
    flags = ["--data-dir", str(synthetic_data), "--split", "test", "--output", str(out), "--no-progress"]
    assert evaluate.main(["--encoder", f"hub:{best}", *flags, "--card"]) == 0
    card = (best / "README.md").read_text(encoding="utf-8")
    mAP = json.loads(out.read_text())["lareqa"]["mAP"]
    assert f"| lareqa/mAP | {mAP:.4f} |" in card
    assert f"--encoder hub:{best} --data-dir {synthetic_data} --card --split test" in card
    assert "the model card, with these test scores" in capsys.readouterr().out

    for argv, message in (
        (["--encoder", "ngram", *flags, "--card"], "--card: --encoder ngram names no relkt export folder"),
        (["--encoder", f"hub:{best}", "--data-dir", str(synthetic_data), "--card"], "give --split test and --output"),
    ):
        with pytest.raises(SystemExit):
            evaluate.main(argv)
        assert message in capsys.readouterr().err


def test_evaluate_says_which_split_it_scored_and_how_many_questions_of_how_many(tiny_data, tmp_path, caplog):
    from relkt.cli import evaluate

    caplog.set_level("INFO", logger="relkt")
    assert evaluate.main(["--encoder", "ngram", "--data-dir", str(tiny_data)]) == 0
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("pool: "))
    n = int(line.split()[1])
    assert f"the test split of {tiny_data}, {n} of its 12" in line and "--split all" in line and n < 12
    caplog.clear()
    assert evaluate.main(["--encoder", "ngram", "--data-dir", str(tiny_data), "--split", "all"]) == 0
    line = next(r.getMessage() for r in caplog.records if r.getMessage().startswith("pool: "))
    assert line.startswith("pool: 12 questions") and f"every question of {tiny_data}" in line


def test_a_kill_between_the_card_and_the_results_leaves_no_results_so_the_rerun_writes_both(
    synthetic_data, tmp_path, monkeypatch
):
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder
    from relkt.recipes.pipeline import Step

    best = export_encoder(NgramEncoder(dim=8, num_buckets=64), tmp_path / "run" / "best")
    out = tmp_path / "run" / "test.json"
    argv = ["--encoder", f"hub:{best}", "--data-dir", str(synthetic_data), "--split", "test", "--output", str(out)]

    def killed(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluate, "write_evaluation", killed)
    assert evaluate.main([*argv, "--no-progress", "--card"]) == 130
    assert "lareqa/mAP" in (best / "README.md").read_text(encoding="utf-8") and not out.exists()
    assert Step("student test", [], str(out), str(best)).stale()  # the pipeline runs the step again
    monkeypatch.undo()
    assert evaluate.main([*argv, "--no-progress", "--card"]) == 0 and out.exists()
