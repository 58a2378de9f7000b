"""Language-bias removal in scoring and in an export: the export's vectors are the scorer's, and the pairs it learns
from never hold a text of the pool being scored."""

import json

import numpy as np
import pytest

from relkt import api
from relkt.cli import evaluate
from relkt.errors import ConfigError

TEXTS = ["the number 3 is here", "die Zahl 4 ist hier", "Wohin fließt der Rhein?", "cats sleep a lot"]


def pair_files(folder, n: int = 30, extra: str = ""):
    folder.mkdir(parents=True, exist_ok=True)
    de = "".join(f"tatoeba\tthe number {i} is here\tdie Zahl {i} ist hier\n" for i in range(n)) + extra
    fr = "".join(f"tatoeba\tthe house {i} is red\tla maison {i} est rouge\n" for i in range(n))
    (folder / "de.tsv").write_text("source\ten\txx\n" + de, encoding="utf-8")
    (folder / "fr.tsv").write_text("source\ten\txx\n" + fr, encoding="utf-8")
    return folder


def test_the_projection_inside_an_export_is_the_scorers(tmp_path):
    import tensorflow as tf
    import tensorflow_hub as hub

    from relkt.encoders import build_encoder
    from relkt.jobs.language_bias import LanguageBiasRemoved, export_without_language_subspace, fit_language_subspace

    pairs = pair_files(tmp_path / "pairs")
    path, space = export_without_language_subspace("ngram", str(pairs), tmp_path / "out", rank=2)
    assert json.loads((path / "relkt.json").read_text())["training"]["stage"] == "language_subspace_removed"
    base = build_encoder("ngram", trainable=False)
    again, learned = fit_language_subspace(base, str(pairs), None, 2)
    assert learned == {"sentences": {"de": 30, "fr": 30, "en": 60}, "dropped": 0}
    assert np.allclose(again.basis, space.basis, atol=1e-6)  # the same pairs give the same directions
    scorer = LanguageBiasRemoved(base, again, {}, means=False, project=True).encode(TEXTS)
    exported = hub.load(str(path))(tf.constant(TEXTS)).numpy()
    assert np.allclose(exported, scorer, atol=1e-5)
    assert not np.allclose(exported, base.encode(TEXTS), atol=1e-3)  # and it is not the base's


def test_scoring_removes_the_bias_learned_from_pairs_that_hold_no_pool_text(synthetic_data, tmp_path):
    question = json.loads((synthetic_data / "de.json").read_text())["data"][0]["paragraphs"][0]["qas"][0]["question"]
    pairs = pair_files(tmp_path / "pairs", extra=f"tatoeba\ta leaked question\t{question}\n")
    out = tmp_path / "r.json"
    argv = ["--encoder", "ngram", "--data-dir", str(synthetic_data), "--split", "all", "--no-progress"]
    flags = ["--language-pairs", str(pairs), "--remove-language-subspace", "1", "--remove-language-means"]
    assert evaluate.main([*argv, *flags, "--output", str(out)]) == 0
    setup = json.loads(out.read_text())["setup"]["language_bias_removed"]
    assert setup["pairs"] == str(pairs) and setup["rank"] == 1 and setup["means"] and setup["unmatched"] == []
    assert setup["dropped"] == 1 and setup["sentences"] == {"de": 30, "en": 30}  # the leaked pair never learned from
    plain = api.score("ngram", api.config("student", set={"data.data_dir": synthetic_data}).data, "all", progress=False)
    assert json.loads(out.read_text())["lareqa"]["mAP"] != pytest.approx(plain.metric("lareqa/mAP"), abs=1e-6)

    data = api.config("student", set={"data.data_dir": synthetic_data}).data
    for options, message in (
        ({"language_pairs": str(pairs)}, "say what to remove"),
        ({"remove_language_subspace": 1}, "name the pair files"),
        ({"language_pairs": str(pairs), "remove_language_subspace": -1}, "a whole number >= 0, got -1"),
    ):
        with pytest.raises(ConfigError, match=message):
            api.score("ngram", data, "all", progress=False, **options)


def test_a_debiased_muse_export_reads_a_long_text_whole_as_the_scorer_does(tmp_path):
    import tensorflow as tf
    import tensorflow_hub as hub

    from relkt.analysis.scoring_encoder import scoring_encoder
    from relkt.encoders.export import export_encoder
    from relkt.jobs.language_bias import LanguageBiasRemoved, export_without_language_subspace
    from tests.helpers.tiny_muse import tiny_muse_encoder

    trained = export_encoder(tiny_muse_encoder(max_length=8), tmp_path / "best")  # trained at 8 pieces
    article = [" ".join(TEXTS * 6), TEXTS[0]]  # an article of many more pieces than 8, and a sentence
    path, space = export_without_language_subspace(
        f"muse:{trained}", str(pair_files(tmp_path / "pairs")), tmp_path / "out"
    )
    scorer, _ = scoring_encoder(f"muse:{trained}")  # what `relkt evaluate` scores it with: the article whole
    expected = LanguageBiasRemoved(scorer, space, {}, means=False, project=True).encode(article)
    exported = hub.load(str(path))(tf.constant(article)).numpy()
    np.testing.assert_allclose(exported, expected, atol=1e-5)
    cut = LanguageBiasRemoved(tiny_muse_encoder(max_length=8), space, {}, means=False, project=True).encode(article)
    assert not np.allclose(exported[0], cut[0], atol=1e-3)  # cut at the training length, the article reads otherwise
