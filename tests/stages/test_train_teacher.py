import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from relkt.cli import train_teacher
from relkt.config import TeacherConfig, load_config
from relkt.stages.teacher_trainer import TeacherTrainer
from tests.helpers.runs import kill_mid_epoch, tiny_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_teacher_runs_end_to_end_and_writes_everything(synthetic_data, tmp_path):
    cfg = tiny_config(tmp_path, synthetic_data)
    assert train_teacher.main(["--config", str(cfg)]) == 0
    out = tmp_path / "run"
    summary = json.loads((out / "summary.json").read_text())
    # 21 train articles x 2 English questions = 42 anchors; 2 negatives each = 84 triplets = 21 steps of 4
    # per epoch (online epochs may find fewer); 3 epochs.
    assert summary["anchors"] == 42 and summary["epochs_completed"] == 3
    assert [m["source"] for m in summary["mining"]] == ["bm25", "online", "online"]
    assert summary["mining"][0]["triplets"] == 84
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [h["step"] for h in history][:3] == [5, 10, 15] and history[-1]["step"] == summary["steps"]
    assert {"dev/lareqa/mAP", "dev/xx_en/de/P@1", "train/loss", "learning_rate"} <= set(history[0])
    assert summary["best"]["value"] == max(h["primary"] for h in history)
    assert (out / "best" / "saved_model.pb").exists() and (out / "best" / "relkt.json").exists()
    assert list((out / "tensorboard").iterdir()) and (out / "config.yaml").exists() and (out / "train.log").exists()
    # Training helped on dev: the best evaluation beats the first.
    assert summary["best"]["value"] > history[0]["primary"]
    # Re-running a finished run does nothing; a changed setting is refused.
    assert train_teacher.main(["--config", str(cfg)]) == 0
    assert train_teacher.main(["--config", str(cfg), "--set", "triplet.margin=0.5"]) == 2
    # More online epochs train the finished run on; more BM25 epochs would re-label trained epochs: refused.
    assert train_teacher.main(["--config", str(cfg), "--set", "mining.bm25_epochs=2"]) == 2
    assert train_teacher.main(["--config", str(cfg), "--set", "mining.online_epochs=3"]) == 0
    grown = json.loads((out / "summary.json").read_text())
    assert grown["epochs_completed"] == 4 and grown["steps"] > summary["steps"]
    assert [m["source"] for m in grown["mining"]] == ["bm25", "online", "online", "online"]


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_dev_selection_on_the_article_unit_reports_what_relkt_evaluate_scores(synthetic_data, tmp_path):
    from relkt.cli import evaluate

    cfg = tiny_config(
        tmp_path,
        synthetic_data,
        **{"mining.online_epochs": 0, "eval.xx_en_units": ["article"], "eval.primary_metric": "xx_en_article/P@1"},
    )
    assert train_teacher.main(["--config", str(cfg)]) == 0
    out = tmp_path / "run"
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    assert all(h["primary"] == h["dev/xx_en_article/P@1"] for h in history)
    assert {"dev/xx_en_article/de/P@1", "dev/xx_en/de/P@1", "dev/lareqa/mAP"} <= set(history[0])
    best = next(h for h in history if h["step"] == summary["best"]["step"])
    # relkt evaluate on the best export, the run's dev split, every English article of the data set as candidates.
    scores = tmp_path / "best.json"
    assert (
        evaluate.main(
            [
                "--config",
                str(out / "config.yaml"),
                "--split",
                "dev",
                "--xx-en-unit",
                "article",
                "--no-progress",
                "--output",
                str(scores),
            ]
        )
        == 0
    )
    article = json.loads(scores.read_text())["xx_en_article"]
    assert article["de"]["P@1"] == pytest.approx(best["dev/xx_en_article/de/P@1"], abs=1e-9)
    assert np.mean([v["P@1"] for v in article.values()]) == pytest.approx(summary["best"]["value"], abs=1e-9)


def test_lr_halves_on_plateau_and_early_stop_ends_cleanly(synthetic_data, tmp_path):
    cfg = tiny_config(
        tmp_path,
        synthetic_data,
        **{
            "schedule.learning_rate": 1e-9,
            "schedule.lr_patience": 1,
            "schedule.early_stop_patience": 3,
            "eval.every_steps": 2,
            "schedule.min_learning_rate": 1e-12,
        },
    )
    assert train_teacher.main(["--config", str(cfg)]) == 0
    out = tmp_path / "run"
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["stopped_early"] and len(history) <= 4
    rates = [h["learning_rate"] for h in history]
    assert rates[1] == rates[0] and rates[2] == pytest.approx(rates[0] / 2)


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_four_evaluations_an_epoch_as_the_reference_teacher_script(synthetic_data, tmp_path):
    """eval.per_epoch 4 on one BM25 epoch of 84 triplets = 21 steps of 4: every 21 // 4 = 5 steps from the first, at
    most 4 (batches 0, 5, 10, 15; not 20), i.e. after steps 1, 6, 11, 16, then the final evaluation at step 21."""
    cfg = tiny_config(tmp_path, synthetic_data, **{"mining.online_epochs": 0, "eval.per_epoch": 4})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    history = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert [h["step"] for h in history] == [1, 6, 11, 16, 21]


def run_cli(cfg, env):
    return subprocess.Popen(
        [sys.executable, "-m", "relkt.train_teacher", "--config", str(cfg)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_killed_run_resumes_and_matches_an_uninterrupted_one(synthetic_data, tmp_path):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    changes = {"schedule.checkpoint_every": 1, "eval.every_steps": 3}
    killed_cfg = tiny_config(tmp_path / "a", synthetic_data, **changes)
    proc = run_cli(killed_cfg, env)
    killed = kill_mid_epoch(proc, tmp_path / "a" / "run" / "checkpoint" / "state.json")  # in the first online epoch
    killed_at = killed["global_step"] if killed else None
    assert killed_at is not None, "the run finished before it could be killed mid-epoch"
    assert not (tmp_path / "a" / "run" / "summary.json").exists()

    resumed = run_cli(killed_cfg, env)
    output = resumed.communicate(timeout=300)[0]
    assert resumed.returncode == 0, output
    assert "resumed from" in output and "epoch 1" in output

    reference_cfg = tiny_config(tmp_path / "b", synthetic_data, **changes)
    assert train_teacher.main(["--config", str(reference_cfg)]) == 0
    a = json.loads((tmp_path / "a" / "run" / "summary.json").read_text())
    b = json.loads((tmp_path / "b" / "run" / "summary.json").read_text())
    assert a["steps"] == b["steps"] and a["best"]["value"] == pytest.approx(b["best"]["value"])
    with (
        np.load(tmp_path / "a" / "run" / "checkpoint" / "arrays.npz") as za,
        np.load(tmp_path / "b" / "run" / "checkpoint" / "arrays.npz") as zb,
    ):
        for key in za.files:
            np.testing.assert_allclose(za[key], zb[key], atol=1e-5, err_msg=key)
    # the training log too: every entry the mean of the same steps (a window across the kill continues)
    logs = [
        [json.loads(line) for line in (tmp_path / x / "run" / "train.jsonl").read_text().splitlines()] for x in "ab"
    ]
    assert [e["step"] for e in logs[0]] == [e["step"] for e in logs[1]]
    for ea, eb in zip(*logs):
        assert ea["train/loss"] == pytest.approx(eb["train/loss"], abs=1e-5), ea["step"]


def test_positives_per_question_keeps_own_language_and_samples_the_rest(synthetic_data, tmp_path):
    from relkt.config import TeacherConfig, load_config
    from relkt.mining import TripletNegatives

    cfg = tiny_config(
        tmp_path, synthetic_data, **{"data.answer_langs": ["en", "de"], "triplet.positives_per_question": 1}
    )
    trainer = TeacherTrainer(load_config(TeacherConfig, cfg))
    # 42 English questions, each with gold answers in en and de; one positive each: the English one.
    assert len(trainer.triplets.anchor_q) == 42
    assert set(trainer.pool.candidate_langs[trainer.triplets.anchor_pos]) == {"en"}
    every = TripletNegatives.positives(trainer.pool, 0, 0)
    two = TripletNegatives.positives(trainer.pool, 2, 0)
    assert [len(g) for g in every] == [len(g) for g in two] == [2] * 42  # capped at what exists
    with pytest.raises(Exception, match="positives_per_question"):
        load_config(TeacherConfig, cfg, ["triplet.positives_per_question=-1"])


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_step_budget_stops_cleanly_after_an_evaluation(synthetic_data, tmp_path):
    cfg = tiny_config(tmp_path, synthetic_data, **{"schedule.max_steps": 7})
    assert train_teacher.main(["--config", str(cfg)]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    history = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    # Evaluations every 5 steps, then one at the budget (step 7); the 21-step first epoch is cut there.
    assert summary["steps"] == 7 and summary["stop_reason"] == "max_steps" and summary["epochs_completed"] == 0
    assert [h["step"] for h in history] == [5, 7]


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_run_leaves_readable_files_its_curves_and_no_progress_bars_when_redirected(synthetic_data, tmp_path, capfd):
    import os
    import stat

    cfg = tiny_config(tmp_path, synthetic_data, **{"mining.online_epochs": 1, "verbose": 1})  # the default bar
    old_umask = os.umask(0o022)
    try:
        assert train_teacher.main(["--config", str(cfg)]) == 0
    finally:
        os.umask(old_umask)
    out = tmp_path / "run"
    for name in ("summary.json", "metrics.jsonl", "config.yaml", "fingerprints.json", "best/relkt.json"):
        assert stat.S_IMODE((out / name).stat().st_mode) == 0o644, name  # as any file the user writes
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    printed = capfd.readouterr()
    # Output is captured (not a terminal): one line per pass, no bar redrawn with \b, \r or ANSI codes.
    assert not any(c in printed.out + printed.err for c in ("\x1b[", "\r", "\b"))
    assert "teacher done: best dev" in printed.out and "/step" in printed.out  # Keras's one line per pass


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_the_in_batch_teacher_learns_with_cached_gradients_and_resumes_its_scale(synthetic_data, tmp_path):
    changes = {
        "objective": "in_batch",
        "in_batch.batch_size": 8,
        "in_batch.chunk_size": 3,
        "in_batch.negatives_per_question": 2,
    }
    cfg = tiny_config(tmp_path, synthetic_data, **changes)
    assert train_teacher.main(["--config", str(cfg)]) == 0
    out = tmp_path / "run"
    summary = json.loads((out / "summary.json").read_text())
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    # 42 anchors in whole batches of 8: 5 steps an epoch, 3 epochs
    assert summary["objective"] == "in_batch" and summary["steps"] == 15 and summary["epochs_completed"] == 3
    assert summary["best"]["value"] > history[0]["primary"]
    assert summary["in_batch_scale"] != 20.0  # trained
    # more online epochs train on from the checkpoint, the scale restored from it rather than reset
    assert train_teacher.main(["--config", str(cfg), "--set", "mining.online_epochs=3"]) == 0
    grown = json.loads((out / "summary.json").read_text())
    assert grown["steps"] == 20
    assert abs(grown["in_batch_scale"] - summary["in_batch_scale"]) < abs(summary["in_batch_scale"] - 20.0)


def pair_files_from(data_dir, folder, lang="de"):
    """LANG.tsv: every English sentence of the synthetic pool beside its rendering in `lang` (test articles'
    included)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    en = json.loads((Path(data_dir) / "en.json").read_text())["data"]
    xx = json.loads((Path(data_dir) / f"{lang}.json").read_text())["data"]
    for a, b in zip(en, xx):
        for x, y in zip(a["paragraphs"][0]["sentences"], b["paragraphs"][0]["sentences"]):
            rows.append(f"synthetic\t{x}\t{y}\n")
    (folder / f"{lang}.tsv").write_text("source\ten\txx\n" + "".join(rows))
    return folder


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_the_alignment_task_never_reads_a_test_text_and_its_dev_metric_reads_every_language(synthetic_data, tmp_path):
    from relkt.config import TeacherConfig, load_config
    from relkt.data.selection import load_split
    from relkt.stages.teacher_trainer import alignment_pairs

    pairs_dir = pair_files_from(synthetic_data, tmp_path / "pairs")
    changes = {
        "objective": "in_batch",
        "in_batch.batch_size": 8,
        "in_batch.negatives_per_question": 1,
        "align.pairs_dir": str(pairs_dir),
        "align.langs": ["de"],
        "align.dev_pairs": 10,
        "align.share": 0.5,
        "eval.primary_metric": "joint/P@1",
        "mining.online_epochs": 0,
    }
    cfg = tiny_config(tmp_path, synthetic_data, **changes)
    config = load_config(TeacherConfig, str(cfg))
    pairs = alignment_pairs(config)
    test = load_split(config.data, "test")
    test_texts = set(test.question_texts()) | set(test.candidate_texts())
    assert pairs.dropped["de"] > 0 and not test_texts & (set(pairs.en) | set(pairs.xx))
    assert train_teacher.main(["--config", str(cfg)]) == 0
    out = tmp_path / "run"
    summary = json.loads((out / "summary.json").read_text())
    history = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    # 42 anchors: 5 QA batches of 8 and as many translation-ranking batches (share 0.5)
    assert summary["align_pairs"] == len(pairs) and summary["steps"] == 10
    first = history[0]
    assert first["primary"] == first["dev/joint/P@1"]
    assert first["dev/joint/P@1"] == pytest.approx((first["dev/xx_en/en/P@1"] + first["dev/corpus/de/P@1"]) / 2)


def test_more_alignment_pairs_train_only_a_question_files_train_rows(synthetic_data, tmp_path):
    """align.more_pairs adds a question file's `split = train` rows to the pairs (its other rows only score), draws
    per language, is fingerprinted for a resumed run, and refuses a training pair holding a question kept for
    scoring."""
    from relkt.config import TeacherConfig, load_config
    from relkt.errors import DataError
    from relkt.stages.teacher_trainer import alignment_pairs

    pairs_dir = pair_files_from(synthetic_data, tmp_path / "pairs")
    questions = tmp_path / "questions"
    questions.mkdir()
    train = [(f"q{i}", "train", f"Frage Nummer {i}?", f"Question number {i}?") for i in range(6)]
    scored = [(f"s{i}", "", f"Wertungsfrage {i}?", f"Scored question {i}?") for i in range(3)]
    (questions / "de.tsv").write_text("id\tsplit\txx\ten\n" + "".join("\t".join(r) + "\n" for r in train + scored))
    changes = {
        "objective": "in_batch",
        "align.pairs_dir": str(pairs_dir),
        "align.langs": ["de"],
        "align.dev_pairs": 10,
        "align.more_pairs": {str(questions): 0},
    }
    config = load_config(TeacherConfig, str(tiny_config(tmp_path, synthetic_data, **changes)))
    alone = alignment_pairs(
        load_config(
            TeacherConfig,
            str(tiny_config(tmp_path, synthetic_data, **{k: v for k, v in changes.items() if k != "align.more_pairs"})),
        )
    )
    pairs = alignment_pairs(config)
    assert list(pairs.xx[: len(alone)]) == list(alone.xx)  # pairs_dir's draw is unchanged by the folder beside it
    assert set(pairs.xx[len(alone) :]) == {r[2] for r in train} and not {r[2] for r in scored} & set(pairs.xx)
    assert set(pairs.dev) == {"de"} and len(pairs.dev["de"]) == len(alone.dev["de"])  # no dev from more_pairs
    config.align.more_pairs = {str(questions): 4}
    assert len(alignment_pairs(config)) == len(alone) + 4
    prints = TeacherTrainer.config_fingerprints(config)
    assert {"align/0/de.tsv", "align/1/de.tsv"} <= set(prints)
    header, *rows = (pairs_dir / "de.tsv").read_text().splitlines(keepends=True)  # a general pair (it trains, the
    # held-out ones are the last) holding a question the question file keeps for scoring
    (pairs_dir / "de.tsv").write_text("".join([header, f"synthetic\t{scored[0][3]}\t{scored[0][2]}\n", *rows]))
    with pytest.raises(DataError, match="kept for scoring at .*questions/de.tsv:8"):
        alignment_pairs(config)


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_teacher_with_answer_context_learns_its_weight_and_exports_it(synthetic_data, tmp_path):
    """Training and scoring both mix: the in-batch rows carry paragraphs, the weight moves and is checkpointed, dev
    and online mining read it from the encoder, and best/ serves it (relkt.json and response_encoder)."""
    from relkt.encoders.export import read_metadata

    changes = {
        "objective": "in_batch",
        "in_batch.batch_size": 8,
        "in_batch.chunk_size": 4,
        "in_batch.negatives_per_question": 1,
        "in_batch.answer_context": True,
        "in_batch.context_weight": 0.5,
        "in_batch.context_learning_rate": 0.05,
    }
    cfg = tiny_config(tmp_path, synthetic_data, **changes)
    trainer = TeacherTrainer(load_config(TeacherConfig, str(cfg)))
    texts, _ = trainer.in_batch_rows(np.arange(8))
    assert {"positive_context", "negative_0_context"} <= set(texts)
    pool = trainer.pool
    paragraph_of = {c.sentence: c.context for c in pool.candidates}
    assert all(paragraph_of[s] == p for s, p in zip(texts["positive"], texts["positive_context"]))
    summary = trainer.run()
    assert summary["answer_context_weight"] != pytest.approx(0.5, abs=1e-6)  # learned
    assert [m["source"] for m in summary["mining"]][:2] == ["bm25", "online"]
    meta = read_metadata(tmp_path / "run" / "best")
    assert meta["answer_context"]["endpoint"] == "response_encoder" and meta["answer_context"]["weight"] >= 0
    arrays = trainer.arrays()
    assert float(arrays["context_weight"]) == pytest.approx(summary["answer_context_weight"])


def test_answer_context_and_concatenated_context_are_refused_together(synthetic_data, tmp_path):
    from relkt.errors import ConfigError

    changes = {"objective": "in_batch", "in_batch.answer_context": True, "data.with_context": True}
    cfg = tiny_config(tmp_path, synthetic_data, **changes)
    with pytest.raises(ConfigError, match="in_batch.answer_context mixes each sentence with its paragraph"):
        load_config(TeacherConfig, str(cfg))


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_teacher_grows_its_vocabulary_from_its_alignment_pairs_and_exports_it(tmp_path):
    """extend_vocab on a muse teacher: the pieces the alignment task's Thai training pairs need (never a dev or test
    pair's) join the vocabulary before training, only the new rows step at the multiplier, they move, and best/
    reads Thai as the trained teacher does."""
    from relkt.encoders import build_encoder
    from relkt.encoders.export import export_encoder
    from relkt.encoders.registry import token_table
    from relkt.errors import ConfigError
    from relkt.stages.teacher_trainer import alignment_pairs
    from tests.helpers.data import make_synthetic_lareqa
    from tests.helpers.tiny_muse import tiny_muse_encoder

    data = make_synthetic_lareqa(tmp_path / "data", langs=("en", "th"))
    pairs_dir = pair_files_from(data, tmp_path / "pairs", "th")
    base = tiny_muse_encoder()
    changes = {
        "encoder": {"spec": f"muse:{export_encoder(base, tmp_path / 'base')}", "options": {}},
        "objective": "in_batch",
        "in_batch.batch_size": 8,
        "in_batch.negatives_per_question": 1,
        "align": {"pairs_dir": str(pairs_dir), "langs": ["th"], "dev_pairs": 10, "share": 0.5},
        "extend_vocab": {"enabled": True, "langs": ["th"], "new_rows_lr_multiplier": 10.0},
        "eval.primary_metric": "joint/P@1",
        "mining.online_epochs": 0,
    }
    config = load_config(TeacherConfig, str(tiny_config(tmp_path, data, **changes)))
    trainer = TeacherTrainer(config)
    ext, encoder = trainer.vocab_extension, trainer.encoder
    assert ext.first_id == base.vocabulary_size and ext.tokens
    assert encoder.vocabulary_size == base.vocabulary_size + len(ext.tokens)
    learned = set("".join(ext.tokens))
    pairs = alignment_pairs(config)
    held_out = {t for corpus in pairs.dev.values() for t in corpus.xx}
    assert learned <= set("".join(pairs.xx))  # the training pairs' Thai ...
    only_held_out = set("".join(held_out)) - set("".join(pairs.xx))
    assert not learned & only_held_out  # ... and nothing only a held-out pair holds
    assert trainer.optimizer.row_scales == {token_table(encoder).path: (ext.first_id, 10.0)}
    before = token_table(encoder).numpy().copy()
    summary = trainer.run()
    after = token_table(encoder).numpy()
    moved = np.abs(after - before).max(axis=1)
    assert moved[ext.first_id :].max() > 0 and summary["vocab_extension"]["added_tokens"] == len(ext.tokens)
    exported = build_encoder(f"muse:{tmp_path / 'run' / 'last'}")
    assert exported.vocabulary_size == encoder.vocabulary_size
    text = pairs.xx[:4].tolist()
    np.testing.assert_allclose(exported.encode(text), encoder.encode(text), atol=1e-5)
    # the pieces come from the alignment task's pairs: a language it does not hold is refused
    changes["extend_vocab"] = {"enabled": True, "langs": ["de"]}
    with pytest.raises(ConfigError, match="extend_vocab.langs: de not in align.langs"):
        load_config(TeacherConfig, str(tiny_config(tmp_path / "bad", data, **changes)))
