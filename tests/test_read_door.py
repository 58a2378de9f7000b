"""One door for reading: every file relkt reads is opened through relkt.io's read helpers (a test that walks the
source fails on a read that bypasses them), and through them a FIFO, a key given twice, a document nested too deep, a
YAML alias bomb, UTF-16 text and a lone surrogate each end in one error naming the file."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from relkt.errors import ConfigError, DataError, RelktError

ROOT = Path(__file__).resolve().parents[1]
# reads that bypass the door; a JSON string parse that is no file (an environment variable, relkt's own JSON) is fine
BYPASS = re.compile(
    r"json\.loads?\((?!os\.environ|json_text)|yaml\.(safe_)?load\(|\.read_text\(|\.read_bytes\(|np\.load\("
    r"|(?<![\w.])(?<!def )open\((?![^)]*[\"']w)"
)
ALLOWED = {"relkt/io.py"}
# files streamed block by block or line by line after the door's regular_file check (or rglob's is_file) on that path
STREAMED = {
    ("relkt/data/parallel_corpus.py", 'with open(path, "rb") as f:'),
    ("relkt/jobs/record.py", 'with open(path, "rb") as f:'),
}


def test_every_read_passes_the_door():
    bypass = []
    for path in sorted((ROOT / "relkt").rglob("*.py")):
        name = path.relative_to(ROOT).as_posix()
        if name in ALLOWED:
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if (name, line.strip()) in STREAMED:
                continue
            if BYPASS.search(line) and "yaml.safe_load(raw)" not in line:  # a --set value: a string, not a file
                bypass.append(f"{name}:{number}: {line.strip()}")
    assert not bypass, "read through relkt.io.read_json / read_yaml / read_text / read_bytes:\n" + "\n".join(bypass)


def test_the_bypass_pattern_catches_a_plain_read():
    assert BYPASS.search('doc = json.loads(path.read_text(encoding="utf-8"))')
    assert BYPASS.search("data = yaml.safe_load(open(p))")
    assert not BYPASS.search('cluster = json.loads(os.environ.get("TF_CONFIG", "{}"))')
    assert BYPASS.search("with np.load(path) as z:")
    assert BYPASS.search('with open(path, "rb") as f:') and BYPASS.search("with open(path) as f:")
    assert not BYPASS.search('with open(tmp / "arrays.npz", "wb") as f:')
    assert not BYPASS.search("fd = os.open(path, flags)")


def fifo(tmp_path: Path, name: str) -> Path:
    path = tmp_path / name
    os.mkfifo(path)
    return path


def hostile(tmp_path: Path, suffix: str) -> dict[str, Path]:
    """The same document kinds made hostile: each must be refused with one error naming its file."""
    files = {"fifo": fifo(tmp_path, f"pipe{suffix}")}
    if suffix == ".json":
        files["twice"] = tmp_path / "twice.json"
        files["twice"].write_text('{"data": [], "data": [1]}')
        files["deep"] = tmp_path / "deep.json"
        files["deep"].write_text("[" * 5000 + "]" * 5000)
        files["surrogate"] = tmp_path / "surrogate.json"
        files["surrogate"].write_text('{"data": "\\ud800"}')
        files["utf16"] = tmp_path / "utf16.json"
        files["utf16"].write_bytes('{"data": []}'.encode("utf-16"))
    else:
        files["twice"] = tmp_path / "twice.yaml"
        files["twice"].write_text("seed: 1\nseed: 2\n")
        files["bomb"] = tmp_path / "bomb.yaml"  # 9 aliases a level, 9 levels: 9^9 values from 90 lines
        rows = ["l0: &l0 [x, x, x, x, x, x, x, x, x]"]
        rows += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
        files["bomb"].write_text("\n".join(rows) + "\n")
        files["deep"] = tmp_path / "deep.yaml"
        files["deep"].write_text("a: " + "[" * 3000 + "]" * 3000 + "\n")
    return files


@pytest.mark.parametrize("case", ["fifo", "twice", "deep", "surrogate", "utf16"])
def test_a_squad_file_is_read_through_the_door(tmp_path, case):
    from relkt.data.squad_reader import read_squad_file

    path = hostile(tmp_path, ".json")[case]
    with pytest.raises(DataError) as e:
        read_squad_file(path, "en")
    assert str(path) in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("case", ["fifo", "twice", "bomb", "deep"])
def test_a_config_is_read_through_the_door(tmp_path, case):
    from relkt.config.config_io import read_config_file

    path = hostile(tmp_path, ".yaml")[case]
    with pytest.raises(ConfigError) as e:
        read_config_file(path)
    assert str(path) in str(e.value)


def test_a_config_whose_base_is_a_device_is_one_line_not_a_read_forever(tmp_path):
    from relkt.config.config_io import read_config_file

    path = tmp_path / "config.yaml"
    path.write_text("base: /dev/zero\noutput_dir: runs/x\n")
    with pytest.raises(ConfigError, match=r"/dev/zero: a device, not a regular config file"):
        read_config_file(path)


def test_a_setup_named_twice_is_refused(tmp_path):
    from relkt.recipes.setups import load_setups

    path = tmp_path / "setups.yaml"
    path.write_text("a:\n  recipe: steps\n  steps: lareqa\na:\n  recipe: steps\n  steps: lareqa\n")
    with pytest.raises(ConfigError, match="appears twice"):
        load_setups(path)


def test_a_json_lines_record_with_a_lone_surrogate_or_a_key_twice_is_refused(tmp_path):
    from relkt.data.jsonl_reader import _records

    row = {"id": "q1", "lang": "en", "question": "why?", "answer": "because", "context": "because."}
    for line in ('{"id": "\\udc00", ' + json.dumps(row)[1:], '{"id": "a", ' + json.dumps(row)[1:]):
        path = tmp_path / "q.jsonl"
        path.write_text(line + "\n")
        with pytest.raises(DataError, match=r"q\.jsonl:1"):
            _records(path)


def test_a_relkt_json_nested_too_deep_is_one_error(tmp_path):
    from relkt.encoders.export import read_metadata

    (tmp_path / "relkt.json").write_text("[" * 3000 + "]" * 3000)
    with pytest.raises(RelktError, match="relkt.json"):
        read_metadata(tmp_path)


@pytest.mark.parametrize("case", ["fifo", "not a zip", "truncated", "pickled objects", "missing"])
def test_an_arrays_file_is_read_through_the_door(tmp_path, case):
    """Per-question files, coverage hits, checkpoints and subspaces are npz files a user can hand relkt: a FIFO, a
    text file, a cut-off archive or an object array each end in one error naming the file, never a hang or a
    traceback; and a per-question file beside a results JSON is recognised only when it is one."""
    from relkt.io import read_npz
    from relkt.metrics.result_files import is_per_question_file, read_per_question

    path = tmp_path / "r.per_question.npz"
    if case == "fifo":
        os.mkfifo(path)
    elif case == "not a zip":
        path.write_text("qas_id,hit\n1,1\n")
    elif case == "truncated":
        import numpy as np

        np.savez(path, qas_id=np.arange(1000), hit=np.ones(1000))
        path.write_bytes(path.read_bytes()[:300])
    elif case == "pickled objects":
        import numpy as np

        np.savez(path, qas_id=np.array([{"a": 1}], dtype=object))
    with pytest.raises(DataError) as e:
        read_npz(path, "per-question file")
    assert str(path) in str(e.value) and "\n" not in str(e.value)
    assert not is_per_question_file(path)
    with pytest.raises(DataError, match=str(path)):
        read_per_question(tmp_path / "r.json")


@pytest.mark.parametrize("field", ["question", "context"])
def test_a_control_character_in_a_text_is_a_damaged_file(tmp_path, field):
    """A NUL inside a question or a context (a bad conversion) is refused naming the field, never encoded; in a pair
    file the line is a bad row, counted with the others before any model loads."""
    from relkt.data.parallel_corpus import read_parallel_tsv
    from relkt.data.squad_reader import read_squad_file
    from tests.helpers.data import squad_json, write_corpus

    doc = squad_json("en")
    paragraph = doc["data"][0]["paragraphs"][0]
    if field == "question":
        paragraph["qas"][0]["question"] = "Where\x00 is it?"
    else:
        paragraph["context"] = paragraph["context"][:3] + "\x07" + paragraph["context"][4:]
    path = tmp_path / "en.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    where = r"data\[0\]\.paragraphs\[0\]\.(qas\[0\]\.)?"
    with pytest.raises(DataError, match=rf"en\.json: {where}{field}: holds a control"):
        read_squad_file(path, "en")
    write_corpus(tmp_path / "pairs", "de", 40)
    pairs = tmp_path / "pairs" / "de.tsv"
    pairs.write_text(pairs.read_text().replace("die Zahl 3 ist", "die\x00Zahl 3 ist"))
    corpus = read_parallel_tsv(pairs, "de", max_bad_share=0.5)
    assert len(corpus.bad_rows) == 1 and "de.tsv:5: holds a control character (U+0000" in corpus.bad_rows[0]
