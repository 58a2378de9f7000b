import json

import pytest

from relkt.data.squad_reader import read_squad_file
from relkt.errors import DataError
from tests.helpers.data import squad_json


def write(tmp_path, obj, name="en.json"):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj), encoding="utf-8")
    return path


def test_reads_questions_candidates_and_answer_sentences(tmp_path):
    data = read_squad_file(write(tmp_path, squad_json("en")), "en")
    assert len(data.questions) == 6 and len(data.candidates) == 6
    q = data.questions[1]
    assert (q.qas_id, q.lang, q.article, q.qid) == ("c2", "en", "Cats", "en:c2")
    assert data.candidates[data.answer_sentence["c2"]].sentence == "They hunt mice at night."
    assert data.candidates[0].context.startswith("Cats sleep") and not data.split_by_relkt


def test_raw_squad_is_split_by_relkt(tmp_path):
    data = read_squad_file(write(tmp_path, squad_json("en", with_breaks=False)), "en")
    assert data.split_by_relkt
    assert [c.sentence for c in data.candidates[:2]] == ["Cats sleep sixteen hours a day.", "They hunt mice at night."]
    assert data.candidates[data.answer_sentence["r2"]].sentence == "It is 1230 kilometres long."


def test_malformed_json_names_file_and_position(tmp_path):
    path = write(tmp_path, '{"data": [', "de.json")
    with pytest.raises(DataError, match=r"de\.json: malformed JSON: Expecting value: line 1 column 11"):
        read_squad_file(path, "de")
    # json's "Unterminated string starting at" is whole with its position, not cut off before it.
    path = write(tmp_path, '{"data": [{"title": "Cats', "de.json")
    with pytest.raises(
        DataError, match=r"malformed JSON: Unterminated string starting at: line 1 column 21 \(char 20\)$"
    ):
        read_squad_file(path, "de")


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda d: d.pop("data"), r"top level: missing field 'data'"),
        (lambda d: d["data"][1]["paragraphs"][0].pop("qas"), r"data\[1\]\.paragraphs\[0\]: missing field 'qas'"),
        (
            lambda d: d["data"][0]["paragraphs"][0].pop("sentences"),
            r"data\[0\]\.paragraphs\[0\]: missing field 'sentences'",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][1]["answers"][0].pop("answer_start"),
            r"data\[0\]\.paragraphs\[0\]\.qas\[1\]\.answers\[0\]: missing field 'answer_start'",
        ),
        (  # an answer without its text: an offset moved by an edited context could not be told from a right one
            lambda d: d["data"][0]["paragraphs"][0]["qas"][1]["answers"][0].pop("text"),
            r"data\[0\]\.paragraphs\[0\]\.qas\[1\]\.answers\[0\]: missing field 'text'",
        ),
        (
            lambda d: d["data"][2]["paragraphs"][0]["qas"][0].update(question="  "),
            r"qas\[0\]\.question: empty question \(id b1\)",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["sentence_breaks"].append([0, 10**6]),
            r"sentences' but 3 'sentence_breaks'",
        ),
    ],
)
def test_missing_or_bad_fields_name_file_and_path(tmp_path, mutate, message):
    doc = squad_json("en")
    mutate(doc)
    with pytest.raises(DataError, match=r"en\.json: .*" + message):
        read_squad_file(write(tmp_path, doc), "en")


def test_answer_outside_every_sentence_is_counted_not_fatal(tmp_path, caplog):
    doc = squad_json("en")
    doc["data"][0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = 31  # the space between sentences
    data = read_squad_file(write(tmp_path, doc), "en")
    assert data.unmatched_answers == ["c1"] and "c1" not in data.answer_sentence
    assert len(data.questions) == 6
    assert "1 answer_start offsets lie in no sentence span" in caplog.text


def test_a_repeated_qas_id_names_the_file_the_id_and_both_places(tmp_path):
    doc = squad_json("en")
    doc["data"][2]["paragraphs"][0]["qas"][1]["id"] = "c1"  # would cross-link Bread's answer with Cats'
    with pytest.raises(
        DataError,
        match=r"en\.json: data\[2\]\.paragraphs\[0\]\.qas\[1\]\.id: qas id 'c1' is used twice "
        r"\(first at data\[0\]\.paragraphs\[0\]\.qas\[0\]\)",
    ):
        read_squad_file(write(tmp_path, doc), "en")


def test_a_file_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "de.json"
    path.write_bytes(json.dumps(squad_json("de"), ensure_ascii=False).encode("latin-1"))
    with pytest.raises(DataError, match=r"de\.json: not UTF-8 text"):
        read_squad_file(path, "de")


def _doc_with(change):
    doc = squad_json("en")
    change(doc)
    return doc


@pytest.mark.parametrize(
    "change, message",
    [
        (  # every answer's text is not what its offset points at
            lambda d: [qa["answers"][0].update(text="ZZZ") for a in d["data"] for qa in a["paragraphs"][0]["qas"]],
            r"answers whose text is not the context's at answer_start \(first: data\[0\]",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][0]["answers"][0].update(answer_start=True),
            r"answer_start: expected an integer, got True",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0].update(sentence_breaks=[[0, 20], [10, 30]]),
            r"sentence_breaks\[1\]: \[10, 30\] starts before the previous span ends",
        ),
        (
            lambda d: d["data"][0].update(title=7),
            r"data\[0\]\.title: expected a string, got int",
        ),
        (
            lambda d: d["data"][0]["paragraphs"][0]["qas"][0].update(question="Who\ud800?"),
            r"qas\[0\]\.question: holds a lone surrogate",
        ),
        (
            lambda d: [
                p.update(sentences=[s.upper() for s in p["sentences"]]) for a in d["data"] for p in a["paragraphs"]
            ],
            r"'sentences' that are not the text of their sentence_breaks span",
        ),
    ],
)
def test_fields_are_checked_against_their_meaning(tmp_path, change, message):
    path = tmp_path / "en.json"
    path.write_text(json.dumps(_doc_with(change)), encoding="utf-8")
    with pytest.raises(DataError, match=message):
        read_squad_file(path, "en")


def test_two_files_of_one_language_and_a_code_that_is_no_language(tmp_path):
    from relkt.data.qa_formats.squad import squad_files

    for name in ("en.json", "xquad.en.json"):
        (tmp_path / name).write_text(json.dumps(squad_json("en")), encoding="utf-8")
    with pytest.raises(DataError, match=r"two files for the language 'en': en\.json and xquad\.en\.json"):
        squad_files(tmp_path)
    (tmp_path / "en.json").unlink()
    (tmp_path / "xquad.e n.json").write_text("{}", encoding="utf-8")
    assert list(squad_files(tmp_path)) == ["en"]  # `e n` is no language: not read as one
