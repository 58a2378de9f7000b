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
