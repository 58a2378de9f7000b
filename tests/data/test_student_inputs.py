"""StudentInputs: the one object a student trains on, built from its config's data section."""

from __future__ import annotations

from collections import Counter

import pytest

from relkt.config import StudentConfig, load_config
from relkt.data.student_inputs import StudentInputs
from relkt.errors import ConfigError
from tests.helpers.data import make_synthetic_lareqa


def student_examples(tmp_path, *sets: str, **replay):
    """The examples of QA data in en, de, th (6 articles) beside 12 pairs each for de and th in corpus_dir, 2 held
    out, 6 drawn a language; `sets` are more `--set` overrides, `replay` StudentInputs.build's."""
    data = make_synthetic_lareqa(tmp_path / "qa", n_articles=6, langs=("en", "de", "th"))
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    for lang in ("de", "th"):
        rows = "".join(f"t\tSentence {i}.\t{lang} {i}.\n" for i in range(12))
        (corpus / f"{lang}.tsv").write_text("source\ten\txx\n" + rows, encoding="utf-8")
    base = [f"data.data_dir={data}", f"data.corpus_dir={corpus}", "data.student_langs=[de, th]"]
    config = load_config(StudentConfig, None, [*base, "data.corpus_pairs_per_lang=6", "data.corpus_dev_pairs=2", *sets])
    return StudentInputs.build(config.data, config.distill.document, tmp_path / "out", 0, **replay).examples


def corpus_counts(tmp_path, **replay) -> Counter:
    """Pairs a language trains on (student_examples)."""
    ex = student_examples(tmp_path, **replay)
    return Counter(lang for lang, qid in zip(ex.lang, ex.qas_id) if qid.startswith("corpus:"))


def test_replayed_languages_draw_their_own_share_of_pairs(tmp_path):
    """language_rows.replay_pairs_per_lang: the taught language (th) draws corpus_pairs_per_lang (6 of its 10
    training pairs), a replayed one (de) the replay share (3); without it both draw 6; 0 means the same as unset."""
    assert corpus_counts(tmp_path) == {"de": 6, "th": 6}
    assert corpus_counts(tmp_path, taught=["th"], replay_pairs=3) == {"de": 3, "th": 6}
    assert corpus_counts(tmp_path, taught=["th"], replay_pairs=0) == {"de": 6, "th": 6}
    with pytest.raises(ConfigError, match="replay_pairs_per_lang is set but student.language_rows.langs is empty"):
        corpus_counts(tmp_path, replay_pairs=3)  # no taught languages: nothing is replayed, so it is an error


def test_replay_pairs_per_lang_must_not_be_negative():
    with pytest.raises(ConfigError, match="replay_pairs_per_lang must be >= 0"):
        load_config(StudentConfig, None, ["student.language_rows.replay_pairs_per_lang=-1"])


def test_qa_repeat_weights_the_qa_examples_and_not_the_pairs(tmp_path):
    """data.qa_repeat=3: every QA example (qas_id from the pool) three times, next to itself; the corpus pairs once
    each (6 a language, as corpus_pairs_per_lang draws them); a count below 1 or not an integer is refused."""

    once, thrice = student_examples(tmp_path), student_examples(tmp_path, "data.qa_repeat=3")
    qa = [(q, x) for q, x, qid in zip(once.q_source, once.q_target, once.qas_id) if not qid.startswith("corpus:")]
    assert qa and len(once) - len(qa) == 12
    rows = list(zip(thrice.q_source, thrice.q_target, thrice.qas_id))
    assert [(q, x) for q, x, qid in rows if not qid.startswith("corpus:")] == [r for r in qa for _ in range(3)]
    assert Counter(lang for lang, qid in zip(thrice.lang, thrice.qas_id) if qid.startswith("corpus:")) == {
        "de": 6,
        "th": 6,
    }
    for bad in ("0", "1.5", "true"):
        with pytest.raises(ConfigError, match=r"data.qa_repeat: .*(an integer >= 1, got 0|expected an integer)"):
            load_config(StudentConfig, None, [f"data.qa_repeat={bad}"])
