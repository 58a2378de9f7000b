"""The tokenizer audit (relkt.jobs.audit, reported by `relkt coverage --tokenizers-only`): tokenizer coverage per
language,
from the encoders' own tokenizers (no encoding)."""

import json

from relkt.cli import coverage
from relkt.encoders.export import export_encoder
from relkt.encoders.vocab_extension import extend_vocabulary
from tests.helpers.data import ARTICLES
from tests.helpers.tiny_bert import tiny_bert


def test_audit_shows_extension_removing_unknown_pieces(tiny_data, tmp_path, capsys):
    base = tiny_bert()
    german = [q for _, _, qas in ARTICLES["de"] for _, q, _ in qas]
    extended, _ = extend_vocabulary(base, german)
    specs = [
        f"base=hub:{export_encoder(base, tmp_path / 'base')}",
        f"extended=hub:{export_encoder(extended, tmp_path / 'ext')}",
        "hashing=ngram",
    ]
    folder = tmp_path / "coverage"
    args = sum((["--encoder", s] for s in specs), []) + [
        "--data-dir",
        str(tiny_data),
        "--split",
        "all",
        "--output",
        str(folder),
        "--tokenizers-only",
    ]
    assert coverage.main(args) == 0
    captured = capsys.readouterr()
    assert "hashing (ngram): no WordPiece tokenizer to audit; skipped" in captured.err
    audits = json.loads((folder / "report.json").read_text())["audits"]
    assert audits["hashing"] is None
    # The tiny English vocabulary lacks most German words: every German question has an [UNK]; the
    # extension built from those questions leaves none, and adds no [UNK] elsewhere (its letters also
    # spell English words the tiny vocabulary lacks, e.g. "Rhine").
    assert audits["base"]["de"]["texts_with_unk"] == 1.0 and audits["extended"]["de"]["unk_rate"] == 0.0
    assert (
        audits["extended"]["en"]["unk_rate"] < audits["base"]["en"]["unk_rate"] and audits["base"]["de"]["n_texts"] == 6
    )
    de_row = next(row for row in captured.out.splitlines() if row.startswith("| de |"))
    assert "/ 100.0 /" in de_row and de_row.split("|")[3].strip().startswith("0.0 / 0.0 /")
    # tiny_bert's max_length 16 holds every tiny question: none is cut.
    assert audits["base"]["de"]["texts_cut"] == 0.0 and de_row.split("|")[2].strip().endswith("/ 0.0")
    assert de_row in (folder / "report.md").read_text()


def test_audit_rejects_an_unnamed_encoder(tiny_data, tmp_path, capsys):
    argv = ["--encoder", "ngram", "--data-dir", str(tiny_data), "--tokenizers-only", "--output", str(tmp_path / "r")]
    assert coverage.main(argv) == 2
    assert "expected NAME=SPEC" in capsys.readouterr().err


def test_a_tokenizer_audit_into_an_earlier_reports_folder_leaves_one_report(tiny_data, tmp_path, capsys):
    out = tmp_path / "r"
    common = ["--encoder", "a=ngram", "--data-dir", str(tiny_data), "--split", "all", "--output", str(out)]
    assert coverage.main(common) == 0  # LAReQA's bias analyses, with their figures
    earlier = sorted(p.name for p in out.iterdir() if p.suffix in (".png", ".npz"))
    assert earlier, "the bias report draws figures"
    (out / "notes.txt").write_text("mine")  # a file no report writes: left alone
    assert coverage.main([*common, "--tokenizers-only"]) == 0
    assert sorted(p.name for p in out.iterdir() if not p.name.startswith(".")) == [
        "notes.txt",
        "report.json",
        "report.md",
    ]
    assert "audits" in json.loads((out / "report.json").read_text())
