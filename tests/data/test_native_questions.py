"""`data.native_qa`: questions written in a student language with no English twin train against their answers."""

import json

import numpy as np
import pytest

from relkt.config import StudentConfig, load_config
from relkt.data.native_questions import native_examples
from relkt.errors import DataError
from tests.helpers.data import make_synthetic_lareqa
from tests.helpers.runs import student_config


def native_source(root, renamed=True, langs=("de",)):
    """A German-only QA set (the synthetic layout); `renamed`: its titles, ids and contexts its own, sharing nothing."""
    folder = make_synthetic_lareqa(root, n_articles=4, langs=langs, seed=7)
    if renamed:
        for path in folder.glob("*.json"):
            doc = json.loads(path.read_text())
            for article in doc["data"]:
                article["title"] = "Native " + article["title"]
                for paragraph in article["paragraphs"]:
                    for qa in paragraph["qas"]:
                        qa["id"] = "native-" + qa["id"]
            path.write_text(json.dumps(doc))
    return folder


def config(tmp_path, data, teacher, native, **changes):
    return load_config(
        StudentConfig, student_config(tmp_path, data, teacher, **{"data.native_qa": {str(native): 0}, **changes})
    )


def test_each_native_question_trains_against_its_own_answer_sentence(synthetic_data, tmp_path):
    native = native_source(tmp_path / "native")
    cfg = config(tmp_path, synthetic_data, tmp_path / "t", native)
    rows = native_examples(cfg.data, ["de"], seed=0)
    doc = json.loads((native / "de.json").read_text())
    expected = {}
    for article in doc["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                start = qa["answers"][0]["answer_start"]
                spans = zip(paragraph["sentences"], paragraph["sentence_breaks"])
                expected[qa["question"]] = next(s for s, (a, _) in spans if a == start)
    # 4 articles x 2 questions; the teacher sees the answer in q_en's place and as the document, the student both
    assert len(rows) == 8 and set(rows.lang) == {"de"}
    assert {q: d for q, d in zip(rows.q_target, rows.d_student)} == expected
    assert rows.q_source == rows.d_teacher == rows.d_student
    assert all(i.startswith("native:de:native-") for i in rows.qas_id)
    half = config(tmp_path, synthetic_data, tmp_path / "t", native, **{"data.native_qa": {str(native): 3}})
    drawn = native_examples(half.data, ["de"], seed=0)
    assert len(drawn) == 3 and set(drawn.q_target) < set(expected)


def test_a_question_whose_answer_is_in_another_language_trains_against_that_sentence(synthetic_data, tmp_path):
    """MLQA test's files ask in one language about another's context: a German question with only an English gold
    sentence trains against the English one."""
    native = native_source(tmp_path / "native", langs=("en", "de"))
    doc = json.loads((native / "de.json").read_text())
    for article in doc["data"]:
        for paragraph in article["paragraphs"]:
            paragraph["qas"] = []  # German questions only in the English file's context
    (native / "de.json").write_text(json.dumps(doc))
    en = json.loads((native / "en.json").read_text())
    for article in en["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["question"] = "Deutsch " + qa["question"]
    (native / "de.json").write_text(json.dumps(en))  # the English contexts, asked in "German"
    cfg = config(tmp_path, synthetic_data, tmp_path / "t", native)
    rows = native_examples(cfg.data, ["de"], seed=0)
    assert len(rows) == 8 and all(q.startswith("Deutsch ") for q in rows.q_target)
    assert all(d in json.dumps(en) for d in rows.d_teacher)


def answer_sentences(path):
    """{question id: its answer's sentence} of one synthetic-layout file."""
    out = {}
    for article in json.loads(path.read_text())["data"]:
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                start = qa["answers"][0]["answer_start"]
                spans = zip(paragraph["sentences"], paragraph["sentence_breaks"])
                out[qa["id"]] = next(s for s, (a, _) in spans if a == start)
    return out


def test_a_taught_language_reads_its_own_passage_against_the_teachers_twin(synthetic_data, tmp_path):
    """Passages in a taught language L: the teacher does not read L, so its target is the answer's twin in a language
    it reads, and the document term puts the student's reading of the L passage on it; untaught, L's own sentence."""
    native = native_source(tmp_path / "native", langs=("en", "de"))
    en, de = answer_sentences(native / "en.json"), answer_sentences(native / "de.json")
    cfg = config(tmp_path, synthetic_data, tmp_path / "t", native)
    taught = native_examples(cfg.data, ["de"], seed=0, taught=["de"])
    ids = [i.split(":", 2)[2] for i in taught.qas_id]
    assert len(taught) == 8 and set(en[i] for i in ids) != set(de[i] for i in ids)
    assert taught.q_source == taught.d_teacher == [en[i] for i in ids]  # the teacher reads English
    assert taught.d_student == [de[i] for i in ids]  # the student reads the German passage
    read = native_examples(cfg.data, ["de"], seed=0)  # German read by the teacher: its own sentence both sides
    assert read.d_teacher == read.d_student == [de[i.split(":", 2)[2]] for i in read.qas_id]


def test_a_native_source_sharing_a_context_with_the_test_source_is_refused_naming_both(synthetic_data, tmp_path):
    test = native_source(tmp_path / "test", renamed=False, langs=("en", "de"))
    native = native_source(tmp_path / "native", renamed=False)
    doc = json.loads((native / "de.json").read_text())
    for article in doc["data"]:  # other titles and ids, the same paragraphs
        article["title"] = "Other " + article["title"]
        for paragraph in article["paragraphs"]:
            for qa in paragraph["qas"]:
                qa["id"] = "other-" + qa["id"]
    (native / "de.json").write_text(json.dumps(doc))
    cfg = config(tmp_path, synthetic_data, tmp_path / "t", native, **{"data.test_dir": str(test)})
    with pytest.raises(DataError, match="context") as e:
        native_examples(cfg.data, ["de"], seed=0)
    assert str(native) in str(e.value) and str(test) in str(e.value) and "data.native_qa" in str(e.value)


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_native_source_trains_a_tiny_student(synthetic_data, tmp_path):
    """The same student with and without the native rows: with them, its embedding of each native question ends
    nearer the teacher's embedding of that question's answer; the source is in the run's fingerprints."""
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder
    from relkt.encoders.registry import build_encoder
    from relkt.stages.student_trainer import StudentTrainer

    teacher = export_encoder(NgramEncoder(dim=16, num_buckets=512, seed=1), tmp_path / "teacher")
    native = native_source(tmp_path / "native")
    distances = {}
    for name, sources in (("with", {str(native): 0}), ("without", {})):
        changes = {"data.native_qa": sources, "distill.epochs": 4, "eval.every_steps": 1000}
        trainer = StudentTrainer(config(tmp_path / name, synthetic_data, teacher, native, **changes))
        if name == "with":
            assert any(k.startswith("native_qa/0/") for k in trainer.fingerprints())  # a changed file stops a resume
            rows = [i for i, q in enumerate(trainer.examples.qas_id) if q.startswith("native:")]
            questions = [trainer.examples.q_target[i] for i in rows]
            target = trainer.teacher.embed([trainer.examples.d_teacher[i] for i in rows])
            assert len(rows) == 8
        trainer.run()
        student = build_encoder(f"hub:{tmp_path / name / 'run' / 'last'}")
        distances[name] = np.mean(np.sum((student.embed(questions) - target) ** 2, axis=1))
    assert distances["with"] < 0.8 * distances["without"], distances
