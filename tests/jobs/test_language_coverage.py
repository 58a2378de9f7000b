"""relkt coverage on pair files, question files and a test source the tests make."""

import json
import re

import numpy as np
import pytest

from relkt.analysis.significance import mcnemar
from relkt.cli import coverage as language_coverage
from relkt.encoders.export import export_encoder
from relkt.encoders.ngram_encoder import NgramEncoder
from tests.helpers.tiny_bert import tiny_bert

WORDS = ["house", "tree", "river", "stone", "bread", "light", "water", "night", "horse", "cloud", "green", "sound"]


def make_files(tmp_path):
    """fi pairs (some words shared with English, so an n-gram model finds some) and fi/bn question files."""
    pairs, questions = tmp_path / "pairs", tmp_path / "questions"
    pairs.mkdir()
    questions.mkdir()
    fi = "".join(f"t\tThe {w} is here.\t{w[:3]}ko {w} on täällä.\n" for w in WORDS)
    (pairs / "fi.tsv").write_text("source\ten\txx\n" + fi, encoding="utf-8")
    (pairs / "bn.tsv").write_text(
        "source\ten\txx\n" + "".join(f"t\tA {w}.\tএকটি {w}।\n" for w in WORDS), encoding="utf-8"
    )
    (questions / "fi.tsv").write_text(
        "id\tsplit\txx\ten\n"  # the first 4 marked train: scored are the other 8
        + "".join(f"{i}\t{'train' if i < 4 else ''}\tMissä {w} on?\tWhere is the {w}?\n" for i, w in enumerate(WORDS)),
        encoding="utf-8",
    )
    return pairs, questions


def test_report_numbers_are_recomputed_from_per_item_hits(tmp_path, tiny_data):
    pairs, questions = make_files(tmp_path)
    other = export_encoder(NgramEncoder(dim=16, num_buckets=128, seed=7), tmp_path / "other")
    bert = export_encoder(tiny_bert(), tmp_path / "bert")  # a tokenizer to audit (its tiny vocabulary lacks Bengali)
    out = tmp_path / "report"
    assert (
        language_coverage.main(
            [
                "--encoder",
                "zero-shot=ngram",
                "--encoder",
                f"student=hub:{other}",
                "--encoder",
                f"bert=hub:{bert}",
                "--langs",
                "fi,bn",
                "--pairs-dir",
                str(pairs),
                "--dev-pairs",
                "8",
                "--questions-dir",
                str(questions),
                "--test-dir",
                str(tiny_data),
                "--learned",
                "fi",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    report = json.loads((out / "report.json").read_text())
    items = np.load(out / "per_item.npz")
    for name in ("zero-shot", "student", "bert"):
        for lang, task, n in (("fi", "pairs", 8), ("bn", "pairs", 8), ("fi", "questions", 8)):
            for d in ("xx>en", "en>xx"):
                hit = items[f"{name}|{task}/{lang}/{d}"]
                assert len(hit) == n
                assert report["figures"][name][lang][task][d]["P@1"] == pytest.approx(hit.mean())
        for lang in ("de", "en"):
            assert report["figures"][name]["test"][lang]["article P@1"] == pytest.approx(
                items[f"{name}|test/{lang}"].mean()
            )
    assert "questions" not in report["figures"]["student"]["bn"]  # no bn question file: not measured, not zero
    assert report["setup"]["questions_scored"] == {"fi": 8}
    for later in ("student", "bert"):
        for key in ("pairs/fi/xx>en", "questions/fi/en>xx", "test/de"):
            a, b = items[f"zero-shot|{key}"], items[f"{later}|{key}"]
            entry = report["comparisons"][f"{later} vs zero-shot"][key]
            assert entry["difference"] == pytest.approx(b.mean() - a.mean())
            assert entry["p_value"] == pytest.approx(mcnemar(a, b)["p_value"])
    tok = report["figures"]["bert"]["bn"]["tokenizer"]
    assert tok["unreadable_scripts"]["BENGALI"] == 1.0 and tok["unk_rate"] > 0  # every Bengali letter is [UNK]
    assert "tokenizer" not in report["figures"]["zero-shot"]["fi"]  # n-grams have no vocabulary to audit
    md = (out / "report.md").read_text()
    for section in (
        "## How the tokenizer reads each language",
        "## Retrieval on held-out pairs",
        "## Retrieval on XOR-TyDi questions",
        "did the others forget?",
        "Bengali 100%",
    ):
        assert section in md, section
    assert (out / "coverage.png").stat().st_size > 1000


@pytest.mark.parametrize(
    "args, message",
    [
        (["--langs", "sw"], "--pairs-dir .*: no pairs for sw; it holds bn, fi"),
        (["--langs", "fi", "--questions-dir", "PAIRS"], None),  # a pairs folder as questions: fine, fi is in it
        (["--langs", "bn", "--questions-dir", "QUESTIONS"], "no question file for any of bn"),
        (["--langs", "fi", "--broken"], r"fi.tsv:5: 2 columns, expected 3 \(source, en, xx\); fix or remove the line"),
        (["--langs", "fi", "--empty"], r"fi.tsv: no usable pairs"),
        # A held-out slice as large as the file would call every pair held out, those a student trained on too.
        (["--langs", "fi", "--dev-pairs", "10000000"], r"fi.tsv: 10000000 held-out pairs would hold out every one"),
        (["--langs", "fi", "--center"], "--center centres question files: give --questions-dir"),
        (["--langs", "fi", "--questions-dir", "PAIRS", "--center"], r"fi.tsv: --center needs a `split` column"),
    ],
)
def test_bad_input_is_one_clear_line(tmp_path, capsys, args, message):
    pairs, questions = make_files(tmp_path)
    if "--broken" in args:
        lines = (pairs / "fi.tsv").read_text().splitlines()
        lines[4] = "t\tonly two"
        (pairs / "fi.tsv").write_text("\n".join(lines) + "\n")
    if "--empty" in args:
        (pairs / "fi.tsv").write_text("source\ten\txx\n")
    args = [
        a.replace("PAIRS", str(pairs)).replace("QUESTIONS", str(questions))
        for a in args
        if a not in ("--broken", "--empty")
    ]
    rc = language_coverage.main(
        ["--encoder", "base=ngram", "--pairs-dir", str(pairs), "--dev-pairs", "4", "--output", str(tmp_path / "out")]
        + args
    )
    err = capsys.readouterr().err
    if message is None:
        assert rc == 0
        return
    assert rc == 2 and len(err.strip().splitlines()) == 1
    assert re.search(message, err), err
    assert not (tmp_path / "out" / "report.json").exists()


def test_one_command_reports_languages_held_out_by_source_and_the_pool_bias(tmp_path, tiny_data):
    """relkt coverage with pair files and --bias: one report.md (the languages, then the bias analyses) and one
    report.json; the held-out pairs are a whole source, and the report says so."""
    from relkt.cli import coverage

    pairs, _ = make_files(tmp_path)
    fi = (pairs / "fi.tsv").read_text(encoding="utf-8").splitlines()
    news = [line.replace("t\t", "news\t", 1) for line in fi[1:5]]  # 4 pairs of another source
    (pairs / "fi.tsv").write_text("\n".join([fi[0], *fi[5:], *news]) + "\n", encoding="utf-8")
    out = tmp_path / "one"
    argv = ["--encoder", "a=ngram", "--encoder", "b=ngram", "--langs", "fi", "--pairs-dir", str(pairs)]
    argv += ["--held-out-sources", "news", "--bias", "--data-dir", str(tiny_data), "--split", "all"]
    assert coverage.main([*argv, "--top-k", "4", "--bootstrap", "20", "--output", str(out)]) == 0
    report = json.loads((out / "report.json").read_text())
    assert report["setup"]["held_out"].startswith("every pair of news (whole sources")
    assert f"Held-out pairs from {pairs}: every pair of news (whole sources" in (out / "report.md").read_text()
    assert report["figures"]["a"]["fi"]["pairs"]["xx>en"]["n"] == 4  # the news pairs, all of them
    assert set(report["bias"]["encoders"]) == {"a", "b"}
    md = (out / "report.md").read_text()
    assert md.index("## Language bias on the QA pool") > 0 and "### Limit to one target" in md
    assert "](./bias/heatmap_a.png)" in md and (out / "bias" / "heatmap_a.png").exists()
    # The older name is the same command.
    again = tmp_path / "again"
    assert language_coverage.main([*argv[:10], "--output", str(again)]) == 0  # the pair files alone
    assert json.loads((again / "report.json").read_text())["figures"]["a"]["fi"] == report["figures"]["a"]["fi"]


def test_centred_questions_are_the_plain_embeddings_less_each_sides_train_row_mean(tmp_path):
    """--center: the scored fi questions (rows 5-12) less the mean of the 4 `train` rows' embeddings on each side,
    recomputed here from the same encoder; hub shares and McNemar hits come with it."""
    from relkt.encoders import build_encoder
    from relkt.metrics.pair_retrieval import centered, hub_share, pair_retrieval

    pairs, questions = make_files(tmp_path)
    out = tmp_path / "report"
    args = ["--encoder", "a=ngram", "--encoder", "b=ngram", "--langs", "fi", "--pairs-dir", str(pairs)]
    args += ["--dev-pairs", "4", "--questions-dir", str(questions), "--center", "--output", str(out)]
    assert language_coverage.main(args) == 0
    report = json.loads((out / "report.json").read_text())
    encoder = build_encoder("ngram", trainable=False)
    unit = lambda x: np.asarray(x) / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    fi = [line.split("\t") for line in (questions / "fi.tsv").read_text().splitlines()[1:]]
    train, scored = fi[:4], fi[4:]
    side = lambda rows, k: unit(encoder.encode([r[k].strip() for r in rows]))  # noqa: E731
    xx = centered(side(scored, 2), side(train, 2).mean(0))
    en = centered(side(scored, 3), side(train, 3).mean(0))
    want = pair_retrieval(xx, en, [r[2] for r in scored], [r[3].strip() for r in scored], "by hand")
    got = report["figures"]["a"]["fi"]["questions_centered"]
    assert got["xx>en"]["P@1"] == pytest.approx(want["xx>en"]["P@1"])
    assert got["en>xx"]["MRR"] == pytest.approx(want["en>xx"]["MRR"])
    assert got["hub_share"] == pytest.approx(hub_share(xx, en))
    assert report["comparisons"]["b vs a"]["questions_centered/fi/xx>en"]["difference"] == 0.0
    assert "each side less its language's mean" in (out / "report.md").read_text()


def test_a_qa_test_source_is_scored_in_its_language_and_against_english(tmp_path, tiny_data):
    """--qa-test-dir: each German question against the three German paragraphs (in-language) and the three English
    ones (XX->EN), worked out here from the encoder's own embeddings; the English questions in-language only."""
    from relkt.encoders.registry import build_encoder

    pairs, _ = make_files(tmp_path)
    other = export_encoder(NgramEncoder(dim=16, num_buckets=128, seed=7), tmp_path / "other")
    out = tmp_path / "report"
    args = ["--encoder", f"zero-shot=hub:{other}", "--encoder", "student=ngram", "--langs", "fi"]
    args += ["--pairs-dir", str(pairs), "--dev-pairs", "8", "--qa-test-dir", str(tiny_data), "--output", str(out)]
    assert language_coverage.main([*args, "--learned", "de"]) == 0
    report = json.loads((out / "report.json").read_text())
    items = np.load(out / "per_item.npz")
    doc = {lang: json.loads((tiny_data / f"{lang}.json").read_text())["data"] for lang in ("en", "de")}
    encoder = build_encoder(f"hub:{other}")

    def hits(questions_lang, paragraphs_lang):
        questions = [(a["title"], qa["question"]) for a in doc[questions_lang] for qa in a["paragraphs"][0]["qas"]]
        titles = [a["title"] for a in doc[paragraphs_lang]]
        q = np.asarray(encoder.embed([text for _, text in questions]))
        p = np.asarray(encoder.embed([a["paragraphs"][0]["context"] for a in doc[paragraphs_lang]]))
        q, p = q / np.linalg.norm(q, axis=1, keepdims=True), p / np.linalg.norm(p, axis=1, keepdims=True)
        return np.array([titles[int(np.argmax(p @ v))] == t for (t, _), v in zip(questions, q)])

    qa = report["figures"]["zero-shot"]["qa"]
    for kind, lang, against in (("in", "de", "de"), ("en", "de", "en"), ("in", "en", "en")):
        expected = hits(lang, against)
        for unit in ("paragraph", "article"):  # one paragraph an article: the same ranking
            np.testing.assert_array_equal(items[f"zero-shot|qa/{lang}/{kind}_{unit}"], expected)
            name = "in-language" if kind == "in" else "XX->EN"
            assert qa[lang][f"{name} {unit} P@1"] == pytest.approx(expected.mean())
    assert "XX->EN article P@1" not in qa["en"] and qa["de"]["n"] == 6
    entry = report["comparisons"]["student vs zero-shot"]["qa/de/in_article"]
    a, b = items["zero-shot|qa/de/in_article"], items["student|qa/de/in_article"]
    assert entry["p_value"] == pytest.approx(mcnemar(a, b)["p_value"])
    md = (out / "report.md").read_text()
    assert "## Answer retrieval in each language" in md and "| de | yes | 6 |" in md


def test_every_input_is_read_once_however_many_encoders(tmp_path, tiny_data, monkeypatch):
    """The QA pool, the pair files and the test sources are read before any model loads, once: a third encoder
    reads nothing more (only its own scoring)."""
    from relkt.data.parallel_corpus import PairFiles
    from relkt.data.qa_source import QaSource

    pairs, questions = make_files(tmp_path)
    reads = []
    read_source, read_pairs = QaSource.read, PairFiles.read
    monkeypatch.setattr(
        QaSource, "read", lambda self, *a, **k: reads.append(("qa", str(self.path))) or read_source(self, *a, **k)
    )
    monkeypatch.setattr(
        PairFiles,
        "read",
        lambda self, folder, lang, *a, **k: reads.append(("pairs", lang)) or read_pairs(self, folder, lang, *a, **k),
    )

    def run(encoders: int, out: str) -> list:
        reads.clear()
        argv = [x for i in range(encoders) for x in ("--encoder", f"e{i}=ngram")]
        argv += ["--langs", "fi", "--pairs-dir", str(pairs), "--questions-dir", str(questions), "--dev-pairs", "8"]
        argv += ["--qa-test-dir", str(tiny_data), "--bias", "--data-dir", str(tiny_data), "--split", "all"]
        assert language_coverage.main([*argv, "--bootstrap", "10", "--output", str(tmp_path / out)]) == 0
        return sorted(reads)

    one, three = run(1, "one"), run(3, "three")
    assert one == three
    assert ("pairs", "fi") in one and ("qa", str(tiny_data)) in one
