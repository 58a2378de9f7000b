"""Probe set 5 (session 5, after set 4's fixes): none of sets 1-4."""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, "/tmp/probe")
from probe import EVAL, run

E = EVAL
OUT = E + ["--output"]
pairs2 = "/tmp/probe/pairs2"


def with_pairs(w, o):
    shutil.copytree(pairs2, w / "pairs")


# outputs
run(
    "teach out a coverage report folder",
    ["-m", "relkt.cli", "teach", "--langs", "de", "--pairs-dir", "pairs", "--output", "cov"],
    setup=lambda w, o: (with_pairs(w, o), (w / "cov").mkdir(), (w / "cov" / "report.md").write_text("# mine\n")),
)
run(
    "debias out a copy of an export",
    ["-m", "relkt.cli", "debias", "--encoder", "hub:model", "--pairs-dir", "pairs", "--output", "model2"],
    setup=lambda w, o: (with_pairs(w, o), shutil.copytree(w / "model", w / "model2")),
    expect="either",
)
run("evaluate out a relkt export folder's file name", OUT + ["model"])


# reads
def sparse(w, o):
    subprocess.run(["truncate", "-s", "1100M", str(w / "data" / "de.json")], check=True)


run("data file 1.1 GB sparse", OUT + ["r.json"], setup=sparse, timeout=200)


def rj_link(w, o):
    (w / "model" / "relkt.json").unlink()
    os.symlink("/dev/zero", w / "model" / "relkt.json")


run("relkt.json -> /dev/zero", OUT + ["r.json"], setup=rj_link)


def var_loop(w, o):
    shutil.rmtree(w / "model" / "variables")
    os.symlink("variables", w / "model" / "variables")


run("variables a link loop", OUT + ["r.json"], setup=var_loop)
run(
    "muse: on an ngram export",
    E[:3] + ["--encoder", "muse:model", "--data-dir", "data", "--split", "all", "--output", "r.json"],
)
run(
    "bert: on an ngram export",
    E[:3] + ["--encoder", "bert:model", "--data-dir", "data", "--split", "all", "--output", "r.json"],
)


def aliases(w, o):
    (w / "t.yaml").write_text("x: &a 1\n" + "".join(f"k{i}: *a\n" for i in range(300)))


run("config 300 aliases", ["-m", "relkt.train_teacher", "--config", "t.yaml", "--print-config"], setup=aliases)


def setups(text):
    def s(w, o):
        (w / "s.yaml").write_text(text)

    return s


run(
    "setups teacher /etc/passwd",
    ["-m", "relkt.cli", "reproduce", "x", "--setups", "s.yaml", "--dry-run"],
    setup=setups(
        "x:\n  status: check\n  about: a\n  recipe: pipeline\n"
        "  teacher: /etc/passwd\n  student: /etc/passwd\n  zero_shot: ngram\n"
    ),
)
run(
    "setups status bogus",
    ["-m", "relkt.cli", "reproduce", "--list", "--setups", "s.yaml"],
    setup=setups("x:\n  status: bogus\n  about: a\n  recipe: pipeline\n  teacher: a.yaml\n  student: b.yaml\n"),
)
run(
    "setups key twice",
    ["-m", "relkt.cli", "reproduce", "--list", "--setups", "s.yaml"],
    setup=setups("x:\n  status: check\n  status: paper\n  about: a\n  recipe: pipeline\n"),
)


def bad_record(w, o):
    d = w / "docs" / "results" / "records" / "s"
    d.mkdir(parents=True)
    (d / "r.json").write_text('{"setup": "s", "setup": "t"}')
    (w / "README.md").write_text("# x\n<!-- records table -->\n<!-- end of records table -->\n")


run("tables a record with a key twice", ["-m", "relkt.cli", "tables", "--root", "."], setup=bad_record)
# flags
run("max-length 0", OUT + ["r.json", "--max-length", "0"])
run("xx-en-unit sentence", E[:-3] + ["--xx-en-unit", "sentence", "--no-progress", "--output", "r.json"])
run("xx-en-unit article twice", E[:-3] + ["--xx-en-unit", "article,article", "--no-progress", "--output", "r.json"])
run(
    "teach langs en",
    ["-m", "relkt.cli", "teach", "--langs", "en", "--pairs-dir", "pairs", "--output", "t"],
    setup=with_pairs,
)
run(
    "teach controls overlap langs",
    ["-m", "relkt.cli", "teach", "--langs", "de", "--controls", "de", "--pairs-dir", "pairs", "--output", "t"],
    setup=with_pairs,
)
run(
    "interpolate alphas twice",
    [
        "-m",
        "relkt.cli",
        "interpolate",
        "--teacher",
        "hub:model",
        "--student",
        "hub:model",
        "--data-dir",
        "data",
        "--alphas",
        "0.5,0.5",
        "--output",
        "mix",
    ],
)
run(
    "record pool empty",
    [
        "-m",
        "relkt.cli",
        "record",
        "res/a.json",
        "--setup",
        "s",
        "--model",
        "m",
        "--pool",
        "",
        "--chapter",
        "docs/x.md",
        "--output",
        "rec.json",
    ],
)
run("set lr 1e400", ["-m", "relkt.train_teacher", "--print-config", "--set", "schedule.learning_rate=1e400"])
run("set output_dir empty", ["-m", "relkt.train_teacher", "--print-config", "--set", "output_dir="])
run(
    "set split_fractions two",
    ["-m", "relkt.train_teacher", "--print-config", "--set", "data.split_fractions=[0.5,0.5]"],
)
run("set a list into a section", ["-m", "relkt.train_teacher", "--print-config", "--set", "schedule=[1,2]"])
