"""Probe set 4 (session 5): destinations, data, model folders, configs, flags, pairs; none of sets 1-3."""

import json
import os
import shutil
import sys

sys.path.insert(0, "/tmp/probe")
from probe import BASE, EVAL, edit, run

E = EVAL
OUT = E + ["--output"]
# ---- output door
run("out via symlinked dir into model", OUT + ["lnk/r.json"], setup=lambda w, o: os.symlink("model", w / "lnk"))
run("out data/../model", OUT + ["data/../model/r.json"])
run("out an existing results dir", OUT + ["res"])


def hard(w, o):
    os.link(w / "notes" / "mine.txt", w / "res" / "h.json")


run("out hardlink to user file", OUT + ["res/h.json"], setup=hard)
run("out 300-byte greek name", OUT + ["α" * 150 + ".json"])
run("out user dir trailing slash", OUT + ["notes/"])
run("out /dev/stdout", OUT + ["/dev/stdout"])
run(
    "coverage out a results folder",
    [
        "-m",
        "relkt.cli",
        "coverage",
        "--encoder",
        "a=hub:model",
        "--data-dir",
        "data",
        "--split",
        "all",
        "--output",
        "res",
    ],
)
run(
    "interpolate out data",
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
        "--output",
        "data",
    ],
)
run(
    "debias out user folder",
    ["-m", "relkt.cli", "debias", "--encoder", "hub:model", "--pairs-dir", "pairs", "--output", "notes"],
    setup=lambda w, o: shutil.copytree("/tmp/probe/pairs2", w / "pairs"),
)
run(
    "teach out results folder",
    ["-m", "relkt.cli", "teach", "--langs", "de", "--pairs-dir", "pairs", "--output", "res"],
    setup=lambda w, o: shutil.copytree("/tmp/probe/pairs2", w / "pairs"),
)
T = [
    "-m",
    "relkt.train_teacher",
    "--set",
    "data.data_dir=data",
    "--set",
    "encoder.spec=hub:model",
    "--set",
    "verbose=0",
]
run("teacher output_dir user folder", T + ["--set", "output_dir=notes"])
run(
    "student output_dir data",
    ["-m", "relkt.train_student", "--set", "output_dir=data", "--set", "teacher.spec=hub:model"],
)
SET = ["--setups", "/work/main/configs/setups.yaml"]


def runs_file(w, o):
    (w / "runs").mkdir()
    (w / "runs" / "quickstart").write_text("mine\n")


run("reproduce runs/quickstart a user file", ["-m", "relkt.cli", "reproduce", "quickstart", *SET], setup=runs_file)


def runs_user(w, o):
    (w / "runs" / "quickstart" / "teacher").mkdir(parents=True)
    (w / "runs" / "quickstart" / "teacher" / "x.txt").write_text("mine\n")


run("reproduce teacher folder a user's", ["-m", "relkt.cli", "reproduce", "quickstart", *SET], setup=runs_user)


# ---- read door: data
def raw(text, name="en.json", binary=False):
    def s(w, o):
        p = w / "data" / name
        p.write_bytes(text) if binary else p.write_text(text)

    return s


en = (BASE / "data" / "en.json").read_bytes()
run("data BOM", OUT + ["r.json"], setup=raw(b"\xef\xbb\xbf" + en, binary=True), expect="either")
run("data 'data' a dict", OUT + ["r.json"], setup=raw('{"version": "1", "data": {}}'))
run(
    "data en.json -> /dev/zero",
    OUT + ["r.json"],
    setup=lambda w, o: ((w / "data" / "en.json").unlink(), os.symlink("/dev/zero", w / "data" / "en.json")),
)
run("data en.json empty", OUT + ["r.json"], setup=raw(""))


def ws_q(d):
    d[0]["paragraphs"][0]["qas"][0]["question"] = "   \t "


run("question whitespace only", OUT + ["r.json"], setup=edit(ws_q))


def far(d):
    d[0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = 10**6


run("answer_start past context", OUT + ["r.json"], setup=edit(far))


def huge(d):
    d[0]["paragraphs"][0]["qas"][0]["answers"][0]["answer_start"] = 10**400


run("answer_start 10**400", OUT + ["r.json"], setup=edit(huge))


def empty_ctx(d):
    d[0]["paragraphs"][0]["context"] = ""


run("context empty", OUT + ["r.json"], setup=edit(empty_ctx))
run("title lone surrogate", OUT + ["r.json"], setup=raw(en.decode().replace('"title": "', '"title": "\\ud800', 1)))
run(
    "zz.json a language?",
    OUT + ["r.json"],
    setup=lambda w, o: shutil.copy(w / "data" / "de.json", w / "data" / "zz.json"),
    expect="either",
)
run(
    "en.json and en.jsonl",
    OUT + ["r.json"],
    setup=lambda w, o: (w / "data" / "en.jsonl").write_text('{"question": "a"}\n'),
)


# ---- model folders
def rj(fn):
    def s(w, o):
        p = w / "model" / "relkt.json"
        d = json.loads(p.read_text())
        fn(d)
        p.write_text(json.dumps(d))

    return s


run("relkt.json unknown key", OUT + ["r.json"], setup=rj(lambda d: d.__setitem__("zzz", 1)), expect="either")
run(
    "relkt.json dim 1e309",
    OUT + ["r.json"],
    setup=lambda w, o: (w / "model" / "relkt.json").write_text(
        (w / "model" / "relkt.json").read_text().replace('"dim": 8', '"dim": 1e309')
    ),
)
run(
    "saved_model.pb -> data file",
    OUT + ["r.json"],
    setup=lambda w, o: (
        (w / "model" / "saved_model.pb").unlink(),
        os.symlink(w / "data" / "en.json", w / "model" / "saved_model.pb"),
    ),
)


def cut_index(w, o):
    p = w / "model" / "variables" / "variables.index"
    p.write_bytes(p.read_bytes()[:20])


run("variables.index cut", OUT + ["r.json"], setup=cut_index)
run(
    "encoder hub:/dev/null",
    E[:3] + ["--encoder", "hub:/dev/null", "--data-dir", "data", "--split", "all", "--output", "r.json"],
)
run(
    "encoder nosuch:foo",
    E[:3] + ["--encoder", "nosuch:foo", "--data-dir", "data", "--split", "all", "--output", "r.json"],
)


# ---- configs
def cfg(text, name="t.yaml"):
    def s(w, o):
        (w / name).write_text(text)

    return s


TC = ["-m", "relkt.train_teacher", "--config", "t.yaml", "--print-config"]
run("config duplicate key", TC, setup=cfg("seed: 1\nseed: 2\n"))
run("config python tag", TC, setup=cfg("seed: !!python/object/apply:os.system ['touch /tmp/probe/outside/pwn']\n"))
run(
    "config base loop",
    TC,
    setup=lambda w, o: ((w / "t.yaml").write_text("base: u.yaml\n"), (w / "u.yaml").write_text("base: t.yaml\n")),
)
run("config 30 MB", TC, setup=cfg("seed: 1\n# " + "x" * 30_000_000 + "\n"), expect="either")
P = ["-m", "relkt.train_teacher", "--print-config", "--set"]
run("set lr nan", P + ["schedule.learning_rate=nan"])
run("set lr -1", P + ["schedule.learning_rate=-1"])
run("set eval.max_questions 0", P + ["eval.max_questions=0"], expect="either")
run(
    "set data_dir /dev/null",
    ["-m", "relkt.train_teacher", "--set", "data.data_dir=/dev/null", "--set", "output_dir=run"],
)
# ---- flags
run("langs empty", E + ["--langs", "", "--output", "r.json"])
run("langs en,,de", E + ["--langs", "en,,de", "--output", "r.json"])
run("langs en-US", E + ["--langs", "en-US", "--output", "r.json"])
run("split bogus", E[:-2] + ["--split", "bogus", "--output", "r.json"])
run(
    "interpolate alphas 1.5",
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
        "1.5",
        "--output",
        "mix",
    ],
)
run(
    "interpolate alphas nan",
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
        "nan",
        "--output",
        "mix",
    ],
)
run(
    "debias rank 100000",
    [
        "-m",
        "relkt.cli",
        "debias",
        "--encoder",
        "hub:model",
        "--pairs-dir",
        "pairs",
        "--rank",
        "100000",
        "--output",
        "deb",
    ],
    setup=lambda w, o: shutil.copytree("/tmp/probe/pairs2", w / "pairs"),
)
run(
    "reproduce seed 10**20",
    ["-m", "relkt.cli", "reproduce", "quickstart", *SET, "--seed", "99999999999999999999", "--dry-run"],
)
run("reproduce seed -1", ["-m", "relkt.cli", "reproduce", "quickstart", *SET, "--seed", "-1", "--dry-run"])


# ---- pair files
def pairs(content, binary=False):
    def s(w, o):
        (w / "pairs").mkdir()
        p = w / "pairs" / "de.tsv"
        p.write_bytes(content) if binary else p.write_text(content)

    return s


good = open("/tmp/probe/pairs2/de.tsv").read()
C = ["-m", "relkt.cli", "coverage", "--encoder", "a=hub:model", "--pairs-dir", "pairs", "--output", "cov"]
run("pairs latin-1", C, setup=pairs(good.replace("Zahl", "Zähl").encode("latin-1"), binary=True))
run("pairs 4 columns", C, setup=pairs(good.replace("\n", "\textra\n")))
run("pairs CRLF", C, setup=pairs(good.replace("\n", "\r\n")), expect="either")
run("pairs header only", C, setup=pairs("source\ten\txx\n"))
