"""Fresh hostile probes through the CLI, each in its own copy of a tiny workspace; prints one row per probe."""

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, "/work/main")
ROOT = Path("/tmp/probe")
BASE = ROOT / "base"
ENV = {**os.environ, "PYTHONPATH": "/work/main", "TF_CPP_MIN_LOG_LEVEL": "3"}
NOISE = ("I0000", "W0000", "E0000", "To enable", "WARNING", "INFO")


def build():
    if BASE.exists():
        return
    from relkt.encoders.export import export_encoder
    from relkt.encoders.ngram_encoder import NgramEncoder
    from tests.helpers.data import make_synthetic_lareqa

    make_synthetic_lareqa(BASE / "data", n_articles=6)
    export_encoder(NgramEncoder(dim=8, num_buckets=128), BASE / "model")
    (BASE / "notes").mkdir()
    (BASE / "notes" / "mine.txt").write_text("precious\n")


def digests(w):
    out = {}
    for p in sorted(w.rglob("*")):
        if p.is_symlink():
            out[str(p.relative_to(w))] = "link:" + os.readlink(p)
        elif p.is_file():
            out[str(p.relative_to(w))] = hashlib.sha256(p.read_bytes()).hexdigest()[:12]
    return out


EVAL = [
    "-m",
    "relkt.cli",
    "evaluate",
    "--encoder",
    "hub:model",
    "--data-dir",
    "data",
    "--split",
    "all",
    "--xx-en-unit",
    "none",
    "--no-progress",
]


def run(name, argv, setup=None, expect="refuse", timeout=120):
    w = ROOT / "w" / name.replace(" ", "_").replace("/", "_")
    shutil.rmtree(w, ignore_errors=True)
    w.parent.mkdir(exist_ok=True)
    shutil.copytree(BASE, w, symlinks=True)
    outside = ROOT / "outside" / w.name
    shutil.rmtree(outside, ignore_errors=True)
    outside.mkdir(parents=True)
    (outside / "keep.txt").write_text("outside\n")
    if setup:
        setup(w, outside)
    before, before_out = digests(w), digests(outside)
    t = time.time()
    try:
        r = subprocess.run(
            ["nice", "-n", "19", sys.executable, *argv], cwd=w, env=ENV, capture_output=True, text=True, timeout=timeout
        )
        rc, err = r.returncode, r.stderr + r.stdout
    except subprocess.TimeoutExpired:
        rc, err = "HANG", ""
    lines = [x for x in err.splitlines() if x.strip() and not x.startswith(NOISE)]
    after, after_out = digests(w), digests(outside)
    lost = [k for k in before if k not in after or after[k] != before[k]]
    outside_changed = before_out != after_out
    tb = "Traceback" in err
    verdict = "ok"
    if rc == "HANG":
        verdict = "HANG"
    elif outside_changed:
        verdict = "WRITE-OUTSIDE"
    elif lost and expect != "run":
        verdict = "LOSS"
    elif tb:
        verdict = "TRACEBACK"
    elif expect == "refuse" and rc == 0:
        verdict = "SILENT(ran)"
    elif expect == "run" and rc != 0:
        verdict = "REFUSED-ALLOWED"
    last = lines[-1][:230] if lines else ""
    print(
        f"{verdict:14} rc={rc} {time.time() - t:5.1f}s {name}: {last}" + (f" LOST={lost[:3]}" if lost else ""),
        flush=True,
    )
    return w


def edit(fn):
    def setup(w, o):
        p = w / "data" / "en.json"
        doc = json.loads(p.read_text())
        fn(doc["data"])
        p.write_text(json.dumps(doc))

    return setup
