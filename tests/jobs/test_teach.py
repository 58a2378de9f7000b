"""relkt teach: one command from pair files to a report, on a tiny muse-architecture base and pairs made here."""

from __future__ import annotations

import dataclasses
import itertools
import json

import numpy as np
import pytest
import yaml

from relkt.cli import teach as teach_cli
from relkt.encoders.export import export_encoder
from relkt.jobs import teach
from relkt.stages.student_trainer import StudentTrainer
from tests.helpers.data import make_synthetic_lareqa
from tests.helpers.tiny_muse import WORDS, tiny_muse_encoder

# A made-up "fi" the base never read: each English word respelled, so its texts read rows no other text does.
FI = {w: w[::-1] + "ä" for w in WORDS["en"]}


def write_pairs(folder, lang: str, n: int, translate, source: str = "news") -> None:
    """n distinct pairs of 3 words (no digits: a character the base cannot read would get a new row, and the
    control's texts must read only rows the base had)."""
    combos = list(itertools.permutations(WORDS["en"], 3))
    order = np.random.default_rng(len(lang)).permutation(len(combos))[:n]
    rows = []
    for i in order:
        words = combos[i]
        rows.append(f"{source}\t{' '.join(words)}\t{' '.join(translate(w) for w in words)}\n")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{lang}.tsv").write_text("source\ten\txx\n" + "".join(rows), encoding="utf-8")


def write_questions(folder, lang: str, train: int, scored: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    rows = [
        f"{lang}{i}\t{'train' if i < train else ''}\two {FI[w]} {i}?\twhere {w} {i}?\n"
        for i, w in enumerate((WORDS["en"] * 4)[: train + scored])
    ]
    (folder / f"{lang}.tsv").write_text("id\tsplit\txx\ten\n" + "".join(rows), encoding="utf-8")


@pytest.fixture
def inputs(tmp_path):
    pairs, questions = tmp_path / "pairs", tmp_path / "questions"
    write_pairs(pairs, "fi", 60, FI.get)
    write_pairs(pairs, "de", 60, dict(zip(WORDS["en"], WORDS["de"])).get)
    write_pairs(pairs, "zh", 60, dict(zip(WORDS["en"], WORDS["zh"])).get)
    write_questions(questions, "fi", train=12, scored=12)
    base = export_encoder(tiny_muse_encoder(), tmp_path / "base")
    return {
        "pairs": pairs,
        "questions": questions,
        "qa": make_synthetic_lareqa(tmp_path / "qa", n_articles=12),
        "base": base,
    }


def argv(inputs, out, *more: str) -> list[str]:
    return [
        "--langs",
        "fi",
        "--controls",
        "de",
        "--pairs-dir",
        str(inputs["pairs"]),
        "--questions-dir",
        str(inputs["questions"]),
        "--qa-dir",
        str(inputs["qa"]),
        "--teacher",
        f"muse:{inputs['base']}",
        "--output",
        str(out),
        "--set",
        "data.corpus_dev_pairs=10",
        "--set",
        "student.extend_vocab.pieces=40",
        "--set",
        "eval.every_steps=5",
        *more,
    ]


@pytest.mark.slow
def test_teach_end_to_end_reports_before_and_after(tmp_path, inputs, tiny_data):
    out = tmp_path / "teach"
    # A trained step is best/ (no starting point kept), so the taught language must have moved.
    more = ("--watch", "zh", "--test-dir", str(tiny_data), "--smoke", "--set", "eval.at_start=false")
    assert teach_cli.main(argv(inputs, out, *more)) == 0
    summary = json.loads((out / "teach.json").read_text())
    report = (out / "report.md").read_text()
    # The recipe's student, with the flags' settings: fi's own rows train, de rides along as a control.
    config = (out / "student" / "config.yaml").read_text()
    assert "language_rows:" in config and "student_langs:\n  - fi\n  - de" in config
    assert summary["langs"] == ["fi"] and summary["controls"] == ["de"] and summary["watch"] == ["zh"]
    assert "zh" not in config  # watched: scored, never trained
    assert summary["wall_seconds"]["total"] >= summary["wall_seconds"]["student"] > 0
    cov = summary["coverage"]
    assert list(cov["figures"]) == ["zero-shot", "student"] and cov["setup"]["learned"] == ["fi"]
    # The held-out pairs are the ones the student held out (10 a language), the 12 unmarked questions are scored.
    assert cov["setup"]["dev_pairs"] == 10 and cov["setup"]["questions_scored"] == {"fi": 12}
    assert "test" in cov["figures"]["student"]  # the QA test source, whole: forgetting
    assert report.startswith("# relkt teach: fi") and "relkt teach --langs fi" in report
    assert "Wall time: student" in report and "## Language coverage" in report
    assert (out / "coverage" / "coverage.png").stat().st_size > 0
    # fi's rows train at the rate, the rest (German's rows among it) at the recipe's 0.005 x: fi's figures move.
    # (Rows alone leave a control bit-identical: tests/stages/test_train_student.py.)
    assert "rest_lr_multiplier: 0.005" in config
    de, fi, zh = ({name: cov["figures"][name][lang]["pairs"] for name in cov["figures"]} for lang in ("de", "fi", "zh"))
    assert fi["student"] != fi["zero-shot"] and set(de) == {"zero-shot", "student"}
    assert set(zh) == {"zero-shot", "student"}  # the watched language is in the report before and after


@pytest.mark.parametrize(
    "change,message",
    [
        ({"langs": "fi,xx"}, "no pairs for xx (no xx.tsv)"),
        ({"set": ["data.corpus_dev_pairs=0"]}, "fi.tsv: no held-out document to score"),
        ({"questions": "no-train"}, "fi.tsv: no `split = train` row"),
        ({"controls": "fi"}, "--controls: fi also in --langs"),
        ({"watch": "de"}, "--watch: de also in --langs or --controls"),
        ({"watch": "xx"}, "no pairs for xx (no xx.tsv)"),
        ({"langs": "fi,en"}, "--langs/--controls/--watch: en is the teacher's language (data.source_lang), not taught"),
    ],
)
def test_bad_inputs_are_one_error_before_anything_trains(tmp_path, inputs, capsys, change, message):
    out = tmp_path / "teach"
    if change.get("questions") == "no-train":
        write_questions(inputs["questions"], "fi", train=0, scored=12)
    args = argv(inputs, out, *[x for s in change.get("set", []) for x in ("--set", s)])
    for key in ("langs", "controls"):
        if key in change:
            args[args.index(f"--{key}") + 1] = change[key]
    if "watch" in change:
        args += ["--watch", change["watch"]]
    assert teach_cli.main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and message in err[-1], err[-1]
    assert not (out / "student" / "checkpoint").exists() and not (out / "report.md").exists()


def test_the_recipe_is_one_file_with_the_flags_over_it(tmp_path, inputs):
    """The recipe has no base chain (a user reads it whole); the flags fill what it leaves open, --set wins last."""
    assert "base" not in yaml.safe_load(teach.RECIPE.read_text())
    request = teach.TeachRequest(
        langs=["fi"],
        controls=["de"],
        pairs_dir=str(inputs["pairs"]),
        questions_dir=str(inputs["questions"]),
        output=str(tmp_path / "t"),
        set=["distill.epochs=3"],
    )
    config = teach.student_config(request)
    assert config.data.student_langs == ["fi", "de"] and config.student.language_rows.langs == ["fi"]
    assert config.data.corpus_dir == str(inputs["pairs"])
    assert config.data.more_pairs == {str(inputs["questions"]): 0}
    assert config.distill.epochs == 3 and config.distill.negatives == "bank"
    assert config.output_dir == str(tmp_path / "t" / "student") and config.teacher.spec == "muse"


def test_a_watched_language_is_scored_but_never_trained(tmp_path, inputs):
    request = teach.TeachRequest(
        langs=["fi"], controls=["de"], watch=["zh"], pairs_dir=str(inputs["pairs"]), output=str(tmp_path / "t")
    )
    config = teach.student_config(request)
    assert config.data.student_langs == ["fi", "de"]  # zh's pairs never reach the student
    assert teach.coverage_request(request, config).langs == ["fi", "de", "zh"]  # but the report scores it


def test_the_recipe_is_the_measured_xor_bank_student_with_the_ablations_that_won():
    """docs/results/teach.md: the recipe is configs/teach_questions/student_xor_bank.yaml resolved with dense rows, the
    rest of the network at 0.005 x the rate (the table's other rows lazy), 3 epochs, 8,000 pairs a taught language,
    4,000 a replayed one, each batch in 4 runs of like length, the pieces learned on the taught languages' texts (the
    ablations that won), what the flags name
    (languages, folders, run folder) left to them."""
    from relkt.config import StudentConfig, load_config, to_dict

    measured = load_config(StudentConfig, teach.RECIPE.parents[2] / "configs" / "teach_questions/student_xor_bank.yaml")
    d = measured.data
    request = teach.TeachRequest(
        langs=list(measured.student.language_rows.langs),
        controls=[x for x in d.student_langs if x not in measured.student.language_rows.langs],
        pairs_dir=d.corpus_dir,
        questions_dir=next(iter(d.more_pairs)),
        qa_dir=d.data_dir,
        test_dir=d.test_dir,
        output="runs/teach",
        other_domain={},  # the measured run held no source out whole; teach now holds one out by default (below)
    )
    recipe = to_dict(teach.student_config(request))
    default = teach.student_config(dataclasses.replace(request, other_domain=None)).data.corpus_other_domain
    assert set(default) == set(request.langs)  # each taught language's smallest source, never trained on
    won = {
        ("schedule", "sparse_rows"): ("dense", "lazy"),
        ("student", "language_rows", "rest_lr_multiplier"): (0.005, 0.0),
        ("student", "language_rows", "replay_pairs_per_lang"): (4000, 0),
        ("data", "corpus_pairs_per_lang"): (8000, 4000),
        ("distill", "epochs"): (3, 2),
        ("distill", "length_chunks"): (4, 1),
        ("student", "language_rows", "rest_rows"): ("lazy", ""),
        ("student", "extend_vocab", "learn_from"): ("taught", "all"),
    }
    for path, (ours, theirs) in won.items():
        *parents, key = path
        section, before = recipe, to_dict(measured)
        for name in parents:
            section, before = section[name], before[name]
        assert (section[key], before[key]) == (ours, theirs), path
        section[key] = theirs
    assert {**recipe, "output_dir": measured.output_dir} == to_dict(measured)


def test_no_controls_with_the_network_training_is_warned_before_it_trains(tmp_path, inputs, monkeypatch, caplog):
    """The recipe trains the network gently; without --controls nothing the base reads is replayed beside it."""

    class Stop(Exception):
        pass

    def stop(config, **given):
        raise Stop

    monkeypatch.setattr(StudentTrainer, "train", stop)
    for controls, warned in (("", True), ("de", False)):
        caplog.clear()
        request = teach.TeachRequest(
            langs=["fi"],
            controls=[controls] if controls else [],
            pairs_dir=str(inputs["pairs"]),
            qa_dir=str(inputs["qa"]),
            output=str(tmp_path / f"t{controls}"),
            set=["data.corpus_dev_pairs=10"],
        )
        with caplog.at_level("WARNING", logger="relkt.jobs.teach"), pytest.raises(Stop):
            teach.teach(request)
        assert ("no controls (TeachRequest.controls)" in caplog.text) == warned
    rows_only = teach.TeachRequest(
        langs=["fi"],
        pairs_dir=str(inputs["pairs"]),
        qa_dir=str(inputs["qa"]),
        output=str(tmp_path / "rows"),
        set=["data.corpus_dev_pairs=10", "student.language_rows.rest_lr_multiplier=0"],
    )
    caplog.clear()
    with caplog.at_level("WARNING", logger="relkt.jobs.teach"), pytest.raises(Stop):
        teach.teach(rows_only)
    assert "no controls" not in caplog.text


def test_smoke_shrinks_what_the_flags_name_and_set_wins_last(tmp_path, inputs):
    """--smoke shrinks the question files' share the flags add, as it shrinks the recipe's own counts; --set is last."""
    request = teach.TeachRequest(
        langs=["fi"],
        pairs_dir=str(inputs["pairs"]),
        questions_dir=str(inputs["questions"]),
        output=str(tmp_path / "t"),
        smoke=True,
        set=["data.corpus_dev_pairs=10"],
    )
    config = teach.student_config(request)
    assert config.data.more_pairs == {str(inputs["questions"]): 32} and config.data.corpus_pairs_per_lang == 32
    assert config.student.language_rows.replay_pairs_per_lang == 32  # the controls' share, 4,000 in the recipe
    assert config.data.corpus_dev_pairs == 10


@pytest.mark.slow
def test_teach_and_coverage_run_from_python_alone_each_pair_file_read_once(tmp_path, inputs, monkeypatch):
    """The library face (#80): a typed request in, a result object out, no argv; every pair and question file is
    parsed once (the checks, the student's inputs and the report share one read)."""
    from relkt import api
    from relkt.data import parallel_corpus

    parsed = []
    real = parallel_corpus.read_parallel_tsv

    def counting(path, *args, **kwargs):
        parsed.append(str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(parallel_corpus, "read_parallel_tsv", counting)
    request = api.TeachRequest(
        langs=["fi"],
        controls=["de"],
        pairs_dir=str(inputs["pairs"]),
        questions_dir=str(inputs["questions"]),
        qa_dir=str(inputs["qa"]),
        teacher=f"muse:{inputs['base']}",
        output=str(tmp_path / "teach"),
        smoke=True,
        set=["data.corpus_dev_pairs=10", "student.extend_vocab.pieces=40", "eval.every_steps=5"],
    )
    result = api.teach(request)
    assert isinstance(result, api.TeachResult) and result.report.is_file()
    assert result.coverage is not None and list(result.coverage.report["figures"]) == ["zero-shot", "student"]
    assert result.summary["coverage"] == result.coverage.report  # handed over in memory, not re-read
    assert "(the shipped recipe), with --set data.corpus_dev_pairs=10 student.extend_vocab" in result.summary["recipe"]
    assert sorted(parsed) == sorted(set(parsed)), f"a pair file parsed twice: {parsed}"
    assert {p.rsplit("/", 2)[-2] + "/" + p.rsplit("/", 1)[-1] for p in parsed} == {
        "pairs/fi.tsv",
        "pairs/de.tsv",
        "questions/fi.tsv",
    }
    again = api.coverage(
        api.CoverageRequest(
            encoders={"zero-shot": f"muse:{inputs['base']}"},
            langs=["fi"],
            pairs_dir=str(inputs["pairs"]),
            dev_pairs=10,
            output=str(tmp_path / "coverage"),
        )
    )
    assert isinstance(again, api.CoverageResult) and "fi" in again.report["setup"]["langs"]
    assert again.report_md.read_text(encoding="utf-8") == again.markdown
