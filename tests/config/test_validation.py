"""Nothing silent, third round (#59): each setting that was read but never checked, and each text compared without a
normal form, found by probing as a new user would. Every case here ran to exit 0 with a wrong result before."""

from __future__ import annotations

import json
import unicodedata

import numpy as np
import pytest
import yaml

from relkt.cli import evaluate, train_student
from relkt.config.student_groups import StudentGroup
from relkt.data import QaSource
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.parallel import corpus_examples
from relkt.data.parallel_corpus import read_parallel_tsv
from relkt.errors import ConfigError, DataError, NonFiniteError
from relkt.io import json_text
from relkt.metrics import LareqaEvaluator
from tests.helpers.data import ARTICLES, squad_json
from tests.helpers.fakes import LookupEncoder
from tests.helpers.runs import student_config, trainer_script


@pytest.fixture
def ngram_teacher(tmp_path):
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder

    return export_encoder(NgramEncoder(dim=8, num_buckets=64), tmp_path / "teacher")


def refused(tmp_path, tiny_data, teacher, capsys, **changes) -> str:
    """Train a tiny student with `changes`: it must stop before anything is written, with one error line."""
    cfg = student_config(tmp_path / "s", tiny_data, teacher, **changes)
    assert train_student.main(["--config", str(cfg)]) == 2
    assert not (tmp_path / "s" / "run" / "checkpoint").exists()
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "Traceback" not in "\n".join(err)
    return err[-1]


@pytest.mark.parametrize("key", ["zeta", "bata"])
def test_an_unknown_loss_weight_is_refused(key, tmp_path, tiny_data, ngram_teacher, capsys):
    err = refused(tmp_path, tiny_data, ngram_teacher, capsys, **{f"distill.weights.{key}": 0.5})
    assert f"distill.weights.{key}: no loss term reads this weight" in err and "beta (q)" in err


def test_an_unknown_romanized_language_is_refused(tmp_path, tiny_data, ngram_teacher, capsys):
    err = refused(tmp_path, tiny_data, ngram_teacher, capsys, **{"data.romanize_langs": ["qq"]})
    assert "data.romanize_langs: qq is not a student language (de)" in err


def test_a_bank_without_a_ranking_term_is_refused(tmp_path, tiny_data, ngram_teacher, capsys):
    err = refused(tmp_path, tiny_data, ngram_teacher, capsys, **{"distill.negatives": "bank"})
    assert "distill.negatives: bank" in err and "distill.contrast is 0" in err


def test_a_group_of_the_source_language_alone_is_refused():
    """Its `data.student_langs` would be [], which means every language: the `en` group trained on all 11."""
    with pytest.raises(ConfigError, match=r"student_groups\.english: langs \['en'\] hold only the source language"):
        StudentGroup("english", ("en",)).overrides("en", "out")
    assert "data.student_langs=[de]" in StudentGroup("g", ("en", "de")).overrides("en", "out")


@pytest.mark.parametrize(
    "key", ["data.student_langs", "data.corpus_langs", "data.code_switch_sources", "eval.langs", "eval.question_langs"]
)
def test_an_empty_list_never_means_every_one(key, tmp_path, tiny_data, ngram_teacher, capsys):
    """An empty list used to mean every language (or source): a group of the source language alone trained on all.
    Now `all` says it, and an empty list is one error naming the key, before anything trains."""
    err = refused(tmp_path, tiny_data, ngram_teacher, capsys, **{key: []})
    assert f"{key}: an empty list names nothing" in err and "write `all`" in err


def test_all_names_every_language_found(tmp_path, tiny_data):
    from relkt.config import StudentConfig, load_config
    from relkt.data.selection import student_pool

    every = load_config(StudentConfig, None, [f"data.data_dir={tiny_data}", "data.student_langs=all"])
    some = load_config(StudentConfig, None, [f"data.data_dir={tiny_data}", "data.student_langs=[de]"])
    assert every.data.student_langs == "all" and some.data.student_langs == ["de"]
    assert sorted(student_pool(every.data, every.seed)[2]) == ["de", "en"]
    assert student_pool(some.data, some.seed)[2] == ["de"]


def test_a_run_saved_with_an_empty_list_resumes_as_all():
    """relkt before #59 saved `student_langs: []` for every language: such a run folder resumes unchanged."""
    from relkt.config import StudentConfig
    from relkt.training.run_folder import read_as_today

    saved = {"data.student_langs": [], "data.translate_langs": [], "eval.langs": ["en"]}
    assert read_as_today(StudentConfig, saved) == {
        "data.student_langs": "all",
        "data.translate_langs": [],  # [] = none there, as before
        "eval.langs": ["en"],
    }


@pytest.mark.parametrize(
    "groups,expected",
    [
        ({"a": {"langs": ["de"]}, "b": {"langs": ["en"], "set": {"distill.zeta": 1}}}, "student_groups.b"),
        ({"a": {"langs": ["de"]}, "b": {"langs": ["en", "xx"]}}, "student_groups.b: xx has no data"),
        ({"a": {"langs": ["de"]}}, "en is scored but in no student group"),
    ],
)
def test_group_students_refuses_every_group_before_the_first_trains(
    groups, expected, tmp_path, tiny_data, ngram_teacher, capsys
):
    cfg = student_config(tmp_path / "cfg", tiny_data, ngram_teacher)
    setups = tmp_path / "cfg" / "setups.yaml"
    setups.write_text(
        yaml.safe_dump(
            {"g": {"status": "ablation", "recipe": "steps", "steps": "teach_questions", "student": cfg.name}}
        )
    )
    raw = yaml.safe_load(setups.read_text())
    raw["g"]["student_groups"] = groups
    setups.write_text(yaml.safe_dump(raw))
    out = tmp_path / "out"
    rc = trainer_script("group_students").main(["--setup", "g", "--setups-file", str(setups), "--output", str(out)])
    assert rc == 2 and expected in capsys.readouterr().err
    assert not out.exists() or not any(out.iterdir())  # group a never trained


def write_source(root, lang_texts):
    root.mkdir(parents=True)
    for lang, doc in lang_texts.items():
        (root / f"{lang}.json").write_text(json.dumps(doc), encoding="utf-8")
    return root


def test_a_test_source_differing_by_whitespace_is_no_new_text(tmp_path, tiny_data, capsys):
    """A context copied from the training source with one space doubled was scored as unseen."""
    docs = {lang: squad_json(lang) for lang in ARTICLES}
    for doc in docs.values():
        doc["data"] = doc["data"][:1]  # one article, its title and ids new, its context the training one's
        paragraph = doc["data"][0]["paragraphs"][0]
        paragraph["context"] = paragraph["context"].replace(" ", "  ", 1)
        paragraph.pop("sentence_breaks"), paragraph.pop("sentences")
        for qa in paragraph["qas"]:
            qa["id"] += "_copy"
        doc["data"][0]["title"] += " (copy)"
    copy = write_source(tmp_path / "copy", docs)
    out = tmp_path / "r.json"
    argv = ["--encoder", "ngram", "--data-dir", str(tiny_data), "--test-dir", str(copy), "--output", str(out)]
    assert evaluate.main(argv) == 2 and not out.exists()
    assert "context 'Cats sleep sixteen hours a day." in capsys.readouterr().err


def write_tsv(path, rows, header="source\ten\txx", bom=False):
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join([header, *("\t".join(r) for r in rows)]) + "\n"
    path.write_bytes(("\ufeff" if bom else "").encode() + text.encode("utf-8"))
    return path


def test_pair_files_are_read_in_one_normal_form(tmp_path):
    """NFD Greek (Ά as A + combining acute) reads as NFC; a doubled space collapses; an NFD copy of an earlier pair
    is the same pair, kept once (it became a held-out row of its own); a BOM before the header is no column."""
    nfc = "Άλφα βήτα"
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfd != nfc
    rows = [("s", f"alpha{i}", f"{nfc} {i}") for i in range(4)] + [("s", "alpha0", nfd.replace(" ", "  ") + " 0")]
    pairs = read_parallel_tsv(write_tsv(tmp_path / "el.tsv", rows, bom=True), "el")
    assert pairs.xx == [f"{nfc} {i}" for i in range(4)]  # the fifth row is the first again
    train, held = pairs.split(1)
    assert held.xx == [f"{nfc} 3"] and f"{nfc} 0" in train.xx


def test_a_question_kept_for_scoring_is_found_in_training_pairs_whatever_its_spaces(tmp_path):
    from relkt.config import StudentConfig

    questions = write_tsv(
        tmp_path / "q" / "bn.tsv",
        [("q1", "", "প্রশ্ন এক", "question one"), ("q2", "train", "দুই", "two")],
        "id\tsplit\txx\ten",
    )
    corpus = write_tsv(
        tmp_path / "c" / "bn.tsv", [("s", "question one", "প্রশ্ন  এক")] + [("s", f"e{i}", f"x{i}") for i in range(5)]
    )
    data = StudentConfig().data
    data.corpus_dir, data.more_pairs, data.corpus_dev_pairs = str(corpus.parent), {str(questions.parent): 0}, 1
    with pytest.raises(DataError, match="a question kept for scoring"):
        corpus_examples(data, ["en", "bn"], 0)


def test_jsonl_language_codes_are_one_case(tmp_path):
    lines = [
        {"id": "q1", "lang": "EN", "question": "Who?", "answer": "Ann", "context": "Ann wrote it."},
        {"id": "q1", "lang": "de", "question": "Wer?", "answer": "Ann", "context": "Ann schrieb es."},
    ]
    path = tmp_path / "qa.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    assert QaSource.open(path).languages() == ["de", "en"]


def test_a_language_without_english_answers_is_named_and_left_out_of_the_means(tmp_path):
    """de questions have English twins, fr questions none: fr is named in `unscored`, and xx_en/P@1 is de's and en's
    mean, not NaN. English A = [1, 0], B = [0, 1]; de:c1 = [1, 0] finds A (gold): P@1 1; en:c1 the same."""
    docs = {lang: squad_json(lang) for lang in ARTICLES}
    fr = squad_json("de")
    for article in fr["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["id"] = "fr_" + qa["id"]
    root = write_source(tmp_path / "src", {**docs, "fr": fr})
    pool = LareqaPool.load(root, split="all")
    rng = np.random.default_rng(0)
    table = {t: rng.normal(size=4) for t in pool.question_texts() + pool.candidate_texts()}
    results = LareqaEvaluator(pool, bitext=False).results(LookupEncoder(table))
    assert results["unscored"] == {"xx_en": ["fr"]} and set(results["xx_en"]) == {"de", "en"}
    flat = LareqaEvaluator.flat(results)
    assert np.isfinite(flat["xx_en/P@1"])
    json.loads(json_text(results), parse_constant=lambda c: pytest.fail(f"{c} in the JSON"))


def test_json_results_never_hold_nan():
    with pytest.raises(NonFiniteError, match=r"at xx_en\.fr\.P@1"):
        json_text({"xx_en": {"de": {"P@1": 0.5}, "fr": {"P@1": float("nan")}}})
    with pytest.raises(NonFiniteError, match=r"at scores\.1"):
        json_text({"scores": [1.0, np.float32("inf")]})


def test_an_export_whose_dim_disagrees_with_its_weights_is_one_error_line(ngram_teacher, tiny_data, capsys):
    meta = ngram_teacher / "relkt.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "dim": 12}))
    argv = ["--encoder", f"hub:{ngram_teacher}", "--data-dir", str(tiny_data), "--no-progress"]
    assert evaluate.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: ") and "relkt.json: dim: says 12, but the SavedModel's embeddings have 8" in err


@pytest.mark.parametrize(
    "changes, says",
    [
        ({"more_pairs": {"q": 0}}, "align.more_pairs: pair folders beside align.pairs_dir"),
        ({"pairs_dir": "p", "langs": ["de"], "more_pairs": {"q": -1}}, "align.more_pairs.q: pairs a language"),
        ({"pairs_dir": "p", "langs": ["de"], "more_pairs": {"q": True}}, "align.more_pairs.q: pairs a language"),
    ],
)
def test_more_alignment_pairs_need_the_dev_folder_and_a_whole_count(changes, says):
    from relkt.config.teacher_config import AlignSection

    with pytest.raises(ConfigError, match=says):
        AlignSection(**changes).validate()


@pytest.mark.parametrize("dim", ["abc", -5, 8.5])
def test_an_export_whose_dim_is_no_size_is_one_error_line(ngram_teacher, tiny_data, capsys, dim):
    meta = ngram_teacher / "relkt.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "dim": dim}))
    argv = ["--encoder", f"hub:{ngram_teacher}", "--data-dir", str(tiny_data), "--no-progress"]
    assert evaluate.main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("error: ") and f"relkt.json: dim: expected a whole number >= 1, got {dim!r}" in err
