import json

from relkt.cli import coverage
from relkt.encoders.export import export_encoder
from tests.helpers.tiny_bert import tiny_bert


def test_report_has_every_section_figure_and_number(tiny_data, tmp_path):
    bert = export_encoder(tiny_bert(), tmp_path / "bert_export")  # a bert-type export keeps its vocabulary
    out = tmp_path / "report"
    rc = coverage.main(
        [
            "--encoder",
            "base=ngram",
            "--encoder",
            f"student=hub:{bert}",
            "--data-dir",
            str(tiny_data),
            "--split",
            "all",
            "--new-lang",
            "de",
            "--pca-langs",
            "en,de",
            "--top-k",
            "4",
            "--bootstrap",
            "50",
            "--output",
            str(out),
        ]
    )
    assert rc == 0
    md = (out / "report.md").read_text()
    for section in (
        "## Retrieval per question language",
        "## Limit to one target",
        "## Same-language bias",
        "## Monolingual pool",
        "## Languages of the top 4",
        "## Embedding views",
        "## Significance",
        "## New language: de",
    ):
        assert section in md, section
    for fig in ("heatmap_base.png", "heatmap_student.png", "heatmap_delta.png", "top4_base.png", "pca_student.png"):
        assert (out / fig).stat().st_size > 1000 and f"./{fig}" in md
    report = json.loads((out / "report.json").read_text())
    student = report["encoders"]["student"]
    assert len(student["limit_to_one_target"]) == 2 and student["tokenizer"]["de"]["unk_rate"] > 0.5  # tiny vocab
    assert report["encoders"]["base"]["tokenizer"] is None
    assert set(report["significance"]["base -> student"]) == {"all", "de", "en"}


def test_bad_arguments_are_clear(tiny_data, tmp_path, capsys):
    assert coverage.main(["--encoder", "ngram", "--data-dir", str(tiny_data), "--output", str(tmp_path / "out")]) == 2
    assert "expected NAME=SPEC" in capsys.readouterr().err
    assert (
        coverage.main(
            [
                "--encoder",
                "a=ngram",
                "--data-dir",
                str(tiny_data),
                "--new-lang",
                "xx",
                "--split",
                "all",
                "--output",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    assert "--new-lang 'xx' is not in the pool; valid: de, en" in capsys.readouterr().err
