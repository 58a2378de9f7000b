"""The QA format table: a format defined in this test file alone (nothing under relkt/ changed) is read by `auto`,
named in errors, and trains a tiny teacher the same as the SQuAD files it was made from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from relkt.cli import train_teacher
from relkt.data.qa_format import QA_FORMATS, QaFormat, format_names, register_qa_format
from relkt.data.qa_source import QaSource
from relkt.data.records import Candidate, LanguageData, Question
from relkt.errors import ConfigError, DataError
from tests.helpers.runs import tiny_config


class ToyFormat(QaFormat):
    """`{lang}.qa.tsv`: article, id, question, the answer's sentence index, then the paragraph's sentences."""

    name = "toy"
    expects = "{lang}.qa.tsv (toy)"

    def claims(self, path: Path) -> bool:
        return path.is_dir() and any(path.glob("*.qa.tsv"))

    def files(self, path: Path) -> dict[str, Path]:
        return {p.name.split(".")[0]: p for p in sorted(path.glob("*.qa.tsv"))}

    def languages(self, path: Path) -> list[str]:
        return sorted(self.files(path))

    def read(self, path: Path, langs: list[str]) -> list[LanguageData]:
        out = []
        for lang in langs:
            data = LanguageData(lang=lang, path=self.files(path)[lang])
            for line in data.path.read_text(encoding="utf-8").splitlines():
                article, qid, question, answer, *sentences = line.split("\t")
                context, first = " ".join(sentences), len(data.candidates)
                if not any(c.context == context and c.lang == lang for c in data.candidates):
                    at = 0
                    for k, s in enumerate(sentences):
                        cid = f"{lang}:{article}.0.{k}"
                        data.candidates.append(Candidate(cid, lang, s, context, article, 0, at, at + len(s)))
                        at += len(s) + 1
                else:
                    first = next(j for j, c in enumerate(data.candidates) if c.context == context)
                data.questions.append(Question(qid, lang, question, article, 0, 0))
                data.answer_sentence[qid] = first + int(answer)
            out.append(data)
        return out


@pytest.fixture
def toy_format():
    register_qa_format(ToyFormat)
    yield
    QA_FORMATS.pop("toy")


def write_toy(squad_dir: Path, out: Path) -> Path:
    """The synthetic SQuAD files as toy files: one line a question."""
    out.mkdir()
    for path in squad_dir.glob("*.json"):
        lines = []
        for article in json.loads(path.read_text(encoding="utf-8"))["data"]:
            for paragraph in article["paragraphs"]:
                starts = [b[0] for b in paragraph["sentence_breaks"]]
                for qa in paragraph["qas"]:
                    k = starts.index(qa["answers"][0]["answer_start"])
                    lines.append(
                        "\t".join([article["title"], qa["id"], qa["question"], str(k), *paragraph["sentences"]])
                    )
        (out / f"{path.stem}.qa.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def test_the_built_in_formats_are_in_the_table():
    assert format_names() == ("auto", "jsonl", "mlqa", "squad")


def test_a_format_registered_outside_relkt_is_read_and_named(toy_format, synthetic_data, tmp_path):
    toy = write_toy(synthetic_data, tmp_path / "toy")
    source = QaSource.open(toy)  # auto: only the toy format claims the folder
    assert source.format == "toy" and source.languages() == ["de", "en"]
    assert "toy" in format_names()
    with pytest.raises(DataError, match=r"{lang}\.qa\.tsv \(toy\)"):
        QaSource.open(tmp_path)  # nothing readable: the error lists what each format expects, the toy's too
    with pytest.raises(ConfigError, match="is taken by"):
        register_qa_format(type("OtherToy", (ToyFormat,), {}))  # a second class under the name "toy"


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_tiny_teacher_trains_on_the_toy_format_as_on_the_squad_files(toy_format, synthetic_data, tmp_path):
    toy = write_toy(synthetic_data, tmp_path / "toy")
    summaries = {}
    for name, folder, fmt in (("squad", synthetic_data, "squad"), ("toy", toy, "toy")):
        runs = tmp_path / f"{name}_runs"  # beside the data: a run inside the folder it reads is refused
        cfg = tiny_config(runs, folder, **{"data.format": fmt, "mining.online_epochs": 0})
        assert train_teacher.main(["--config", str(cfg)]) == 0
        summaries[name] = json.loads((runs / "run" / "summary.json").read_text())
    # Same questions, candidates and gold: the same 42 anchors, triplets and dev scores.
    assert summaries["toy"]["anchors"] == summaries["squad"]["anchors"] == 42
    assert summaries["toy"]["best"]["value"] == pytest.approx(summaries["squad"]["best"]["value"], abs=1e-6)


def test_an_unknown_format_is_refused_before_training(synthetic_data, tmp_path, capsys):
    cfg = tiny_config(tmp_path, synthetic_data, **{"data.format": "toy"})
    assert train_teacher.main(["--config", str(cfg)]) == 2
    assert "data.format: unknown format 'toy'; valid: auto, jsonl, mlqa, squad" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


def test_a_class_named_like_a_built_in_cannot_take_its_name():
    """A user's class called JsonlFormat, declaring `jsonl`, once replaced the built-in silently (the table compared
    class names): the name is taken by the built-in's module, and the newcomer is refused in one line."""
    built_in = QA_FORMATS.loaded()["jsonl"]
    impostor = type("JsonlFormat", (QaFormat,), {"name": "jsonl", "__module__": "my_formats"})
    with pytest.raises(ConfigError, match=r"QA format 'jsonl' is taken by relkt\.data\.qa_formats\.jsonl\.JsonlFormat"):
        register_qa_format(impostor)
    assert QA_FORMATS["jsonl"] is built_in


def test_a_module_of_the_formats_folder_taking_a_name_is_one_error_line(synthetic_data, tmp_path, capsys, monkeypatch):
    """A file of the formats folder registering a taken name: the CLI says so in one line, exit 2 (it was a
    ValueError traceback). The folder here is a package made by the test, read as the table's built-ins are."""
    QA_FORMATS.loaded()
    package = tmp_path / "clashing_formats"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "second_squad.py").write_text(
        "from relkt.data.qa_format import QaFormat, register_qa_format\n\n\n"
        "@register_qa_format\nclass SquadFormat(QaFormat):\n    name = 'squad'\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(QA_FORMATS, "package", "clashing_formats")
    monkeypatch.setattr(QA_FORMATS, "_loaded", False)
    cfg = tiny_config(tmp_path, synthetic_data)
    assert train_teacher.main(["--config", str(cfg)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == (
        "error: QA format 'squad' is taken by relkt.data.qa_formats.squad.SquadFormat; "
        "clashing_formats.second_squad.SquadFormat cannot register it too: give it another name"
    )
    assert "Traceback" not in "\n".join(err)
