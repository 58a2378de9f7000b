"""QA sources: the formats relkt reads (SQuAD JSON, MLQA, JSON Lines), told apart from the files, and their errors."""

import json
from pathlib import Path

import numpy as np
import pytest

from relkt.data.jsonl_reader import read_jsonl_file
from relkt.data.lareqa_pool import LareqaPool
from relkt.data.qa_source import QaSource
from relkt.errors import DataError
from tests.helpers.data import squad_json

# The README's five-line example: q1 and q2 are asked in English and German, q3 in English only.
RECORDS = [
    {
        "id": "q1",
        "lang": "en",
        "question": "Who wrote Hamlet?",
        "answer": "Shakespeare",
        "context": "Hamlet is a play. Shakespeare wrote it.",
    },
    {
        "id": "q1",
        "lang": "de",
        "question": "Wer schrieb Hamlet?",
        "answer": "Shakespeare",
        "context": "Hamlet ist ein Stück. Shakespeare schrieb es.",
    },
    {
        "id": "q2",
        "lang": "en",
        "question": "What is Hamlet?",
        "answer": "a play",
        "context": "Hamlet is a play. Shakespeare wrote it.",
    },
    {
        "id": "q2",
        "lang": "de",
        "question": "Was ist Hamlet?",
        "answer": "ein Stück",
        "context": "Hamlet ist ein Stück. Shakespeare schrieb es.",
    },
    {
        "id": "q3",
        "lang": "en",
        "question": "Where is Paris?",
        "answer": "in France",
        "context": "Paris lies in France.",
        "title": "Paris",
    },
]


def write_jsonl(path: Path, records, extra_lines=()) -> Path:
    path.write_text(
        "\n".join([json.dumps(r, ensure_ascii=False) for r in records] + list(extra_lines)) + "\n", encoding="utf-8"
    )
    return path


def test_jsonl_records_become_a_pool_with_gold_in_every_language(tmp_path):
    source = QaSource.open(write_jsonl(tmp_path / "qa.jsonl", RECORDS))
    assert source.format == "jsonl" and source.languages() == ["de", "en"]
    pool = LareqaPool.from_source(source)
    # Candidates: en "Hamlet is a play." / "Shakespeare wrote it." / "Paris lies in France.", de: its two sentences.
    assert len(pool.candidates) == 5 and len(pool.questions) == 5
    gold = {q.qid: sorted(pool.candidates[j].sentence for j in g) for q, g in zip(pool.questions, pool.gold)}
    assert gold["de:q1"] == ["Shakespeare schrieb es.", "Shakespeare wrote it."]
    assert gold["en:q2"] == ["Hamlet is a play.", "Hamlet ist ein Stück."]
    assert gold["en:q3"] == ["Paris lies in France."]
    # Contexts that share an id are one article (named after its smallest id), so a split keeps translations together.
    articles = {q.qid: q.article for q in pool.questions}
    assert articles["en:q1"] == articles["de:q2"] == "q1" and articles["en:q3"] == "Paris"


@pytest.mark.parametrize(
    "line, message",
    [
        (
            '{"id": "q9", "lang": "en", "question": "Why?", "context": "Because."}',
            r"qa.jsonl:6: missing field 'answer'",
        ),
        (
            '{"id": "q9", "lang": "en", "question": "Why?", "answer": "so", "context": "Because."}',
            r"qa.jsonl:6.answer: 'so' does not occur",
        ),
        (
            '{"id": "q9", "lang": "en", "question": "", "answer": "B", "context": "B."}',
            r"qa.jsonl:6.question: expected a non-empty string",
        ),
        ('{"id": "q9", "lang": "en", "question": "Why?", ', r"qa.jsonl:6: malformed JSON"),
        ('["a list"]', r"qa.jsonl:6: expected a JSON object, got list"),
        (json.dumps(RECORDS[0]), r"qa.jsonl:6.id: 'q1' is asked twice in en \(first on line 1\)"),
        (
            '{"id": "q9", "lang": "en", "question": "Q?", "answer": "B", "context": "A B.", "answer_start": 0}',
            r"qa.jsonl:6.answer_start: 0 does not point at the answer",
        ),
    ],
)
def test_a_bad_jsonl_record_names_file_line_and_field(tmp_path, line, message):
    with pytest.raises(DataError, match=message):
        read_jsonl_file(write_jsonl(tmp_path / "qa.jsonl", RECORDS, [line]))


def mlqa_file(folder: Path, context: str, question: str, qas: dict, title: str) -> None:
    """An MLQA file: one article of one paragraph in the `context` language, its questions in `question`'s."""
    contexts = {"en": "The river is long. It flows north.", "de": "Der Fluss ist lang. Er fließt nach Norden."}
    answers = {"en": ["long", "north"], "de": ["lang", "Norden"]}
    doc = {
        "data": [
            {
                "title": title,
                "paragraphs": [
                    {
                        "context": contexts[context],
                        "qas": [
                            {
                                "id": qid,
                                "question": text,
                                "answers": [
                                    {
                                        "text": answers[context][k],
                                        "answer_start": contexts[context].index(answers[context][k]),
                                    }
                                ],
                            }
                            for k, (qid, text) in enumerate(qas.items())
                        ],
                    }
                ],
            }
        ]
    }
    (folder / f"dev-context-{context}-question-{question}.json").write_text(json.dumps(doc), encoding="utf-8")


def two_language_mlqa(folder: Path) -> None:
    """MLQA's four files of two languages, two questions each, linked by id."""
    questions = {
        "en": {"a1": "How long is the river?", "a2": "Where does it flow?"},
        "de": {"a1": "Wie lang ist der Fluss?", "a2": "Wohin fließt er?"},
    }
    titles = {"en": "River", "de": "Fluss"}
    for c in ("en", "de"):
        for q in ("en", "de"):
            mlqa_file(folder, c, q, questions[q], titles[c])


def test_mlqa_questions_in_one_language_find_answers_in_another(tmp_path):
    two_language_mlqa(tmp_path)
    source = QaSource.open(tmp_path)
    assert source.format == "mlqa" and source.languages() == ["de", "en"]
    pool = LareqaPool.from_source(source)
    assert sorted(q.qid for q in pool.questions) == ["de:a1", "de:a2", "en:a1", "en:a2"]
    gold = {q.qid: sorted(pool.candidates[j].sentence for j in g) for q, g in zip(pool.questions, pool.gold)}
    assert gold["de:a2"] == ["Er fließt nach Norden.", "It flows north."]
    # The German article is named after its English twin: one article, so a split cannot part translations.
    assert {c.article for c in pool.candidates} == {q.article for q in pool.questions} == {"River"}
    assert QaSource.open(tmp_path).read(["de"])[0].questions[0].lang == "de"


def test_a_revised_mlqa_context_is_refused_not_pooled_twice(tmp_path):
    questions = {"en": {"a1": "How long is the river?"}, "de": {"a1": "Wie lang ist der Fluss?"}}
    for q in ("en", "de"):
        mlqa_file(tmp_path, "de", q, questions[q], "Fluss")
    revised = tmp_path / "dev-context-de-question-en.json"
    doc = json.loads(revised.read_text(encoding="utf-8"))
    doc["data"][0]["paragraphs"][0]["context"] += " Er ist breit."  # one file's copy of the paragraph, revised
    revised.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(DataError, match=r"another version of one in dev-context-de-question-de\.json \(2 of its"):
        LareqaPool.from_source(QaSource.open(tmp_path))


def test_mlqa_ids_that_no_longer_link_are_refused_not_read_as_two_questions(tmp_path):
    two_language_mlqa(tmp_path)
    renamed = tmp_path / "dev-context-de-question-en.json"
    renamed.write_text(renamed.read_text(encoding="utf-8").replace('"a2"', '"a2-v2"'), encoding="utf-8")
    with pytest.raises(
        DataError, match=r"question-en\.json: 1 of its 2 question ids \(e\.g\. a2-v2\) are not asked in "
    ):
        LareqaPool.from_source(QaSource.open(tmp_path))


def test_mlqa_folder_with_both_splits_is_refused(tmp_path):
    mlqa_file(tmp_path, "en", "en", {"a1": "How long?"}, "River")
    (tmp_path / "test-context-en-question-en.json").write_text(
        (tmp_path / "dev-context-en-question-en.json").read_text()
    )
    with pytest.raises(DataError, match="both MLQA dev- and test- files"):
        QaSource.open(tmp_path)


def test_formats_are_told_from_the_files(tiny_data, tmp_path):
    assert QaSource.open(tiny_data).format == "squad"
    assert QaSource.open(tiny_data.parent).path == tiny_data  # a parent holding xquad-r/
    single = tmp_path / "en.json"
    single.write_text(json.dumps(squad_json("en", with_breaks=False)), encoding="utf-8")
    assert QaSource.open(single).languages() == ["en"]
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    (mixed / "en.json").write_text(single.read_text(), encoding="utf-8")
    write_jsonl(mixed / "qa.jsonl", RECORDS)
    with pytest.raises(DataError, match=r"several formats \(jsonl, squad\); set data.format"):
        QaSource.open(mixed)
    assert QaSource.open(mixed, "jsonl").languages() == ["de", "en"]  # told, it reads the one asked for
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("hello")
    with pytest.raises(DataError, match=r"no QA files relkt can read \(it holds notes.txt\)"):
        QaSource.open(empty)
    with pytest.raises(DataError, match="unknown format 'csv'"):
        QaSource.open(tiny_data, "csv")
    with pytest.raises(DataError, match="no such file or folder"):
        QaSource.open(tmp_path / "nowhere")


def test_every_format_gives_the_same_pool_for_the_same_questions(tmp_path):
    """One English paragraph as SQuAD JSON and as JSON Lines: the same candidates and gold."""
    doc = squad_json("en", with_breaks=False)
    (tmp_path / "squad").mkdir()
    (tmp_path / "squad" / "en.json").write_text(json.dumps(doc), encoding="utf-8")
    records = [
        {
            "id": qa["id"],
            "lang": "en",
            "question": qa["question"],
            "answer": qa["answers"][0]["text"],
            "context": p["context"],
            "title": a["title"],
            "answer_start": qa["answers"][0]["answer_start"],
        }
        for a in doc["data"]
        for p in a["paragraphs"]
        for qa in p["qas"]
    ]
    squad = LareqaPool.from_source(QaSource.open(tmp_path / "squad"))
    mine = LareqaPool.from_source(QaSource.open(write_jsonl(tmp_path / "qa.jsonl", records)))
    assert [c.sentence for c in mine.candidates] == [c.sentence for c in squad.candidates]
    assert [q.qas_id for q in mine.questions] == [q.qas_id for q in squad.questions]
    assert all(np.array_equal(a, b) for a, b in zip(mine.gold, squad.gold))


def _mlqa_doc(articles: list[tuple[str, list[tuple[str, dict[str, tuple[str, str]]]]]]) -> dict:
    """SQuAD JSON of (title, [(context, {qas id: (question, answer text)})]) articles."""
    return {
        "data": [
            {
                "title": title,
                "paragraphs": [
                    {
                        "context": context,
                        "qas": [
                            {"id": i, "question": q, "answers": [{"text": a, "answer_start": context.index(a)}]}
                            for i, (q, a) in qas.items()
                        ],
                    }
                    for context, qas in paragraphs
                ],
            }
            for title, paragraphs in articles
        ]
    }


def test_mlqa_pool_joins_every_file_of_a_context_language(tmp_path):
    """MLQA-R worked by hand: the English contexts come from two files that hold different articles (as
    dev-context-en-question-ar holds only the articles with Arabic questions); each context is a candidate once,
    and a question's gold is its answer sentence in every language, by id."""
    river = "The river is long. It flows north."
    hill = "The hill is green. Sheep live there."
    fluss = "Der Fluss ist lang. Er fließt nach Norden."
    files = {
        # English contexts, German questions: only the river article has German questions.
        "en-de": [("River", [(river, {"a1": ("Wie lang ist der Fluss?", "long")})])],
        # English contexts, English questions: both articles; the river context again.
        "en-en": [
            ("River", [(river, {"a1": ("How long is the river?", "long")})]),
            ("Hill", [(hill, {"b1": ("Who lives on the hill?", "Sheep")})]),
        ],
        "de-de": [("Fluss", [(fluss, {"a1": ("Wie lang ist der Fluss?", "lang")})])],
    }
    for name, articles in files.items():
        (tmp_path / f"dev-context-{name[:2]}-question-{name[3:]}.json").write_text(json.dumps(_mlqa_doc(articles)))
    pool = LareqaPool.from_source(QaSource.open(tmp_path))
    sentences = [(c.lang, c.sentence) for c in pool.candidates]
    # 2 German + 4 English sentences, the river's English context once although two files hold it.
    assert sorted(sentences) == sorted(
        [
            ("de", "Der Fluss ist lang."),
            ("de", "Er fließt nach Norden."),
            ("en", "The river is long."),
            ("en", "It flows north."),
            ("en", "The hill is green."),
            ("en", "Sheep live there."),
        ]
    )
    gold = {q.qid: sorted(pool.candidates[j].sentence for j in g) for q, g in zip(pool.questions, pool.gold)}
    assert gold == {
        "de:a1": ["Der Fluss ist lang.", "The river is long."],
        "en:a1": ["Der Fluss ist lang.", "The river is long."],
        "en:b1": ["Sheep live there."],  # read from the file that comes second: lost when one file stood for all
    }
    # The German question is read from its own language's file: its article and paragraph are German's.
    de = next(q for q in pool.questions if q.lang == "de")
    assert (de.article, de.paragraph) == ("River", 0)
    # Paragraphs are numbered per article over the merged contexts; cids are unique.
    english = [c for c in pool.candidates if c.lang == "en"]
    assert {(c.article, c.paragraph) for c in english} == {("River", 0), ("Hill", 0)}
    assert len({c.cid for c in pool.candidates}) == len(pool.candidates)
    # The XX->EN protocol's English units are both articles, not the first file's one.
    passages = pool.subset(candidate_langs=["en"]).to_passages()
    assert sorted(c.sentence for c in passages.candidates) == sorted([river, hill])


def test_an_id_that_names_questions_of_two_articles_in_two_languages_is_refused(tmp_path):
    de = squad_json("de")
    cats, rhine = de["data"][0]["paragraphs"][0]["qas"], de["data"][1]["paragraphs"][0]["qas"]
    cats[0]["id"], rhine[0]["id"] = rhine[0]["id"], cats[0]["id"]  # c1 now asked about the Rhine in German
    for lang, data in (("en", squad_json("en")), ("de", de)):
        (tmp_path / f"{lang}.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(DataError, match=r"en.json: questions 'c2' and 'r1' share an article in de .* but not in en"):
        QaSource.open(tmp_path).read()
    assert [d.lang for d in QaSource.open(tmp_path).read(["en"])] == ["en"]  # one language alone is read


def test_every_bad_jsonl_line_is_counted_and_the_first_shown_in_file_order(tmp_path):
    bad = [
        '{"id": "q9", "lang": "en", "question": "\u200b\u200e\u2060", "answer": "B", "context": "B."}',
        '{"id": "q8", "lang": "en", "question": "Why?"}',
        "not json",
    ]
    with pytest.raises(DataError) as e:
        read_jsonl_file(write_jsonl(tmp_path / "qa.jsonl", RECORDS, bad))
    lines = str(e.value).splitlines()
    assert lines[0].endswith("qa.jsonl: 4 bad line(s):")  # the second line lacks two fields: two errors
    assert [line.strip().split(":")[1].split(".")[0] for line in lines[1:]] == ["6", "7", "7", "8"]
    assert "6.question: expected a non-empty string (more than whitespace or invisible marks)" in lines[1]


def test_one_language_under_two_codes_is_refused(tmp_path):
    us = {**RECORDS[0], "id": "q7", "lang": "en-US"}
    with pytest.raises(DataError, match=r"lang 'en-us' and 'en' both occur; write one code for one language"):
        read_jsonl_file(write_jsonl(tmp_path / "qa.jsonl", [*RECORDS, us]))


def test_a_language_file_named_in_another_script_is_refused(tiny_data):
    from relkt.data.qa_formats.squad import squad_files

    (tiny_data / "δε.json").write_text((tiny_data / "de.json").read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(DataError, match=r"δε\.json: 'δε' is not a language code \(ASCII letters"):
        squad_files(tiny_data)
