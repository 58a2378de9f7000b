"""The recipes in trainers/ run end to end on tiny data."""

import hashlib
import json
from pathlib import Path

import pytest
import yaml

from tests.helpers.runs import student_config, tiny_config, trainer_script

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_teacher_then_evaluate(synthetic_data, tmp_path):
    cfg = tiny_config(tmp_path, synthetic_data, **{"mining.online_epochs": 1})
    assert trainer_script("teacher_then_evaluate").main(["--config", str(cfg)]) == 0
    results = json.loads((tmp_path / "run" / "test.json").read_text())
    assert results["setup"]["encoder"].endswith("run/best") and results["setup"]["split"] == "test"


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_sweep_runs_each_ablation_and_tabulates(synthetic_data, tmp_path):
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder

    teacher = export_encoder(NgramEncoder(dim=16, num_buckets=512, seed=1), tmp_path / "teacher")
    cfg = student_config(tmp_path, synthetic_data, teacher, **{"distill.epochs": 1})
    assert trainer_script("sweep_student").main(["--config", str(cfg), "--grid", "distill.objective=q,q+d+dq"]) == 0
    rows = json.loads((tmp_path / "run" / "sweep" / "sweep.json").read_text())
    assert [r["distill.objective"] for r in rows] == ["q", "q+d+dq"] and all(r["best"] is not None for r in rows)
    saved = yaml.safe_load((tmp_path / "run" / "sweep" / "objective=q" / "config.yaml").read_text())
    assert saved["distill"]["objective"] == "q"  # the settings live in the run's config, not only its name
    assert "| distill.objective | best | best_step |" in (tmp_path / "run" / "sweep" / "sweep.md").read_text()


def test_evaluate_writes_per_question_scores_that_compare_tests(tiny_data, tmp_path, capsys):
    import numpy as np

    from relkt.cli import evaluate

    out = tmp_path / "a" / "test.json"
    assert (
        evaluate.main(
            [
                "--encoder",
                "ngram",
                "--data-dir",
                str(tiny_data),
                "--split",
                "all",
                "--output",
                str(out),
                "--no-progress",
            ]
        )
        == 0
    )
    with np.load(tmp_path / "a" / "test.per_question.npz") as z:
        assert sorted(z["lang"].tolist()) == ["de"] * 6 + ["en"] * 6 and len(set(z["qas_id"].tolist())) == 6
        # The per-question values average to the summary the JSON reports.
        assert np.isclose(z["AP"].mean(), json.loads(out.read_text())["lareqa"]["mAP"])
        assert np.isclose(z["xx_en_hit1"][z["lang"] == "de"].mean(), json.loads(out.read_text())["xx_en"]["de"]["P@1"])
        assert np.isclose(
            z["bitext_hit1"][z["lang"] == "de"].mean(), json.loads(out.read_text())["bitext"]["de"]["P@1"]
        )
        assert np.isnan(z["bitext_hit1"][z["lang"] == "en"]).all()
    capsys.readouterr()
    assert trainer_script("compare").main([str(out), str(out)]) == 0
    printed = capsys.readouterr().out
    assert "| all (XX->EN: non-English) | +0.00 |" in printed
    # Same file twice: no discordant question, for XX->EN and for translation retrieval (English has no bitext row).
    assert "| de | +0.00 | [+0.00, +0.00] | 0 / 0 | 1.000 | 0 / 0 | 1.000 |" in printed
    assert "| en | +0.00 | [+0.00, +0.00] | 0 / 0 | 1.000 | - | - |" in printed
    assert "| lang | a Q>Qen P@1 | a Q>Qen P@1 | a cos | a cos |" in printed


def test_compare_pairs_questions_by_id_and_counts_discordant_pairs(tmp_path, capsys):
    import numpy as np

    results = {
        "lareqa": {"mAP": 0.5, "per_language": {"de": {"mAP": 0.5}, "en": {"mAP": 0.5}}},
        "xx_en": {"de": {"P@1": 0.5}, "en": {"P@1": 0.5}},
    }
    ids = np.array([f"q{i}" for i in range(30)] * 2)
    langs = np.array(["de"] * 30 + ["en"] * 30)
    # Run a gets German questions q0..q9 right at P@1, run b q5..q29: only a = 5 (q0-q4), only b = 20 (q10-q29).
    hit_a = np.r_[np.arange(30) < 10, np.ones(30, bool)].astype(float)
    hit_b = np.r_[np.arange(30) >= 5, np.ones(30, bool)].astype(float)
    for name, hit in (("a", hit_a), ("b", hit_b)):
        (tmp_path / f"{name}.json").write_text(json.dumps(results))
        order = np.arange(60)[::-1] if name == "b" else np.arange(60)  # b stored in another order
        # Translation retrieval: German the other way round (b finds the twin of q0-q9 only, a of every one but q0);
        # English questions have no bitext value (NaN).
        bitext = (
            np.r_[np.arange(30) >= 1, np.full(30, np.nan)]
            if name == "a"
            else np.r_[np.arange(30) < 10, np.full(30, np.nan)]
        )
        np.savez(
            tmp_path / f"{name}.per_question.npz",
            qas_id=ids[order],
            lang=langs[order],
            AP=hit[order],
            xx_en_hit1=hit[order],
            bitext_hit1=bitext[order].astype(float),
        )
    assert trainer_script("compare").main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    printed = capsys.readouterr().out
    # 25 discordant pairs: chi2 = (|5 - 20| - 1)^2 / 25 = 7.84, p = 0.0051.
    # mAP (AP = hit here): +15/30 = +50 points for de.
    assert "| de | +50.00* |" in printed and "| 5 / 20 | 0.005* |" in printed
    # English questions (EN->EN): both runs right on all 30; the overall row counts only non-English questions.
    assert (
        "| en | +0.00 | [+0.00, +0.00] | 0 / 0 | 1.000 |" in printed
        and "| all (XX->EN: non-English) | +25.00* |" in printed
    )
    assert "| 5 / 20 | 0.005* |" in printed.split("| all")[-1]
    # Bitext: only a = q10-q29 (20), only b = q0 (1): chi2 = (19 - 1)^2 / 21 = 15.43, p < 0.001; English: no row value.
    assert "| de | +50.00* |" in printed and "| 5 / 20 | 0.005* | 20 / 1 | 0.000* |" in printed
    assert "| en | +0.00 | [+0.00, +0.00] | 0 / 0 | 1.000 | - | - |" in printed


def test_compare_tests_the_xx_en_unit_it_is_asked_for(tmp_path, capsys):
    import numpy as np

    results = {
        "lareqa": {"mAP": 0.5, "per_language": {"de": {"mAP": 0.5}}},
        "xx_en": {"de": {"P@1": 1.0}},
        "xx_en_article": {"de": {"P@1": 0.5}},
    }
    ids, langs = np.array([f"q{i}" for i in range(30)]), np.array(["de"] * 30)
    # Article hits: a gets q0-q9, b q5-q29 (only a 5, only b 20: p = 0.005); both get every pool (sentence) hit.
    for name, hit in (("a", np.arange(30) < 10), ("b", np.arange(30) >= 5)):
        (tmp_path / f"{name}.json").write_text(json.dumps(results))
        np.savez(
            tmp_path / f"{name}.per_question.npz",
            qas_id=ids,
            lang=langs,
            AP=np.full(30, 0.5),
            xx_en_hit1=np.ones(30),
            xx_en_article_hit1=hit.astype(float),
        )
    paths = [str(tmp_path / "a.json"), str(tmp_path / "b.json")]
    assert trainer_script("compare").main(paths) == 0
    printed = capsys.readouterr().out  # mAP a, b | XX->EN P@1 a, b
    assert (
        "| de | 50.00 | 50.00 | 100.00 | 100.00 |" in printed
        and "| de | +0.00 | [+0.00, +0.00] | 0 / 0 | 1.000 |" in printed
    )
    assert trainer_script("compare").main(paths + ["--xx-en-unit", "article"]) == 0
    printed = capsys.readouterr().out
    assert "| a XX->EN article P@1 |" in printed and "| de | 50.00 | 50.00 | 50.00 | 50.00 |" in printed
    assert "XX->EN (article) P@1 McNemar" in printed and "| de | +0.00 | [+0.00, +0.00] | 5 / 20 | 0.005* |" in printed


def test_compare_without_per_question_scores_still_prints_the_table(tmp_path, capsys):
    results = {"lareqa": {"mAP": 0.5, "per_language": {"en": {"mAP": 0.5}}}, "xx_en": {"en": {"P@1": 0.5}}}
    for name in ("a", "b"):
        (tmp_path / f"{name}.json").write_text(json.dumps(results))
    assert trainer_script("compare").main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0
    printed = capsys.readouterr().out
    assert "| en | 50.00 | 50.00 |" in printed and "no per-question scores beside" in printed


def test_cross_encode_pairs_question_and_candidate_encoders(synthetic_data, tmp_path, capsys):
    from relkt.data.lareqa_pool import LareqaPool
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder
    from relkt.metrics.lareqa_evaluator import LareqaEvaluator

    module = trainer_script("cross_encode")
    pool = LareqaPool.load(str(synthetic_data), split="all").subset(question_langs=["de", "en"], candidate_langs=["en"])
    teacher, student = NgramEncoder(dim=16, num_buckets=512, seed=1), NgramEncoder(dim=16, num_buckets=64, seed=2)
    result = module.cross_encode(teacher, student, pool)
    # T/T and S/S are each model's own XX->EN P@1; the mixed pairings differ from both models' (other spaces).
    own = {name: LareqaEvaluator(pool).results(enc)["xx_en"] for name, enc in (("T/T", teacher), ("S/S", student))}
    for name in own:
        assert result["xx_en"][name] == {lang: r["P@1"] for lang, r in own[name].items()}
    # A student identical to its teacher: every pairing is the teacher's, and so are the norms.
    same = module.cross_encode(teacher, teacher, pool)
    assert len({json.dumps(v, sort_keys=True) for v in same["xx_en"].values()}) == 1
    assert same["mean_norm"]["teacher"] == same["mean_norm"]["student"]
    assert all(0 < v <= 1 for v in result["mean_norm"]["student"].values())
    # The CLI prints the table and writes JSON.
    t, s = export_encoder(teacher, tmp_path / "t"), export_encoder(student, tmp_path / "s")
    out = tmp_path / "cross.json"
    assert (
        module.main(
            [
                "--teacher",
                f"hub:{t}",
                "--student",
                f"hub:{s}",
                "--data-dir",
                str(synthetic_data),
                "--split",
                "all",
                "--langs",
                "de,en",
                "--output",
                str(out),
            ]
        )
        == 0
    )
    assert "| de |" in capsys.readouterr().out and set(json.loads(out.read_text())["xx_en"]) == {
        "T/T",
        "S/S",
        "S/T",
        "T/S",
    }


def test_compare_names_a_missing_or_malformed_results_file(tmp_path, capsys):
    (tmp_path / "bad.json").write_text("{not json")
    assert trainer_script("compare").main([str(tmp_path / "missing.json")]) == 2
    assert "missing.json: no such results file" in capsys.readouterr().err
    assert trainer_script("compare").main([str(tmp_path / "bad.json")]) == 2
    assert "bad.json: not a results JSON" in capsys.readouterr().err


def test_compare_writes_its_tables_as_markdown_beside_the_results(tmp_path, capsys):
    results = {"lareqa": {"mAP": 0.5, "per_language": {"en": {"mAP": 0.5}}}, "xx_en": {"en": {"P@1": 0.5}}}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "test.json").write_text(json.dumps(results))
    assert trainer_script("compare").main([str(tmp_path / "a" / "test.json"), str(tmp_path / "b" / "test.json")]) == 0
    written = (tmp_path / "comparison.md").read_text()  # the folder holding both results
    assert written.startswith("# a vs b\n") and "| en | 50.00 | 50.00 |" in written
    assert f"wrote {tmp_path / 'comparison.md'}" in capsys.readouterr().out
    assert trainer_script("compare").main([str(tmp_path / "a" / "test.json"), "--output", str(tmp_path / "x.md")]) == 0
    assert (tmp_path / "x.md").read_text().startswith("# a\n")


def test_check_expected_passes_inside_the_ranges_and_names_what_falls_outside(tmp_path, capsys):
    def results(el_map, el_p1):
        return {"lareqa": {"per_language": {"el": {"mAP": el_map}}}, "xx_en": {"el": {"P@1": el_p1}}}

    paths = {}
    for model, (m, p1) in {"zero_shot": (0.03, 0.05), "teacher": (0.04, 0.05), "student": (0.07, 0.12)}.items():
        paths[model] = tmp_path / f"{model}.json"
        paths[model].write_text(json.dumps(results(m, p1)))
    expected = tmp_path / "expected.yaml"
    expected.write_text(
        "ranges:\n  student:\n    lareqa/el/mAP: [5, 9]\nincreasing: [lareqa/el/mAP]\n"
        "student_above_teacher: [xx_en/el/P@1]\n"
    )
    argv = [
        str(expected),
        "--zero-shot",
        str(paths["zero_shot"]),
        "--teacher",
        str(paths["teacher"]),
        "--student",
        str(paths["student"]),
    ]
    assert trainer_script("check_expected").main(argv) == 0
    assert "3 of 3 checks inside" in capsys.readouterr().out
    # The teacher's Greek P@1 no longer below the student's, nor the mAP chain: both named, exit 1.
    paths["teacher"].write_text(json.dumps(results(0.02, 0.2)))
    assert trainer_script("check_expected").main(argv) == 1
    out = capsys.readouterr().out
    assert "OUT   lareqa/el/mAP: zero-shot 3.00 < teacher 2.00 < student 7.00" in out
    assert "OUT   xx_en/el/P@1: teacher 20.00 < student 12.00" in out and "2 outside" in out


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_crossval_scores_every_question_once_and_resumes_by_fold(synthetic_data, tmp_path, capsys):
    """Two folds: fold 0 alone first (no pooled table yet), then the whole recipe, which keeps fold 0's runs and
    scores and trains fold 1; the pooled files hold every question of the data set exactly once."""
    import numpy as np

    from relkt.data import LareqaPool

    teacher = tiny_config(tmp_path / "t", synthetic_data, **{"mining.online_epochs": 0, "eval.every_steps": 50})
    student = student_config(
        tmp_path / "s", synthetic_data, tmp_path / "t" / "run" / "best", **{"distill.epochs": 1, "eval.every_steps": 50}
    )
    out = tmp_path / "cv"
    argv = ["--folds", "2", "--teacher-config", str(teacher), "--student-config", str(student), "--output", str(out)]
    crossval = trainer_script("crossval")
    assert crossval.main(argv + ["--only-folds", "0"]) == 0
    assert (
        "pooled tables once all 2 folds are scored" in capsys.readouterr().out and not (out / "student.json").exists()
    )
    fold0 = (out / "fold0" / "teacher" / "summary.json").read_bytes(), (out / "fold0" / "student.json").read_bytes()
    assert crossval.main(argv) == 0
    assert "kept " + str(out / "fold0" / "student.json") in capsys.readouterr().out
    assert (
        (out / "fold0" / "teacher" / "summary.json").read_bytes(),
        (out / "fold0" / "student.json").read_bytes(),
    ) == fold0
    saved = yaml.safe_load((out / "fold1" / "student" / "config.yaml").read_text())
    assert saved["data"]["folds"] == 2 and saved["data"]["fold"] == 1
    assert saved["teacher"]["spec"] == f"hub:{out / 'fold1' / 'teacher'}/best"  # each fold distils its own teacher
    everyone = LareqaPool.load(synthetic_data, split="all")
    with np.load(out / "teacher.per_question.npz") as z:
        keys = sorted(zip(z["qas_id"].tolist(), z["lang"].tolist()))
        assert keys == sorted((q.qas_id, q.lang) for q in everyone.questions)  # each question once, none missing
        pooled = json.loads((out / "teacher.json").read_text())
        assert np.isclose(pooled["xx_en_article"]["de"]["P@1"], z["xx_en_article_hit1"][z["lang"] == "de"].mean())
    assert "XX->EN (article) P@1 McNemar" in (out / "comparison.md").read_text()
    # Each fold's last/ is scored beside best/ (or takes best's scores where it is best/), and pooled.
    for k in (0, 1):
        fold, student_run = out / f"fold{k}", out / f"fold{k}" / "student"
        last = json.loads((fold / "student_last.json").read_text())
        same = (student_run / "last" / "relkt.json").read_bytes() == (student_run / "best" / "relkt.json").read_bytes()
        assert (last["setup"].get("same_export_as") == "student.json") == same
        assert last["setup"]["export"] == hashlib.sha256((student_run / "last" / "relkt.json").read_bytes()).hexdigest()
    with np.load(out / "student_last.per_question.npz") as z:
        assert sorted(zip(z["qas_id"].tolist(), z["lang"].tolist())) == keys
    table = (out / "paper_table.md").read_text()  # the paper's German row beside the pooled German questions
    assert "| de | 73.1 / 79.8 / 83.2 | " in table and table.count("\n") == 4 and table.rstrip().endswith("| 60 |")
    assert "teacher vs zero-shot (* < 0.05)" in table
    # A new best/ in fold 0's student (as training it on would export): its score is redone, the others kept.
    best = out / "fold0" / "student" / "best" / "relkt.json"
    best.write_text(best.read_text().replace('"training"', '"exported_again": true, "training"', 1))
    assert crossval.main(argv) == 0
    printed = capsys.readouterr().out
    assert (
        f"rescoring {out / 'fold0' / 'student.json'}" in printed and f"kept {out / 'fold1' / 'student.json'}" in printed
    )
    assert f"kept {out / 'fold0' / 'teacher.json'}" in printed
    assert (
        json.loads((out / "fold0" / "student.json").read_text())["setup"]["export"]
        == hashlib.sha256(best.read_bytes()).hexdigest()
    )
    # A last/ that is not best/ (fold 1's, given a file of its own, as a run ending after its best step leaves it)
    # is scored itself, its time counted; best/'s score is kept.
    last = out / "fold1" / "student" / "last" / "relkt.json"
    text = last.read_text()
    last.unlink()  # hard-linked to best/'s: a new file, not an edit of both
    last.write_text(text.replace('"training"', '"ended_later": true, "training"', 1))
    assert crossval.main(argv) == 0
    assert f"rescoring {out / 'fold1' / 'student_last.json'}" in capsys.readouterr().out
    scored = json.loads((out / "fold1" / "student_last.json").read_text())["setup"]
    assert "same_export_as" not in scored and scored["export"] == hashlib.sha256(last.read_bytes()).hexdigest()
    assert "1\tscore student_last\t" in (out / "wall_seconds.tsv").read_text()


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_crossval_reuses_another_runs_teachers_and_refuses_a_teacher_of_other_settings(
    synthetic_data, tmp_path, capsys
):
    """`--teachers-from A`: fold 0's teacher is A's (hard links: the same files, not trained again), its and the
    zero-shot's scores are kept, and only the student trains; a teacher setting that differs from A's is refused with
    nothing of A's teacher left behind, and a source fold without a teacher is named."""
    teacher = tiny_config(tmp_path / "t", synthetic_data, **{"mining.online_epochs": 0, "eval.every_steps": 50})
    student = student_config(
        tmp_path / "s", synthetic_data, tmp_path / "t" / "run" / "best", **{"distill.epochs": 1, "eval.every_steps": 50}
    )
    argv = ["--folds", "2", "--only-folds", "0", "--teacher-config", str(teacher), "--student-config", str(student)]
    crossval = trainer_script("crossval")
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    assert crossval.main(argv + ["--output", str(a)]) == 0
    trained = (a / "fold0" / "teacher" / "train.jsonl").read_bytes()
    capsys.readouterr()
    assert (
        crossval.main(argv + ["--output", str(b), "--teachers-from", str(a), "--student-set", "distill.epochs=2"]) == 0
    )
    printed = capsys.readouterr().out
    assert f"kept {b / 'fold0' / 'teacher.json'}" in printed and f"kept {b / 'fold0' / 'zero_shot.json'}" in printed
    ours, theirs = b / "fold0" / "teacher" / "best" / "relkt.json", a / "fold0" / "teacher" / "best" / "relkt.json"
    assert ours.stat().st_ino == theirs.stat().st_ino  # a hard link, no copy
    assert (b / "fold0" / "teacher" / "train.jsonl").read_bytes() == trained  # not trained on
    assert yaml.safe_load((b / "fold0" / "student" / "config.yaml").read_text())["distill"]["epochs"] == 2
    assert json.loads((b / "fold0" / "student.json").read_text())["setup"]["export"]  # the student trained and scored
    assert crossval.main(argv + ["--output", str(c), "--teachers-from", str(a), "--teacher-set", "triplet.margin=0.5"])
    err = capsys.readouterr().err
    assert f"teachers_from {a}: fold 0's teacher is not this one's" in err and "triplet.margin" in err
    assert not (c / "fold0" / "teacher").exists() and not (c / "fold0" / "teacher.json").exists()
    assert (a / "fold0" / "teacher" / "train.jsonl").read_bytes() == trained
    assert crossval.main(argv + ["--output", str(c), "--teachers-from", str(tmp_path / "nowhere")]) == 2
    assert f"{tmp_path / 'nowhere' / 'fold0' / 'teacher'} holds no trained teacher" in capsys.readouterr().err


def test_compare_english_gap_sets_each_language_beside_its_english_originals(tmp_path, capsys):
    import numpy as np

    results = {
        "lareqa": {"mAP": 0.5, "per_language": {"de": {"mAP": 0.5}, "en": {"mAP": 0.5}}},
        "xx_en": {"de": {"P@1": 0.5}, "en": {"P@1": 0.5}},
        "xx_en_article": {"de": {"P@1": 0.2}, "en": {"P@1": 0.9}},
    }
    ids = np.array([f"q{i}" for i in range(30)] * 2)
    langs = np.array(["de"] * 30 + ["en"] * 30)
    # Articles: German gets q0-q5 (6 / 30 = 20%), English q0-q26 (27 / 30 = 90%): only English 21 (q6-q26), only
    # German 0: chi2 = (21 - 1)^2 / 21 = 19.05, p < 0.001. The pool (sentence) hits are all right in both languages.
    article = np.r_[np.arange(30) < 6, np.arange(30) < 27].astype(float)
    (tmp_path / "t.json").write_text(json.dumps(results))
    np.savez(
        tmp_path / "t.per_question.npz",
        qas_id=ids,
        lang=langs,
        AP=np.full(60, 0.5),
        xx_en_hit1=np.ones(60),
        xx_en_article_hit1=article,
    )
    compare = trainer_script("compare")
    assert compare.main([str(tmp_path / "t.json"), "--english-gap", "--xx-en-unit", "article"]) == 0
    printed = capsys.readouterr().out
    assert "t: XX->EN (article) P@1 of each language beside its questions' English originals" in printed
    assert "| de | 20.00 | 90.00 | +70.00 | 21 / 0 | 0.000* | 30 |" in printed
    assert compare.main([str(tmp_path / "t.json"), "--english-gap"]) == 0  # the pool: no gap
    assert "| de | 100.00 | 100.00 | +0.00 | 0 / 0 | 1.000 | 30 |" in capsys.readouterr().out
    assert compare.main([str(tmp_path / "t.json"), "--english-gap", "--xx-en-unit", "paragraph"]) == 0
    assert "(no gap to English for t: its per-question scores have no xx_en_paragraph_hit1" in capsys.readouterr().out


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_crossval_trains_a_student_per_group_and_scores_each_language_with_its_own(tmp_path, capsys):
    """Groups {a: en de, b: th}: each fold trains student_a on de and student_b on th (at its own beta), each selects
    on its own languages' dev questions, and the fold's student.json takes each language from its group's student."""
    import numpy as np

    from tests.helpers.data import make_synthetic_lareqa

    data = make_synthetic_lareqa(tmp_path / "synthetic", n_articles=16, langs=("en", "de", "th"))
    teacher = tiny_config(tmp_path / "t", data, **{"mining.online_epochs": 0, "eval.every_steps": 50})
    student = student_config(
        tmp_path / "s",
        data,
        tmp_path / "t" / "run" / "best",
        **{"distill.epochs": 1, "eval.every_steps": 4, "eval.primary_metric": "xx_en/P@1"},
    )
    groups = {"a": {"langs": ["en", "de"]}, "b": {"langs": ["th"], "set": {"distill.beta": 0.5}}}
    setups = tmp_path / "setups.yaml"
    entry = {"status": "ablation", "recipe": "crossval", "folds": 2, "teacher": str(teacher), "student": str(student)}
    setups.write_text(yaml.safe_dump({"grouped": {**entry, "student_groups": groups}}))
    out = tmp_path / "cv"
    argv = ["--setup", "grouped", "--setups-file", str(setups), "--output", str(out), "--only-folds", "0"]
    assert trainer_script("crossval").main(argv) == 0
    fold = out / "fold0"
    saved = {g: yaml.safe_load((fold / f"student_{g}" / "config.yaml").read_text()) for g in groups}
    assert saved["a"]["data"]["student_langs"] == ["de"] and saved["b"]["data"]["student_langs"] == ["th"]
    assert saved["a"]["distill"]["weights"]["beta"] == 1.0 and saved["b"]["distill"]["weights"]["beta"] == 0.5
    for g, langs in (("a", {"en", "de"}), ("b", {"th"})):  # dev metrics name the group's languages alone
        logged = [json.loads(line) for line in (fold / f"student_{g}" / "metrics.jsonl").read_text().splitlines()]
        named = {k.split("/")[2] for row in logged for k in row if k.startswith("dev/xx_en/") and k.count("/") == 3}
        assert named == langs
    parts = {g: dict(np.load(fold / f"student_{g}.per_question.npz")) for g in groups}
    with np.load(fold / "student.per_question.npz") as z:
        combined = {k: z[k] for k in z.files}
    assert sorted(set(combined["lang"].tolist())) == ["de", "en", "th"]
    for lang, g in (("en", "a"), ("de", "a"), ("th", "b")):
        mine = parts[g]["lang"] == lang
        np.testing.assert_array_equal(combined["AP"][combined["lang"] == lang], parts[g]["AP"][mine])
    other = parts["b"]["lang"] == "de"  # the two students do score differently: the choice above is not moot
    assert not np.array_equal(parts["a"]["AP"][parts["a"]["lang"] == "de"], parts["b"]["AP"][other])
    summary = json.loads((fold / "student.json").read_text())
    assert summary["setup"]["student_groups"]["b"] == {"langs": ["th"], "settings": {"distill.beta": 0.5}}
    # Wall time: each trained run (summed over resumes) and each score; the combined student.json is none of them.
    walls = [row.split("\t") for row in (out / "wall_seconds.tsv").read_text().splitlines()[1:]]
    lasts = {stage for _, stage, _ in walls if stage.endswith("_last")}  # a last/ that is not best/ is scored too
    assert lasts <= {"score student_a_last", "score student_b_last"} and (fold / "student_last.json").exists()
    walls = [row for row in walls if row[1] not in lasts]
    assert sorted(stage for _, stage, _ in walls) == [
        "score student_a",
        "score student_b",
        "score teacher",
        "score zero_shot",
        "student_a",
        "student_b",
        "teacher",
    ]
    assert all(fold_ == "0" and float(seconds) > 0 for fold_, _, seconds in walls)


def test_crossval_refuses_a_scored_language_in_no_group_before_training(tmp_path, capsys):
    from tests.helpers.data import make_synthetic_lareqa

    data = make_synthetic_lareqa(tmp_path / "synthetic", n_articles=6, langs=("en", "de", "th"))
    teacher = tiny_config(tmp_path / "t", data)
    student = student_config(tmp_path / "s", data, tmp_path / "t" / "run" / "best")
    setups = tmp_path / "setups.yaml"
    entry = {"status": "ablation", "recipe": "crossval", "folds": 2, "teacher": str(teacher), "student": str(student)}
    setups.write_text(yaml.safe_dump({"grouped": {**entry, "student_groups": {"a": {"langs": ["en", "de"]}}}}))
    argv = ["--setup", "grouped", "--setups-file", str(setups), "--output", str(tmp_path / "cv")]
    assert trainer_script("crossval").main(argv) == 2
    assert "setup grouped: th is scored but in no student group (a: en de)" in capsys.readouterr().err
    assert not (tmp_path / "cv").exists()


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_group_students_trains_each_group_from_one_teacher_and_combines_their_scores(tmp_path, capsys):
    """The paper protocol's path (trainers/group_students.py): no folds, one teacher, a student a group, each scored on
    the test split; student.json holds each language from its group's student; rerun, every run and score is kept."""
    import numpy as np

    from relkt.cli import train_teacher
    from tests.helpers.data import make_synthetic_lareqa

    data = make_synthetic_lareqa(tmp_path / "synthetic", n_articles=12, langs=("en", "de", "th"))
    teacher = tiny_config(tmp_path / "t", data, **{"mining.online_epochs": 0, "eval.every_steps": 50})
    assert train_teacher.main(["--config", str(teacher)]) == 0
    changes = {"distill.epochs": 1, "eval.primary_metric": "xx_en/P@1"}
    student = student_config(tmp_path / "s", data, tmp_path / "t" / "run" / "best", **changes)
    setups = tmp_path / "setups.yaml"
    groups = {"a": {"langs": ["en", "de"]}, "b": {"langs": ["th"], "set": {"distill.gamma": 1.0}}}
    entry = {"status": "ablation", "recipe": "crossval", "folds": 2, "teacher": str(teacher), "student": str(student)}
    setups.write_text(yaml.safe_dump({"grouped": {**entry, "student_groups": groups}}))
    out = tmp_path / "students"
    argv = ["--setup", "grouped", "--setups-file", str(setups), "--output", str(out)]
    assert trainer_script("group_students").main(argv) == 0
    assert yaml.safe_load((out / "student_b" / "config.yaml").read_text())["distill"]["gamma"] == 1.0
    with np.load(out / "student.per_question.npz") as z, np.load(out / "student_b.per_question.npz") as b:
        np.testing.assert_array_equal(z["AP"][z["lang"] == "th"], b["AP"][b["lang"] == "th"])
        assert sorted(set(z["lang"].tolist())) == ["de", "en", "th"]
    capsys.readouterr()
    assert trainer_script("group_students").main(argv) == 0
    assert f"kept {out / 'student_a.json'}" in capsys.readouterr().out


def test_split_gain_sets_a_result_against_another_splits_figures(tmp_path, capsys):
    """el: 8 of 10 here against 60.0% of 20 (12 hits) there: +20.0 points; the interval is Newcombe's for 12/20 vs
    8/10 (relkt.analysis.proportion_difference, checked against his worked examples)."""
    from relkt.analysis import proportion_difference

    result = tmp_path / "student.json"
    result.write_text(json.dumps({"xx_en_article": {"el": {"P@1": 0.8, "n_questions": 10}}}))
    split_gain = trainer_script("split_gain")
    assert split_gain.main([str(result), "--against", "el=60.0", "--against-n", "20"]) == 0
    d = proportion_difference(12, 20, 8, 10)
    row = f"| el | 80.0 (10) | 60.0 | +20.0 | [{100 * d['low']:+.1f}, {100 * d['high']:+.1f}] |"
    assert row in capsys.readouterr().out
    assert split_gain.main([str(result), "--against", "hi=5", "--against-n", "20"]) == 2


@pytest.mark.parametrize("damage", ["truncated", "fifo"])
def test_compare_refuses_a_damaged_per_question_file(tmp_path, capsys, damage):
    """A per-question file that is missing is noted (older results); one that is there but damaged (cut off, a FIFO)
    is one error naming it, never a comparison that quietly drops its significance."""
    import os

    import numpy as np

    results = {"lareqa": {"mAP": 0.5, "per_language": {"en": {"mAP": 0.5}}}, "xx_en": {"en": {"P@1": 0.5}}}
    for name in ("a", "b"):
        (tmp_path / f"{name}.json").write_text(json.dumps(results))
        np.savez(
            tmp_path / f"{name}.per_question.npz",
            qas_id=np.array(["q1", "q2"]),
            lang=np.array(["en", "en"]),
            AP=np.ones(2),
            xx_en_hit1=np.ones(2),
        )
    npz = tmp_path / "b.per_question.npz"
    if damage == "truncated":
        npz.write_bytes(npz.read_bytes()[:60])
    else:
        npz.unlink()
        os.mkfifo(npz)
    assert trainer_script("compare").main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 2
    err = capsys.readouterr().err
    assert str(npz) in err and "Traceback" not in err


def test_compare_flags_take_numbers_in_range(capsys):
    for flags in (["--bootstrap", "0"], ["--bootstrap", "1000000000"], ["--seed", "-1"]):
        with pytest.raises(SystemExit) as e:
            trainer_script("compare").main(["a.json", "b.json", *flags])
        assert e.value.code == 2
        assert flags[0] in capsys.readouterr().err
