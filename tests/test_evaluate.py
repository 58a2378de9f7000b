import json

import pytest

from relkt import evaluate


def test_cli_scores_a_tiny_pool_and_writes_json(tiny_data, tmp_path, capsys):
    out = tmp_path / "res" / "results.json"
    rc = evaluate.main(["--encoder", "ngram", "--data-dir", str(tiny_data), "--split", "all", "--output", str(out), "--no-progress"])
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


@pytest.mark.parametrize(
    "args, message",
    [
        (["--encoder", "nope"], "unknown encoder spec 'nope'"),
        (["--encoder", "ngram", "--langs", "en,xx"], "no file for language(s) xx"),
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
    (run / "config.yaml").write_text(f"data:\n  data_dir: {synthetic_data}\n  split_fractions: [0.5, 0.2, 0.3]\n"
                                     "  split_seed: 3\n  with_context: true\n")
    out = tmp_path / "r.json"
    assert evaluate.main(["--config", str(run / "config.yaml"), "--output", str(out), "--no-progress"]) == 0
    setup = json.loads(out.read_text())["setup"]
    assert setup["encoder"] == f"hub:{run / 'best'}" and setup["split_fractions"] == [0.5, 0.2, 0.3]
    assert setup["split_seed"] == 3 and setup["with_context"] is True and setup["split"] == "test"
    expected = LareqaPool.load(str(synthetic_data), split="test", fractions=(0.5, 0.2, 0.3), seed=3)
    assert json.loads(out.read_text())["lareqa"]["n_questions"] == len(expected.questions)
    # A flag wins over the run's setting.
    assert evaluate.main(["--config", str(run / "config.yaml"), "--split-seed", "0", "--output", str(out), "--no-progress"]) == 0
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
    run = subprocess.run([sys.executable, "-m", "relkt.evaluate", "--encoder", "ngram", "--data-dir", str(tiny_data),
                          "--split", "all"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    for noise in ("cuInit", "absl::InitializeLog", "cuda", "oneDNN", "I0000", "E0000", "W0000"):
        assert noise not in run.stderr and noise not in run.stdout, noise
    assert "LAReQA" in run.stdout
