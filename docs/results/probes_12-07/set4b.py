import os
import sys

sys.path.insert(0, "/tmp/probe")
from probe import EVAL, run

E = EVAL
run(
    "split bogus",
    [
        "-m",
        "relkt.cli",
        "evaluate",
        "--encoder",
        "hub:model",
        "--data-dir",
        "data",
        "--split",
        "bogus",
        "--output",
        "r.json",
    ],
)
good = open("/tmp/probe/pairs2/de.tsv").read()


def pairs(content, binary=False):
    def s(w, o):
        (w / "pairs").mkdir()
        p = w / "pairs" / "de.tsv"
        p.write_bytes(content) if binary else p.write_text(content)

    return s


C = [
    "-m",
    "relkt.cli",
    "coverage",
    "--encoder",
    "a=hub:model",
    "--pairs-dir",
    "pairs",
    "--langs",
    "de",
    "--output",
    "cov",
]
run("pairs latin-1", C, setup=pairs(good.replace("Zahl", "Zähl").encode("latin-1"), binary=True))
run("pairs 4 columns", C, setup=pairs(good.replace("\n", "\textra\n")))
run("pairs CRLF", C, setup=pairs(good.replace("\n", "\r\n")), expect="either")
run("pairs header only", C, setup=pairs("source\ten\txx\n"))
run(
    "pairs same text both sides",
    C,
    setup=pairs("source\ten\txx\n" + "".join(f"t\tthe same {i}\tthe same {i}\n" for i in range(80))),
    expect="either",
)
run(
    "coverage out into teach-like folder kind",
    C,
    setup=lambda w, o: (
        pairs(good)(w, o),
        (w / "cov").mkdir(),
        (w / "cov" / "relkt.json").write_text('{"kind": "export"}'),
    ),
)
run(
    "record input a FIFO",
    [
        "-m",
        "relkt.cli",
        "record",
        "fifo.json",
        "--setup",
        "s",
        "--model",
        "m",
        "--pool",
        "p",
        "--chapter",
        "docs/x.md",
        "--output",
        "rec.json",
    ],
    setup=lambda w, o: os.mkfifo(w / "fifo.json"),
    timeout=100,
)
run("compare a directory", ["/work/main/trainers/compare.py", "res", "res/a.json"])
run(
    "tables root a FIFO",
    ["-m", "relkt.cli", "tables", "--root", "fifo"],
    setup=lambda w, o: os.mkfifo(w / "fifo"),
    timeout=100,
)
run(
    "evaluate config a FIFO",
    ["-m", "relkt.cli", "evaluate", "--encoder", "hub:model", "--config", "fifo", "--output", "r.json"],
    setup=lambda w, o: os.mkfifo(w / "fifo"),
    timeout=100,
)
run("evaluate output under a file", E + ["--output", "notes/mine.txt/r.json"])
run("evaluate output in /proc", E + ["--output", "/proc/self/r.json"])
run("evaluate langs en,,de", E + ["--langs", "en,,de", "--output", "r.json"])
run(
    "answer_start 10**400 line",
    E + ["--output", "r.json"],
    setup=__import__("probe").edit(
        lambda d: d[0]["paragraphs"][0]["qas"][0]["answers"][0].__setitem__("answer_start", 10**400)
    ),
)
