"""A set of bad inputs tried as a new user (or an attacker) would, each through the command line in its own copy of a
tiny workspace: every one must end in one clear line (or run, where the input is allowed), lose nothing relkt did not
write, and write nothing outside the place named. The figures of a run of this set are in
docs/results/bad_input_probes.md."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from relkt.io import RUN_LOCK, RUN_MARKER

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "TF_CPP_MIN_LOG_LEVEL": "3"}
NOISE = ("I0000", "W0000", "E0000", "To enable", "WARNING", "INFO")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder
    from tests.helpers.data import make_synthetic_lareqa

    root = tmp_path_factory.mktemp("base")
    make_synthetic_lareqa(root / "data")
    export_encoder(NgramEncoder(dim=8, num_buckets=128), root / "model")
    return root


def evaluate(*extra: str) -> list[str]:
    return ["-m", "relkt.cli", "evaluate", "--encoder", "hub:model", "--data-dir", "data", "--split", "all"] + [
        "--xx-en-unit",
        "none",
        "--no-progress",
        *extra,
    ]


TEACH = ["-m", "relkt.train_teacher", "--config", "t.yaml"]


def teacher_config(w: Path, **changes) -> None:
    config = {
        "output_dir": "runs/t",
        "verbose": 0,
        "data": {"data_dir": "data", "train_langs": ["en"], "answer_langs": ["en"]},
        "encoder": {"spec": "ngram", "options": {"dim": 8, "num_buckets": 128}},
        "mining": {"bm25_epochs": 1, "online_epochs": 0, "bm25_top_end": 10},
        "triplet": {"batch_size": 4},
        "eval": {"every_steps": 5, "primary_metric": "lareqa/mAP"},
    }
    for key, value in changes.items():
        *head, last = key.split(".")
        node = config
        for h in head:
            node = node.setdefault(h, {})
        node[last] = value
    (w / "t.yaml").write_text(yaml.safe_dump(config))


def edit_squad(change):
    def setup(w: Path) -> None:
        doc = json.loads((w / "data" / "en.json").read_text())
        change(doc["data"])
        (w / "data" / "en.json").write_text(json.dumps(doc))

    return setup


def first_qa(data: list) -> dict:
    return data[0]["paragraphs"][0]["qas"][0]


def edit_metadata(**changes):
    def setup(w: Path) -> None:
        meta = json.loads((w / "model" / "relkt.json").read_text())
        (w / "model" / "relkt.json").write_text(json.dumps({**meta, **changes}))

    return setup


def user_folder(name: str):
    def setup(w: Path) -> None:
        (w / name).mkdir()
        (w / name / "keep.txt").write_text("mine")

    return setup


def user_file(w: Path) -> None:
    (w / "notes.txt").write_text("mine")


def live_run(w: Path) -> None:
    """runs/live: a run folder whose lock a process holds, as a training trainer does."""
    run = w / "runs" / "live"
    run.mkdir(parents=True)
    (run / RUN_MARKER).write_text("{}")
    (run / RUN_LOCK).write_text("")
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import fcntl, time; f = open({str(run / RUN_LOCK)!r}); fcntl.flock(f, 2); time.sleep(300)",
        ]
    )
    for _ in range(100):  # until the holder has the lock
        with open(run / RUN_LOCK) as f:
            try:
                fcntl.flock(f, fcntl.LOCK_SH | fcntl.LOCK_NB)
                fcntl.flock(f, fcntl.LOCK_UN)
            except BlockingIOError:
                break
        time.sleep(0.1)
    w.joinpath(".holder").write_text(str(holder.pid))


def results_then_user_file(w: Path) -> None:
    subprocess.run([sys.executable, *evaluate("--output", "a.json")], cwd=w, env=ENV, capture_output=True, check=True)
    user_file(w)


def pair_files(w: Path) -> None:
    (w / "pairs").mkdir()
    rows = "".join(f"s\tthe cat number {i}\tdie katze nummer {i}\n" for i in range(40))
    (w / "pairs" / "de.tsv").write_text("source\ten\txx\n" + rows)


# (name, argv after `python`, setup, where relkt may write, whether the input is allowed)
PROBES = [
    ("question text empty", evaluate(), edit_squad(lambda d: first_qa(d).__setitem__("question", "")), None, False),
    (
        "context a number",
        evaluate(),
        edit_squad(lambda d: d[0]["paragraphs"][0].__setitem__("context", 12)),
        None,
        False,
    ),
    ("answers empty", evaluate(), edit_squad(lambda d: first_qa(d).__setitem__("answers", [])), None, False),
    (
        "an id twice in a file",
        evaluate(),
        edit_squad(lambda d: d[1]["paragraphs"][0]["qas"][0].__setitem__("id", first_qa(d)["id"])),
        None,
        False,
    ),
    (
        "sentence_breaks as strings",
        evaluate(),
        edit_squad(lambda d: d[0]["paragraphs"][0].__setitem__("sentence_breaks", [["0", "5"]])),
        None,
        False,
    ),
    ("data not a list", evaluate(), lambda w: (w / "data" / "en.json").write_text('{"data": {"x": 1}}'), None, False),
    ("paragraphs missing", evaluate(), edit_squad(lambda d: d[0].pop("paragraphs")), None, False),
    ("file not JSON", evaluate(), lambda w: (w / "data" / "en.json").write_text("{not json"), None, False),
    ("file empty", evaluate(), lambda w: (w / "data" / "en.json").write_text(""), None, False),
    ("file not UTF-8", evaluate(), lambda w: (w / "data" / "en.json").write_bytes(b'{"data": "caf\xe9"}'), None, False),
    (
        "file name upper-case (a code, lower-cased)",
        evaluate(),
        lambda w: (w / "data" / "en.json").rename(w / "data" / "EN.json"),
        None,
        True,
    ),
    (
        "answer_start negative",
        evaluate(),
        edit_squad(lambda d: first_qa(d)["answers"][0].__setitem__("answer_start", -3)),
        None,
        False,
    ),
    (
        "answer_start past the end",
        evaluate(),
        edit_squad(lambda d: first_qa(d)["answers"][0].__setitem__("answer_start", 10**6)),
        None,
        False,
    ),
    ("no data file", evaluate(), lambda w: [p.unlink() for p in (w / "data").iterdir()], None, False),
    ("--batch-size 0", evaluate("--batch-size", "0"), None, None, False),
    ("--langs a comma", evaluate("--langs", ","), None, None, False),
    ("--langs not in the data", evaluate("--langs", "fr"), None, None, False),
    ("--encoder hub: empty", evaluate("--encoder", "hub:"), None, None, False),
    ("--encoder muse:FILE", evaluate("--encoder", "muse:data/en.json"), None, None, False),
    ("--evaluator unknown", evaluate("--evaluator", "nope"), None, None, False),
    ("--split unknown", evaluate("--split", "bogus"), None, None, False),
    ("relkt.json dim edited", evaluate(), edit_metadata(dim=99), None, False),
    ("relkt.json answer_context negative", evaluate(), edit_metadata(answer_context={"weight": -1}), None, False),
    (
        "answer_context with with_context",
        TEACH,
        lambda w: teacher_config(
            w, objective="in_batch", **{"in_batch.answer_context": True, "data.with_context": True}
        ),
        None,
        False,
    ),
    (
        "context_weight negative",
        TEACH,
        lambda w: teacher_config(w, objective="in_batch", **{"in_batch.context_weight": -0.5}),
        None,
        False,
    ),
    (
        "answer_context a string",
        TEACH,
        lambda w: teacher_config(w, objective="in_batch", **{"in_batch.answer_context": "yes"}),
        None,
        False,
    ),
    ("eval.evaluators unknown", TEACH, lambda w: teacher_config(w, **{"eval.evaluators": ["toy"]}), None, False),
    (
        "a key twice in a config",
        TEACH,
        lambda w: (teacher_config(w), (w / "t.yaml").write_text((w / "t.yaml").read_text() + "seed: 1\nseed: 2\n")),
        None,
        False,
    ),
    ("--set seed=-1", [*TEACH, "--set", "seed=-1"], teacher_config, None, False),
    ("--set two split fractions", [*TEACH, "--set", "data.split_fractions=[0.5,0.5]"], teacher_config, None, False),
    ("reproduce --seed x", ["-m", "relkt.cli", "reproduce", "quickstart", "--seed", "x"], None, None, False),
    ("reproduce outside a checkout", ["-m", "relkt.cli", "reproduce", "nope", "--dry-run"], None, None, False),
    ("evaluate --output onto a user's file", evaluate("--output", "notes.txt"), user_file, "notes.txt", False),
    ("evaluate --output a folder", evaluate("--output", "data"), None, "data", False),
    (
        "evaluate --output inside a live run",
        evaluate("--output", "runs/live/r.json"),
        live_run,
        "runs/live/r.json",
        False,
    ),
    (
        "coverage --output inside a live run",
        ["-m", "relkt.cli", "coverage", "--encoder", "a=hub:model", "--data-dir", "data", "--output", "runs/live/cov"],
        live_run,
        "runs/live/cov",
        False,
    ),
    (
        "coverage --output holding a link",
        ["-m", "relkt.cli", "coverage", "--encoder", "a=hub:model", "--data-dir", "data", "--output", "cov"],
        lambda w: (user_file(w), (w / "cov").mkdir(), (w / "cov" / "report.md").symlink_to(w / "notes.txt")),
        "cov",
        False,
    ),
    (
        "interpolate --output a user's folder",
        ["-m", "relkt.cli", "interpolate", "--teacher", "ngram", "--student", "ngram", "--output", "mine"],
        user_folder("mine"),
        "mine",
        False,
    ),
    (
        "debias --output a user's folder",
        [
            "-m",
            "relkt.cli",
            "debias",
            "--encoder",
            "hub:model",
            "--pairs-dir",
            "pairs",
            "--rank",
            "1",
            "--output",
            "mine",
        ],
        lambda w: (user_folder("mine")(w), pair_files(w)),
        "mine",
        False,
    ),
    (
        "compare --output a user's file",
        [str(ROOT / "trainers" / "compare.py"), "a.json", "a.json", "--output", "notes.txt"],
        results_then_user_file,
        "notes.txt",
        False,
    ),
    (
        "teacher output_dir a user's folder",
        TEACH,
        lambda w: (teacher_config(w, output_dir="mine"), user_folder("mine")(w)),
        "mine",
        False,
    ),
]


def files(root: Path) -> dict[str, str]:
    """Every file and link under `root`, by path: its content's digest, or where the link points."""
    out = {}
    for p in sorted(root.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(root))] = "-> " + os.readlink(p)
        elif p.is_file() and p.name != ".holder":
            out[str(p.relative_to(root))] = hashlib.sha1(p.read_bytes()).hexdigest()
    return out


@pytest.mark.slow  # 41 processes, each loading TensorFlow: a few minutes
@pytest.mark.parametrize("name, argv, setup, named, allowed", PROBES, ids=[p[0] for p in PROBES])
def test_a_bad_input_ends_in_one_clear_line_and_loses_nothing(base, tmp_path, name, argv, setup, named, allowed):
    w = tmp_path / "w"
    shutil.copytree(base, w)
    if setup is not None:
        setup(w)
    before = files(w)
    try:
        done = subprocess.run([sys.executable, *argv], cwd=w, env=ENV, capture_output=True, text=True, timeout=600)
    finally:
        holder = w / ".holder"
        if holder.exists():
            os.kill(int(holder.read_text()), 9)
    after = files(w)
    assert "Traceback" not in done.stdout + done.stderr, done.stderr[-2000:]
    lost = [p for p, digest in before.items() if after.get(p) != digest]
    assert not lost, f"changed or removed: {lost}"
    outside = [p for p in after if p not in before and not (named and p.startswith(named)) and not p.startswith("runs")]
    assert not outside, f"written outside the place named: {outside}"
    said = [line for line in done.stderr.splitlines() if line.strip() and not line.startswith(NOISE)]
    if allowed:
        assert done.returncode == 0, said[-3:]
    else:
        assert done.returncode in (1, 2), f"accepted without a word: {said[-3:]}"
        assert len(said) == 1, said
