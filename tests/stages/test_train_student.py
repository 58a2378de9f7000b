import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from relkt import api
from relkt.cli import train_student
from relkt.config import StudentConfig, load_config
from relkt.config.config_io import with_overrides
from relkt.encoders.export import export_encoder
from relkt.encoders.ngram_encoder import NgramEncoder
from relkt.errors import CheckpointError, ConfigError
from relkt.stages.student_trainer import StudentTrainer
from tests.helpers.data import write_corpus
from tests.helpers.runs import kill_mid_epoch, student_config

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def teacher_dir(tmp_path):
    """A 'teacher': an n-gram encoder exported in the hub-compatible format, as stage 1 leaves it."""
    return export_encoder(NgramEncoder(dim=16, num_buckets=512, seed=1), tmp_path / "teacher")


def test_student_learns_german_and_teacher_stays_bit_identical(synthetic_data, teacher_dir, tmp_path):
    cfg = load_config(StudentConfig, student_config(tmp_path, synthetic_data, teacher_dir))
    files_before = {p: p.read_bytes() for p in teacher_dir.rglob("*") if p.is_file()}
    trainer = StudentTrainer(cfg)
    teacher_before = [w.numpy().copy() for w in trainer.teacher.weights]
    student_before = [w.numpy().copy() for w in trainer.student.weights]
    summary = trainer.run()
    for w, w0 in zip(trainer.teacher.weights, teacher_before):
        np.testing.assert_array_equal(w.numpy(), w0)  # bit for bit
    assert {p: p.read_bytes() for p in teacher_dir.rglob("*") if p.is_file()} == files_before
    assert summary["teacher_unchanged"]
    assert any(not np.array_equal(w.numpy(), w0) for w, w0 in zip(trainer.student.weights, student_before))
    history = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    # 21 train articles x 2 questions = 42 German examples; each term is logged separately.
    assert summary["examples"] == 42
    assert {"train/q", "train/d", "train/dq", "train/loss"} <= set(history[0])
    assert history[-1]["train/q"] < history[0]["train/q"]  # the student moved q_x towards T(q_en)
    # The student learned German: it beats the teacher (its starting point) on dev German->English retrieval.
    from relkt.data.selection import dev_pool
    from relkt.metrics import LareqaEvaluator

    teacher_dev = LareqaEvaluator(dev_pool(cfg.data, cfg.eval, cfg.seed))(trainer.teacher)["xx_en/de/P@1"]
    assert summary["best"]["value"] > teacher_dev, (summary["best"], teacher_dev)
    assert (tmp_path / "run" / "best" / "relkt.json").exists() and (tmp_path / "run" / "teacher_targets.npz").exists()


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_student_of_another_size_gets_a_projection(synthetic_data, teacher_dir, tmp_path):
    cfg = student_config(
        tmp_path,
        synthetic_data,
        teacher_dir,
        **{"student": {"spec": "ngram", "options": {"num_buckets": 256}}, "distill.epochs": 1},
    )
    assert train_student.main(["--config", str(cfg)]) == 0  # an n-gram base is 128 wide; the teacher 16
    meta = json.loads((tmp_path / "run" / "best" / "relkt.json").read_text())
    assert meta["kind"] == "ngram+projection" and meta["dim"] == 16


def test_a_student_asked_for_a_size_other_than_the_teachers_is_refused(synthetic_data, teacher_dir, tmp_path):
    cfg = student_config(
        tmp_path,
        synthetic_data,
        teacher_dir,
        **{"student": {"spec": "ngram", "options": {"dim": 8, "num_buckets": 256}}, "distill.epochs": 1},
    )
    with pytest.raises(ConfigError, match=r"student.options.dim: 8, .*dim 16\).*set it to 16"):
        StudentTrainer.train(load_config(StudentConfig, cfg))
    assert not (tmp_path / "run" / "best").exists()


def test_a_student_whose_only_language_is_its_source_is_refused():
    with pytest.raises(ConfigError, match=r"data.student_langs: \['en'\]: a student learns at least one language"):
        api.config("student", set={"data.student_langs": ["en"]})
    api.config("student", set={"data.student_langs": ["en", "de"]})  # the source beside another language is fine


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_killed_student_run_resumes_and_matches(synthetic_data, teacher_dir, tmp_path):
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    # lazy Adam on the n-gram table: its moments of unread rows must come back exactly as they were saved
    changes = {"schedule.checkpoint_every": 1, "eval.every_steps": 3, "schedule.sparse_rows": "lazy"}
    cfg = student_config(tmp_path / "a", synthetic_data, teacher_dir, **changes)
    cmd = [sys.executable, "-m", "relkt.train_student", "--config", str(cfg)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    killed = kill_mid_epoch(proc, tmp_path / "a" / "run" / "checkpoint" / "state.json")
    assert killed, "the run finished before it could be killed mid-epoch"
    resumed = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "resumed from" in resumed.stdout + resumed.stderr
    ref = student_config(tmp_path / "b", synthetic_data, teacher_dir, **changes)
    assert train_student.main(["--config", str(ref)]) == 0
    with (
        np.load(tmp_path / "a" / "run" / "checkpoint" / "arrays.npz") as za,
        np.load(tmp_path / "b" / "run" / "checkpoint" / "arrays.npz") as zb,
    ):
        for key in za.files:
            np.testing.assert_allclose(za[key], zb[key], atol=1e-5, err_msg=key)


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_finished_run_trains_on_when_epochs_grow(synthetic_data, teacher_dir, tmp_path):
    """1 epoch, then `--set distill.epochs=2` on the same (moved) folder: the same weights as a run
    started with 2 epochs (epoch e's order depends only on (seed, e)); fewer epochs are refused."""

    one = student_config(tmp_path / "a", synthetic_data, teacher_dir, **{"distill.epochs": 1})
    assert train_student.main(["--config", str(one)]) == 0
    moved = tmp_path / "moved"
    (tmp_path / "a" / "run").rename(moved)  # a run folder moved elsewhere still resumes
    grown = ["--config", str(one), "--set", f"output_dir={moved}", "--set", "distill.epochs=2"]
    assert train_student.main(grown) == 0
    summary = json.loads((moved / "summary.json").read_text())
    assert summary["epochs_completed"] == 2 and summary.get("already_finished") is None
    ref = student_config(tmp_path / "b", synthetic_data, teacher_dir, **{"distill.epochs": 2})
    assert train_student.main(["--config", str(ref)]) == 0
    assert json.loads((tmp_path / "b" / "run" / "summary.json").read_text())["steps"] == summary["steps"]
    with (
        np.load(moved / "checkpoint" / "arrays.npz") as za,
        np.load(tmp_path / "b" / "run" / "checkpoint" / "arrays.npz") as zb,
    ):
        for key in za.files:
            np.testing.assert_allclose(za[key], zb[key], atol=1e-5, err_msg=key)
    steps = [json.loads(line)["step"] for line in (moved / "metrics.jsonl").read_text().splitlines()]
    assert steps == sorted(set(steps))  # no evaluation repeated
    with pytest.raises(ConfigError, match="distill.epochs"):
        api.train_student(load_config(StudentConfig, one, [f"output_dir={moved}", "distill.epochs=1"]))


@pytest.mark.slow  # two end-to-end trainings (~70 s on 2 cores)
def test_student_with_vocabulary_extension_reads_a_spaceless_script(tmp_path):
    """A tiny BERT teacher that cannot read the synthetic Thai; the extended student gets its characters as
    new tokens, trains their rows, and its export tokenizes Thai without [UNK]; the teacher is untouched."""
    from relkt.encoders import build_encoder
    from tests.helpers.data import make_synthetic_lareqa
    from tests.helpers.tiny_bert import VOCAB, tiny_bert

    data = make_synthetic_lareqa(tmp_path / "data", langs=("en", "th"))
    teacher = export_encoder(tiny_bert(), tmp_path / "teacher")
    cfg = student_config(
        tmp_path,
        data,
        teacher,
        **{
            "student": {"spec": f"bert:{teacher}", "extend_vocab": {"enabled": True}},
            "data.student_langs": ["th"],
            "eval.primary_metric": "xx_en/th/P@1",
            "distill.epochs": 1,
        },
    )
    trainer = StudentTrainer(load_config(StudentConfig, cfg))
    added = trainer.vocab_extension.tokens
    # The synthetic "Thai" uses 26 letters; the English side is mostly outside the 40-word vocabulary too.
    assert {"ก", "ข", "ผ"} <= set(added) and trainer.vocab_extension.first_id == len(VOCAB)
    rows_before = trainer.student.backbone.token_embedding.embeddings.numpy().copy()
    summary = trainer.run()
    assert summary["teacher_unchanged"] and summary["vocab_extension"]["added_tokens"] == len(added)
    rows_after = trainer.student.backbone.token_embedding.embeddings.numpy()
    thai_ids = [trainer.student.tokenizer.token_to_id(t) for t in ("ก", "ข")]
    assert not np.allclose(rows_after[thai_ids], rows_before[thai_ids])  # the new rows were trained
    assert len(trainer.teacher.weights[0].numpy()) == len(VOCAB)  # the teacher keeps its vocabulary
    best = build_encoder(f"bert:{tmp_path / 'run' / 'best'}")
    ids = np.asarray(best.tokenizer(["กขค ฆง"])[0])
    assert best.tokenizer.token_to_id("[UNK]") not in ids and len(ids) == 5
    # student.extend_vocab.pieces reaches the extension: learned Thai pieces join the vocabulary and the split.
    cfg_pieces = student_config(
        tmp_path / "pieces",
        data,
        teacher,
        **{
            "student": {"spec": f"bert:{teacher}", "extend_vocab": {"enabled": True, "pieces": 5}},
            "data.student_langs": ["th"],
            "eval.primary_metric": "xx_en/th/P@1",
        },
    )
    ext = StudentTrainer(load_config(StudentConfig, cfg_pieces)).vocab_extension
    multi = [t for t in ext.tokens if len(t) > 1 and not t.startswith("##")]
    assert ext.learned_pieces == 5 and multi and all(t in ext.split_pattern for t in multi)
    # A hub: student (no vocabulary to grow) is refused with the fix in the message.
    bad = student_config(
        tmp_path / "bad",
        data,
        teacher,
        **{"student": {"spec": f"hub:{teacher}", "extend_vocab": {"enabled": True}}, "data.student_langs": ["th"]},
    )
    with pytest.raises(Exception, match="use student.spec=bert:"):
        StudentTrainer(load_config(StudentConfig, bad))


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_eval_at_start_records_the_starting_point(synthetic_data, teacher_dir, tmp_path):
    from relkt.data.selection import dev_pool
    from relkt.metrics import LareqaEvaluator

    cfg = load_config(
        StudentConfig,
        student_config(tmp_path, synthetic_data, teacher_dir, **{"eval.at_start": True, "distill.epochs": 1}),
    )
    trainer = StudentTrainer(cfg)
    teacher_dev = LareqaEvaluator(dev_pool(cfg.data, cfg.eval, cfg.seed))(trainer.teacher)["xx_en/de/P@1"]
    summary = trainer.run()
    history = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    # Step 0 scores the untrained student, a copy of the teacher: the teacher's own dev score.
    assert history[0]["step"] == 0 and history[0]["primary"] == pytest.approx(teacher_dev)
    assert history[1]["step"] == 5 and all(h["step"] % 5 == 0 or h["step"] == summary["steps"] for h in history[1:])
    assert summary["best"]["value"] >= teacher_dev
    # last/ holds the model training ended with, whatever best/ holds.
    last = json.loads((tmp_path / "run" / "last" / "relkt.json").read_text())
    assert summary["last_export"].endswith("last") and last["training"]["step"] == summary["steps"]
    # A rerun of the finished run does not evaluate again.
    assert StudentTrainer(cfg).run()["already_finished"]
    assert len((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()) == len(history)
    # Nor once its checkpoint/ is deleted to free disk: it does not train again from scratch over best/.
    best = (tmp_path / "run" / "best" / "relkt.json").read_bytes()
    shutil.rmtree(tmp_path / "run" / "checkpoint")
    assert StudentTrainer(cfg).run()["already_finished"]
    assert (tmp_path / "run" / "best" / "relkt.json").read_bytes() == best
    assert len((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()) == len(history)
    # Training it on to more epochs needs the checkpoint.
    with pytest.raises(CheckpointError, match="checkpoint/ is gone, so it cannot train on to 2"):
        StudentTrainer(with_overrides(cfg, ["distill.epochs=2"])).run()


@pytest.mark.slow  # two end-to-end trainings (~100 s on 2 cores)
def test_new_rows_learning_rate_multiplier_moves_only_new_rows_faster(tmp_path):
    """The same extended student trained with new_rows_lr_multiplier 1 and 20: the new rows move about
    20 times as far (Adam's step is ~lr per step), the old rows about as far as before."""
    from relkt.stages.sparse_adam import SparseAdam
    from tests.helpers.data import make_synthetic_lareqa
    from tests.helpers.tiny_bert import tiny_bert

    data = make_synthetic_lareqa(tmp_path / "data", langs=("en", "th"))
    teacher = export_encoder(tiny_bert(), tmp_path / "teacher")
    moved = {}
    for mult in (1.0, 20.0):
        cfg = student_config(
            tmp_path / f"m{mult:g}",
            data,
            teacher,
            **{
                "student": {
                    "spec": f"bert:{teacher}",
                    "extend_vocab": {"enabled": True, "new_rows_lr_multiplier": mult},
                },
                "data.student_langs": ["th"],
                "eval.primary_metric": "xx_en/th/P@1",
                "distill.epochs": 1,
                "schedule.learning_rate": 1e-4,
            },
        )
        trainer = StudentTrainer(load_config(StudentConfig, cfg))
        assert isinstance(trainer.optimizer, SparseAdam) and bool(trainer.optimizer.row_scales) == (mult != 1.0)
        first = trainer.vocab_extension.first_id
        table = trainer.student.backbone.token_embedding.embeddings
        before = table.numpy().copy()
        trainer.run()
        delta = np.abs(table.numpy() - before)
        moved[mult] = (delta[:first].mean(), delta[first:].mean())
    assert moved[20.0][1] > 8 * moved[1.0][1]
    assert moved[20.0][0] < 3 * moved[1.0][0]


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
@pytest.mark.parametrize("negatives", ["batch", "bank"])
def test_contrast_and_warmup_train_and_log_the_ranking_terms(synthetic_data, teacher_dir, tmp_path, negatives):
    cfg = load_config(
        StudentConfig,
        student_config(
            tmp_path,
            synthetic_data,
            teacher_dir,
            **{
                "distill.contrast": 1.0,
                "distill.temperature": 0.1,
                "distill.epochs": 2,
                "schedule.warmup_steps": 8,
                "distill.negatives": negatives,
            },
        ),
    )
    trainer = StudentTrainer(cfg)
    loss = trainer.model.loss
    assert loss.contrast == 1.0 and loss.temperature == 0.1 and loss.negatives == negatives
    if negatives == "bank":  # every distinct teacher target: 42 German examples of 42 questions and their answers
        n_q, n_d = len(set(trainer.examples.q_source)), len(set(trainer.examples.d_teacher))
        assert tuple(loss.banks["q_en"].shape) == (n_q, 16) and tuple(loss.banks["d"].shape) == (n_d, 16)
    else:
        assert loss.banks is None
    summary = trainer.run()
    history = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert {"train/q_rank", "train/d_rank", "train/dq_rank"} <= set(history[0])
    # 42 examples / batch 4 = 11 steps an epoch: past the 8 warmup steps the optimizer runs at the schedule's
    # rate (0.01, or halved on a plateau), not a warmup fraction of it.
    assert summary["steps"] == 22
    assert float(trainer.optimizer.learning_rate.numpy()) == pytest.approx(trainer.harness.state.learning_rate)
    assert history[-1]["train/dq_rank"] < history[0]["train/dq_rank"]  # S(q_x) learned to pick its own T(d)


def test_a_decaying_rate_reaches_zero_at_the_last_step_of_the_last_epoch(synthetic_data, teacher_dir, tmp_path):
    """42 examples in batches of 4 (the last of each epoch holds 2): 11 steps an epoch, 22 in 2 epochs. Linear decay
    at 0.01, no plateau halving: the rate for step s (0-based) is 0.01 x (22 - s) / 22, so the training log's entries
    after steps 10 and 20 (the rate of the next step) read 0.01 x 12 / 22 and 0.01 x 2 / 22."""
    changes = {"distill.epochs": 2, "schedule.decay": "linear", "schedule.lr_patience": 0}
    cfg = load_config(StudentConfig, student_config(tmp_path, synthetic_data, teacher_dir, **changes))
    trainer = StudentTrainer(cfg)
    summary = trainer.run()
    assert summary["steps"] == trainer.harness.total_steps == 22
    logged = {e["step"]: e["learning_rate"] for e in map(json.loads, (tmp_path / "run" / "train.jsonl").open())}
    assert logged[10] == pytest.approx(0.01 * 12 / 22) and logged[20] == pytest.approx(0.01 * 2 / 22)
    assert float(trainer.optimizer.learning_rate.numpy()) == pytest.approx(0.01 / 22)  # the last step's


def test_a_truncated_teacher_target_cache_is_computed_again(tmp_path):
    from relkt.encoders.ngram_encoder import NgramEncoder
    from relkt.stages.teacher_targets import teacher_targets

    teacher = NgramEncoder(dim=4, num_buckets=16)
    cache = tmp_path / "teacher_targets.npz"
    first = teacher_targets(teacher, ["a", "b"], cache, 8)
    cache.write_bytes(cache.read_bytes()[:50])
    np.testing.assert_allclose(teacher_targets(teacher, ["a", "b"], cache, 8), first)
    with np.load(cache) as z:  # rewritten whole
        assert z["targets"].shape == (2, 4)


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_muse_student_grows_its_sentencepiece_vocabulary_from_the_training_texts(tmp_path, monkeypatch):
    """student.extend_vocab on a muse student (teacher: a relkt export of a tiny muse) takes the sentencepiece path:
    the characters of the synthetic Thai the tiny model lacks become pieces, their rows follow the table's, and the
    new-rows learning-rate multiplier scales exactly those rows."""
    from relkt.encoders.muse_encoder import MuseEncoder
    from relkt.stages.sparse_adam import SparseAdam
    from tests.helpers.data import make_synthetic_lareqa
    from tests.helpers.tiny_muse import tiny_muse_encoder

    data = make_synthetic_lareqa(tmp_path / "data", langs=("en", "th"))
    base = tiny_muse_encoder()
    teacher = export_encoder(base, tmp_path / "teacher")
    cfg = student_config(
        tmp_path,
        data,
        teacher,
        **{
            "teacher.spec": f"muse:{teacher}",
            "student": {"extend_vocab": {"enabled": True, "new_rows_lr_multiplier": 10.0}},
            "data.student_langs": ["th"],
            "eval.primary_metric": "xx_en/th/P@1",
            "distill.epochs": 1,
            "distill.length_chunks": 2,
        },
    )
    trainer = StudentTrainer(load_config(StudentConfig, cfg))
    assert trainer.model.length_chunks == 2  # muse's features carry a padding_mask: runs of like length allowed
    student, ext = trainer.student, trainer.vocab_extension
    assert isinstance(student, MuseEncoder) and student.added_rows_start == base.vocabulary_size == ext.first_id
    assert ext.tokens and all(len(t) == 1 for t in ext.tokens)  # single characters (pieces: 0)
    assert student.vocabulary_size == base.vocabulary_size + len(ext.tokens)
    assert trainer.teacher.vocabulary_size == base.vocabulary_size  # the teacher keeps its vocabulary
    assert isinstance(trainer.optimizer, SparseAdam) and trainer.optimizer.row_scales
    # extend_vocab.piece_scripts reaches the extension (a script name RE2 does not know is refused there).
    cfg = student_config(
        tmp_path / "scripts",
        data,
        teacher,
        **{
            "teacher.spec": f"muse:{teacher}",
            "data.student_langs": ["th"],
            "eval.primary_metric": "xx_en/th/P@1",
            "student": {"extend_vocab": {"enabled": True, "pieces": 20, "piece_scripts": ["Klingonish"]}},
        },
    )
    with pytest.raises(ConfigError, match="student.extend_vocab .*not all Unicode script names"):
        StudentTrainer(load_config(StudentConfig, cfg))
    # ... and so does piece_chars: every learned piece kept holds one of them or a character the base cannot read.
    import relkt.stages.student_trainer as stage

    seen = {}

    def extend(*args, **kwargs):
        seen.update(kwargs)
        return extend_encoder_vocabulary(*args, **kwargs)

    from relkt.encoders.registry import extend_encoder_vocabulary

    monkeypatch.setattr(stage, "extend_encoder_vocabulary", extend)
    cfg = student_config(
        tmp_path / "chars",
        data,
        teacher,
        **{
            "teacher.spec": f"muse:{teacher}",
            "data.student_langs": ["th"],
            "eval.primary_metric": "xx_en/th/P@1",
            "student": {"extend_vocab": {"enabled": True, "pieces": 20, "piece_chars": "ß"}},
        },
    )
    StudentTrainer(load_config(StudentConfig, cfg))
    assert seen["piece_chars"] == "ß" and seen["pieces"] == 20


def test_corpus_pairs_teach_the_question_side_only_and_give_a_dev_metric(synthetic_data, teacher_dir, tmp_path):
    write_corpus(tmp_path / "corpus", "de", 30)
    changes = {
        "data.corpus_dir": str(tmp_path / "corpus"),
        "data.corpus_pairs_per_lang": 16,
        "data.corpus_dev_pairs": 8,
        "distill.epochs": 1,
        "eval.primary_metric": "corpus/P@1",
    }
    cfg = load_config(StudentConfig, student_config(tmp_path, synthetic_data, teacher_dir, **changes))
    trainer = StudentTrainer(cfg)
    ex = trainer.examples
    corpus_rows = [i for i, has in enumerate(ex.has_document()) if not has]
    # 42 QA examples + 16 of the 22 training pairs (8 of 30 held out); the held-out ones are never trained on.
    assert len(ex) == 58 and len(corpus_rows) == 16 and len(trainer.corpus_dev["de"]) == 8
    assert not set(trainer.corpus_dev["de"].xx) & {ex.q_target[i] for i in corpus_rows}
    # Their teacher target is T(en) for the question and 0 for the (absent) document: no document term.
    targets = trainer.example_targets()
    assert not targets[corpus_rows, 1].any() and (np.abs(targets[corpus_rows, 0]).sum(1) > 0).all()
    teacher_en = trainer.teacher.encode([ex.q_source[i] for i in corpus_rows])
    np.testing.assert_allclose(targets[corpus_rows, 0], teacher_en, atol=1e-5)
    summary = trainer.run()
    assert summary["corpus_pairs"] == 16 and summary["best"]["metric"] == "corpus/P@1"
    history = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    assert {"dev/corpus/de/P@1", "dev/corpus/P@1", "dev/lareqa/mAP"} <= set(history[0])
    # The cached targets hold the corpus texts: a second trainer reuses the cache (same key) and the same targets.
    again = StudentTrainer(cfg)
    np.testing.assert_array_equal(again.example_targets(), trainer.example_targets())


def test_sort_window_batches_like_lengths_and_trains(synthetic_data, teacher_dir, tmp_path):
    """distill.sort_window: each epoch is still every example once, in an order fixed by (seed, epoch); the batches of
    each window are sorted by the student's tokens (question, plus document where there is one), so they pad less
    than the random batches; 0 leaves the plain permutation as it was; a corpus run with it trains."""
    write_corpus(tmp_path / "corpus", "de", 30)
    changes = {
        "data.corpus_dir": str(tmp_path / "corpus"),
        "data.corpus_pairs_per_lang": 16,
        "data.corpus_dev_pairs": 8,
    }
    changes["distill.epochs"] = 1
    plain = load_config(StudentConfig, student_config(tmp_path / "a", synthetic_data, teacher_dir, **changes))
    sorted_cfg = with_overrides(plain, ["distill.sort_window=3", f"output_dir={tmp_path / 'b' / 'run'}"])
    base, trainer = StudentTrainer(plain), StudentTrainer(sorted_cfg)
    n, bs = len(trainer.examples), sorted_cfg.distill.batch_size
    np.testing.assert_array_equal(base.epoch_order(1), np.random.default_rng([plain.seed, 1]).permutation(n))
    tokens = trainer.row_tokens()
    ex, has = trainer.examples, trainer.examples.has_document()
    i = has.index(True)
    assert tokens[i] == sum(trainer.student.length_keys([ex.q_target[i], ex.d_student[i]]))
    j = has.index(False)
    assert tokens[j] == trainer.student.length_keys([ex.q_target[j]])[0]
    order = trainer.epoch_order(1)
    assert sorted(order) == list(range(n)) and np.array_equal(order, trainer.epoch_order(1))
    window = 3 * bs
    assert n >= 2 * window  # two full windows checked; the last, partial one may hold a short batch anywhere
    for lo in range(0, n - window + 1, window):  # the window's examples are the permutation's, sorted within it
        perm = np.random.default_rng([plain.seed, 1]).permutation(n)
        assert set(order[lo : lo + window]) == set(perm[lo : lo + window])
        batches = [order[k : k + bs] for k in range(lo, min(lo + window, n), bs)]
        spans = sorted((tokens[b].min(), tokens[b].max()) for b in batches)
        assert all(hi <= nxt_lo for (_, hi), (nxt_lo, _) in zip(spans, spans[1:]))

    def padded(o):
        return sum(tokens[o[k : k + bs]].max() for k in range(0, n, bs))

    assert padded(order) < padded(base.epoch_order(1))
    assert trainer.run()["epochs_completed"] == 1


def test_length_chunks_are_refused_where_they_cannot_work(synthetic_data, teacher_dir, tmp_path):
    """A hub-loaded student (the exported n-gram teacher's copy) gives raw strings, no padding_mask to cut runs by:
    refused at start, naming the key; more runs than a batch has rows, or none, when the config loads."""
    cfg = load_config(
        StudentConfig, student_config(tmp_path, synthetic_data, teacher_dir, **{"distill.length_chunks": 2})
    )
    with pytest.raises(ConfigError, match="distill.length_chunks: 2 .*HubEncoder's features have none"):
        StudentTrainer(cfg)
    for bad in ("0", "5"):  # the test config's batch is 4
        with pytest.raises(ConfigError, match=r"distill.length_chunks: .*1 to batch_size \(4\)"):
            with_overrides(cfg, [f"distill.length_chunks={bad}"])


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_a_corpus_run_resumes_and_trains_on(synthetic_data, teacher_dir, tmp_path):
    write_corpus(tmp_path / "corpus", "de", 30)
    changes = {
        "data.corpus_dir": str(tmp_path / "corpus"),
        "data.corpus_pairs_per_lang": 16,
        "data.corpus_dev_pairs": 8,
        "distill.epochs": 1,
    }
    cfg = student_config(tmp_path, synthetic_data, teacher_dir, **changes)
    assert train_student.main(["--config", str(cfg)]) == 0
    first = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert train_student.main(["--config", str(cfg), "--set", "distill.epochs=2"]) == 0
    grown = json.loads((tmp_path / "run" / "summary.json").read_text())
    # The same 58 examples (the draw and the held-out slice are fixed by seed and text), one more epoch of them.
    assert grown["examples"] == first["examples"] == 58 and grown["epochs_completed"] == 2
    assert grown["steps"] == 2 * first["steps"] == 2 * 15


def thai_rows_trainer(tmp_path, student: dict | None = None, data_set: dict | None = None, **language_rows):
    """A muse student teaching Thai through its own rows (max_other_count 1), German beside it: (trainer, data,
    teacher export). `data_set`: more `data.` settings."""
    from tests.helpers.data import make_synthetic_lareqa
    from tests.helpers.tiny_muse import tiny_muse_encoder

    data = make_synthetic_lareqa(tmp_path / "data", langs=("en", "de", "th"))
    teacher = export_encoder(tiny_muse_encoder(), tmp_path / "teacher")
    rows = {"langs": ["th"], "max_other_count": 1, **language_rows}
    cfg = student_config(
        tmp_path,
        data,
        teacher,
        **{
            "teacher.spec": f"muse:{teacher}",
            "student": {**(student or {}), "language_rows": rows},
            "data.student_langs": ["de", "th"],
            "eval.primary_metric": "xx_en/th/P@1",
            "distill.epochs": 1,
            "schedule.learning_rate": 0.05,
            **{f"data.{key}": value for key, value in (data_set or {}).items()},
        },
    )
    return StudentTrainer(load_config(StudentConfig, cfg)), data, teacher


@pytest.mark.slow  # end to end: trains (the default suite stays under 10 min)
def test_pieces_learned_from_the_taught_languages_alone_do_not_read_the_replayed_ones(tmp_path, monkeypatch):
    """extend_vocab.learn_from: taught hands the extension the taught language's student texts and nothing else, so
    how much of the other languages is replayed cannot change the taught one's pieces; `all` hands it every text."""
    import relkt.stages.student_trainer as stage

    seen = []

    def extend(student, texts, *args, **kwargs):
        seen.append(list(texts))
        return real(student, texts, *args, **kwargs)

    real = stage.extend_encoder_vocabulary
    monkeypatch.setattr(stage, "extend_encoder_vocabulary", extend)
    pieces = {"enabled": True, "pieces": 20}
    trainer, _, _ = thai_rows_trainer(tmp_path / "taught", {"extend_vocab": {**pieces, "learn_from": "taught"}})
    ex = trainer.examples
    by_lang = {
        lang: {t for i, x in enumerate(ex.lang) if x == lang for t in (ex.q_target[i], ex.d_student[i]) if t}
        for lang in set(ex.lang)
    }
    assert {"de", "th"} <= set(by_lang) and seen[-1] == sorted(by_lang["th"])
    thai_rows_trainer(tmp_path / "all", {"extend_vocab": pieces})
    assert by_lang["de"] <= set(seen[-1]) and by_lang["th"] <= set(seen[-1])
    with pytest.raises(ConfigError, match="learn_from: taught .*language_rows.langs names none"):
        thai_rows_trainer(tmp_path / "none", {"extend_vocab": {**pieces, "learn_from": "taught"}}, langs=[])


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_language_rows_train_only_the_new_languages_rows_and_leave_the_others_bit_identical(tmp_path):
    """student.language_rows on a muse student: only rows the Thai texts read and no other training text does (at
    max_other_count 1), pieces vocabulary extension added among them, may move; the network and every other row stay the
    teacher's, so English and German embed exactly as before, while Thai moves."""
    from relkt.encoders.muse_encoder import MuseEncoder
    from relkt.stages.row_subset_adam import RowSubsetAdam

    trainer, data, teacher = thai_rows_trainer(tmp_path, {"extend_vocab": {"enabled": True, "init": "unk"}})
    student, rows, first = trainer.student, trainer.language_rows, trainer.vocab_extension.first_id
    assert isinstance(student, MuseEncoder) and isinstance(trainer.optimizer, RowSubsetAdam)
    assert [v.path for v in student.trainable_variables] == [student.token_embedding.embeddings.path]
    assert len(rows[rows >= first]) and len(rows[rows < first])  # added Thai characters and base Thai pieces
    before = {v.path: v.numpy().copy() for v in student.weights}
    ex = trainer.examples
    texts = {lang: sorted({ex.q_target[i] for i, x in enumerate(ex.lang) if x == lang}) for lang in ("de", "th")}
    texts["en"] = sorted(set(ex.q_source))
    start = {lang: student.encode(t) for lang, t in texts.items()}
    trainer.run()

    table = student.token_embedding.embeddings.numpy()
    frozen = np.setdiff1d(np.arange(len(table)), rows)
    np.testing.assert_array_equal(table[frozen], before[student.token_embedding.embeddings.path][frozen])
    assert np.abs(table[rows] - before[student.token_embedding.embeddings.path][rows]).max() > 1e-3
    for v in student.weights:
        if v.path != student.token_embedding.embeddings.path:
            np.testing.assert_array_equal(v.numpy(), before[v.path], err_msg=v.path)
    for lang in ("en", "de"):  # their rows are all frozen: the same embeddings to the bit
        np.testing.assert_array_equal(student.encode(texts[lang]), start[lang])
    assert np.abs(student.encode(texts["th"]) - start["th"]).max() > 1e-3
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["language_rows"] == {
        "langs": ["th"],
        "rows": len(rows),
    }

    # min_own_ratio reaches the choice. With no bar on the others' reads, ratio 0 also lets in the rows every text
    # reads (<s>, </s>); at 1000 a row any other text reads would need 1000 Thai reads for each of theirs, so exactly
    # the rows no other text reads are chosen, as max_other_count 1 did.
    loose = {"langs": ["th"], "max_other_count": 10**6}
    chosen = {}
    for ratio in (0.0, 1000.0):
        other = student_config(
            tmp_path / f"ratio{ratio:g}",
            data,
            teacher,
            **{
                "teacher.spec": f"muse:{teacher}",
                "data.student_langs": ["de", "th"],
                "eval.primary_metric": "xx_en/th/P@1",
                "student": {
                    "extend_vocab": {"enabled": True, "init": "unk"},
                    "language_rows": {**loose, "min_own_ratio": ratio},
                },
            },
        )
        chosen[ratio] = set(StudentTrainer(load_config(StudentConfig, other)).language_rows.tolist())
    assert chosen[1000.0] == set(rows.tolist()) and chosen[0.0] - chosen[1000.0] >= {student.bos_id, student.eos_id}


@pytest.mark.slow  # end to end: the fast suite stays within 10 minutes on 2 cores
def test_language_rows_with_a_rest_rate_move_the_network_gently_and_the_rows_fully(tmp_path):
    """student.language_rows.rest_lr_multiplier 0.01: the Thai rows still learn at the rate, and now the network and
    the table's other rows move too, at a hundredth of it (the whole-network student with a rate per row)."""
    trainer, _, _ = thai_rows_trainer(tmp_path, rest_lr_multiplier=0.01)
    student, rows = trainer.student, trainer.language_rows
    table_path = student.token_embedding.embeddings.path
    assert trainer.optimizer.rest_scale == 0.01 and len(student.trainable_variables) > 1
    before = {v.path: v.numpy().copy() for v in student.weights}
    trainer.run()

    table = student.token_embedding.embeddings.numpy()
    moved = np.abs(table - before[table_path]).max(axis=1)
    others = np.setdiff1d(np.flatnonzero(moved), rows)  # rows the other texts read moved, at the rest rate
    assert len(others) and moved[rows].max() > 1e-2 and moved[others].max() < moved[rows].max() / 5
    network = [v for v in student.trainable_variables if v.path != table_path]
    assert any(np.abs(v.numpy() - before[v.path]).max() > 1e-6 for v in network)


def test_language_rows_need_training_text_in_their_languages_and_a_trainable_table(synthetic_data, tmp_path):
    from relkt.errors import ConfigError
    from tests.helpers.tiny_muse import tiny_muse_encoder

    teacher = export_encoder(tiny_muse_encoder(freeze_token_embedding=True), tmp_path / "teacher")
    cfg = student_config(
        tmp_path, synthetic_data, teacher, **{"teacher.spec": f"muse:{teacher}", "student.language_rows.langs": ["el"]}
    )
    with pytest.raises(ConfigError, match="no training example in el"):
        StudentTrainer(load_config(StudentConfig, cfg))
    for setting in (
        {"language_rows": {"langs": ["de"]}},
        {"extend_vocab": {"enabled": True, "new_rows_lr_multiplier": 5.0}},
    ):
        frozen = student_config(
            tmp_path,
            synthetic_data,
            teacher,
            **{"teacher.spec": f"muse:{teacher}", "student": {"options": {"freeze_token_embedding": True}, **setting}},
        )
        with pytest.raises(ConfigError, match="token table is frozen"):
            StudentTrainer(load_config(StudentConfig, frozen))


@pytest.mark.parametrize("freeze", [True, False])
def test_rows_a_replayed_language_reads_stay_frozen_when_its_pairs_are_all_the_run_holds_of_it(tmp_path, freeze):
    """freeze_replayed_rows: a language replayed from pairs alone (the training pool holds only en and th) counts as
    the others: at max_other_count 1 no chosen row is one its texts read, so Thai text the German pairs also spell
    stays frozen. Off, only the pool and the English sources count, and those rows train."""
    from relkt.encoders.language_rows import row_counts
    from tests.helpers.data import SYNTH_WORDS, make_synthetic_lareqa, render
    from tests.helpers.tiny_muse import WORDS, tiny_muse_encoder

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    shared = render("th", SYNTH_WORDS[:4])  # Thai text the Thai pool's questions and answers also read
    rows = [f"t\t{WORDS['en'][i]}\t{WORDS['de'][i]} {shared}\n" for i in range(10)]
    (corpus / "de.tsv").write_text("source\ten\txx\n" + "".join(rows), encoding="utf-8")
    data = make_synthetic_lareqa(tmp_path / "data", langs=("en", "th"))
    teacher = export_encoder(tiny_muse_encoder(), tmp_path / "teacher")
    cfg = student_config(
        tmp_path,
        data,
        teacher,
        **{
            "teacher.spec": f"muse:{teacher}",
            "student": {"language_rows": {"langs": ["th"], "max_other_count": 1, "freeze_replayed_rows": freeze}},
            "data.student_langs": ["de", "th"],
            "data.corpus_dir": str(corpus),
            "data.corpus_pairs_per_lang": 8,
            "data.corpus_dev_pairs": 2,
            "eval.primary_metric": "xx_en/th/P@1",
        },
    )
    trainer = StudentTrainer(load_config(StudentConfig, cfg))
    ex, student = trainer.examples, trainer.student
    german = [ex.q_target[i] for i, x in enumerate(ex.lang) if x == "de"]
    thai = [ex.q_target[i] for i, x in enumerate(ex.lang) if x == "th"]
    assert len(german) == 8 and all(shared in t for t in german)
    read_by_german, thai_rows = set(row_counts(student, german)), set(trainer.language_rows.tolist())
    assert set(row_counts(student, thai)) & read_by_german  # Thai reads rows the German pairs read too
    assert thai_rows and bool(thai_rows & read_by_german) is not freeze  # frozen only when asked


def test_replayed_languages_train_on_their_own_share_of_pairs(tmp_path):
    """student.language_rows.replay_pairs_per_lang reaches the trainer: beside Thai's rows, German (replayed, not
    taught) trains on 3 corpus pairs, Thai on data.corpus_pairs_per_lang's 5 (each file: 10 pairs, 2 held out)."""
    from tests.helpers.tiny_muse import WORDS

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for lang in ("de", "th"):
        rows = [f"t\t{WORDS['en'][i]} {WORDS['en'][i + 1]}\t{WORDS[lang][i]} {WORDS[lang][i + 1]}\n" for i in range(10)]
        (corpus / f"{lang}.tsv").write_text("source\ten\txx\n" + "".join(rows), encoding="utf-8")
    pairs = {"corpus_dir": str(corpus), "corpus_pairs_per_lang": 5, "corpus_dev_pairs": 2}
    trainer, _, _ = thai_rows_trainer(tmp_path, data_set=pairs, replay_pairs_per_lang=3)
    ex = trainer.examples
    drawn = Counter(lang for lang, qid in zip(ex.lang, ex.qas_id) if qid.startswith("corpus:"))
    assert drawn == {"th": 5, "de": 3}
