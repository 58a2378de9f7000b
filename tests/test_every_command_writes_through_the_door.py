"""Every registered command (relkt.cli.__main__.COMMANDS, so a new command joins by being registered) is sent to the
same hostile destinations: a user's folder, a user's file, the model it reads, the data it reads, another command's
output folder, a FIFO, a link, a trailing slash on a file's name, a 300-character name (the folders above the named
path are the user's choice; a link below it is refused where relkt writes: tests/test_write_rule.py). Each must end
with one clear `error:` line and leave everything as it was. A test double that writes past the door fails the walk."""

from __future__ import annotations

import importlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from relkt.cli.__main__ import COMMANDS
from relkt.io import claim_dir


@dataclass
class World:
    """What the commands read, made once per test: data, pair files, two tiny exports, a results file, a setups file,
    and the files a user keeps beside them."""

    root: Path
    data: Path
    pairs: Path
    teacher: Path
    student: Path
    results: Path

    def snapshot(self) -> dict[str, bytes | str]:
        out: dict[str, bytes | str] = {}
        for p in sorted(self.root.rglob("*")):
            key = str(p.relative_to(self.root))
            if p.is_symlink():
                out[key] = "link -> " + os.readlink(p)
            elif p.is_fifo():
                out[key] = "fifo"
            elif p.is_file():
                out[key] = p.read_bytes()
            else:
                out[key] = "dir"
        return out


@dataclass(frozen=True)
class Case:
    """How a command names where it writes (`kind`: a file or a folder) and the cheapest line that runs it there."""

    kind: str
    argv: Callable[[World, str], list[str]]
    model: Callable[[World], Path] | None = None  # the model it reads, when it reads one
    data: Callable[[World], Path] | None = None  # the data it reads (default: the QA folder)
    fresh: Callable[[World], Path] | None = None  # a place it may write (default: a new one), for the control
    chdir: bool = False  # the command writes beside the folder it runs in (reproduce: configs/, runs/)
    dry: tuple[str, ...] = ()  # the control's flags: a recipe's dry run checks its plan's run folders, trains nothing


def _setups(world: World, dest: str) -> list[str]:
    """`relkt reproduce` of a one-teacher pipeline whose teacher writes to `dest`."""
    configs = world.root / "configs"
    configs.mkdir(exist_ok=True)
    teacher = {
        "output_dir": dest,
        "verbose": 0,
        "data": {"data_dir": str(world.data), "train_langs": ["en"], "answer_langs": ["en"]},
        "encoder": {"spec": "ngram", "options": {"dim": 8, "num_buckets": 64}},
        "mining": {"bm25_epochs": 1, "online_epochs": 0},
        "triplet": {"batch_size": 4},
    }
    student = {"output_dir": str(world.root / "runs" / "student"), "teacher": {"spec": "muse:x"}}
    (configs / "teacher.yaml").write_text(json.dumps(teacher))
    (configs / "student.yaml").write_text(json.dumps(student))
    setups = {
        "walk": {
            "status": "check",
            "about": "a walk",
            "recipe": "pipeline",
            "teacher": "teacher.yaml",
            "student": "student.yaml",
            "zero_shot": "ngram",
        }
    }
    (configs / "setups.yaml").write_text(json.dumps(setups))
    return ["walk", "--setups", str(configs / "setups.yaml")]


def _checkout(root: Path) -> Path:
    """A checkout whose README and results index hold the records table's markers, and no record yet."""
    from relkt.reports.records_table import BEGIN, END

    (root / "docs" / "results" / "records").mkdir(parents=True)
    for page in (root / "README.md", root / "docs" / "results" / "README.md"):
        page.write_text(f"# a page\n\n{BEGIN}\n{END}\n")
    return root


def _config(world: World, stage: str, dest: str) -> list[str]:
    path = world.root / f"{stage}.yaml"
    config = {"verbose": 0, "data": {"data_dir": str(world.data)}}
    if stage == "teacher":
        config |= {
            "encoder": {"spec": "ngram", "options": {"dim": 8, "num_buckets": 64}},
            "mining": {"bm25_epochs": 1, "online_epochs": 0},
            "triplet": {"batch_size": 4},
        }
    else:
        config |= {"teacher": {"spec": f"muse:{world.teacher}"}, "distill": {"batch_size": 4, "epochs": 1}}
        config["data"]["student_langs"] = ["de"]
    path.write_text(json.dumps(config))
    return ["--config", str(path), "--set", f"output_dir={dest}"]


# command -> how it is walked; a registered command with no case fails the walk (test_every_command_has_a_case)
CASES: dict[str, Case] = {
    "train-teacher": Case("folder", lambda w, d: _config(w, "teacher", d)),
    "train-student": Case("folder", lambda w, d: _config(w, "student", d), model=lambda w: w.teacher),
    "evaluate": Case(
        "file",
        lambda w, d: ["--encoder", f"muse:{w.student}", "--data-dir", str(w.data), "--output", d],
        model=lambda w: w.student,
    ),
    "coverage": Case(
        "folder",
        lambda w, d: ["--encoder", f"a=muse:{w.student}", "--data-dir", str(w.data), "--output", d],
        model=lambda w: w.student,
    ),
    "teach": Case(
        "folder",
        lambda w, d: [
            "--teacher",
            f"muse:{w.teacher}",
            "--langs",
            "de",
            "--pairs-dir",
            str(w.pairs),
            "--qa-dir",
            str(w.data),
            "--set",
            "data.corpus_dev_pairs=10",
            "--output",
            d,
        ],
        model=lambda w: w.teacher,
    ),
    "interpolate": Case(
        "folder",
        lambda w, d: [
            "--teacher",
            f"muse:{w.teacher}",
            "--student",
            f"muse:{w.student}",
            "--data-dir",
            str(w.data),
            "--output",
            d,
        ],
        model=lambda w: w.student,
    ),
    "debias": Case(
        "folder",
        lambda w, d: ["--encoder", f"muse:{w.student}", "--pairs-dir", str(w.pairs), "--output", d],
        model=lambda w: w.student,
        data=lambda w: w.pairs,
    ),
    "record": Case(
        "file",
        lambda w, d: [
            str(w.results),
            "--setup",
            "walk",
            "--model",
            "m",
            "--pool",
            "p",
            "--chapter",
            "docs/x.md",
            "--output",
            d,
        ],
        data=lambda w: w.results,
    ),
    "tables": Case("folder", lambda w, d: ["--root", d], fresh=lambda w: _checkout(w.root / "checkout")),
    "reproduce": Case("folder", _setups, chdir=True, dry=("--dry-run",)),
}


@pytest.fixture(scope="module")
def exports(tmp_path_factory) -> tuple[Path, Path, Path]:
    """Two tiny muse exports (a teacher and its 'student') and a results file: made once for the walk."""
    from relkt.cli import evaluate
    from relkt.encoders.export import export_encoder
    from tests.helpers.data import ARTICLES, squad_json
    from tests.helpers.tiny_muse import tiny_muse_encoder

    root = tmp_path_factory.mktemp("exports")
    export_encoder(tiny_muse_encoder(seed=1), root / "teacher")
    export_encoder(tiny_muse_encoder(seed=2), root / "student")
    data = root / "data"
    data.mkdir()
    for lang in ARTICLES:
        (data / f"{lang}.json").write_text(json.dumps(squad_json(lang)), encoding="utf-8")
    results = root / "results" / "a.json"
    results.parent.mkdir()
    assert evaluate.main(["--encoder", "ngram", "--data-dir", str(data), "--output", str(results)]) == 0
    return root / "teacher", root / "student", results


@pytest.fixture
def world(tmp_path, exports) -> World:
    import shutil

    from tests.helpers.data import ARTICLES, squad_json, write_corpus

    root = tmp_path / "world"
    data = root / "data"
    data.mkdir(parents=True)
    for lang in ARTICLES:
        (data / f"{lang}.json").write_text(json.dumps(squad_json(lang)), encoding="utf-8")
    write_corpus(root / "pairs", "de", 40)
    teacher, student, results = (root / "models" / "teacher", root / "models" / "student", root / "results" / "a.json")
    shutil.copytree(exports[0], teacher)
    shutil.copytree(exports[1], student)
    results.parent.mkdir()
    shutil.copy(exports[2], results)
    shutil.copy(exports[2].with_suffix(".per_question.npz"), results.with_suffix(".per_question.npz"))
    return World(root, data, root / "pairs", teacher, student, results)


def _hostile(world: World, name: str, case: Case) -> dict[str, str]:
    """Each hostile destination, made in `world`, as the string a user would type."""
    r = world.root
    mine = r / "mine"
    (mine / "src").mkdir(parents=True)
    (mine / "src" / "main.py").write_text("print('mine')\n")
    (mine / "README.md").write_text("# my project\n")
    (mine / "relkt.json").write_text("{}\n")  # only the marker's name: not relkt's
    (r / "notes.md").write_text("my notes\n")
    report = claim_dir(r / "report", "coverage" if name == "teach" else "teach")  # another command's output
    (report / "report.md").write_text("coverage's report\n")
    os.mkfifo(r / "fifo")
    elsewhere = r / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("elsewhere\n")
    os.symlink(elsewhere, r / "link")
    data = case.data(world) if case.data else world.data
    places = {
        "a user's folder": mine,
        "a user's file": r / "notes.md",
        "the model it reads": case.model(world) if case.model else world.teacher,
        "the data it reads": data / "en.json" if case.kind == "file" and data == world.data else data,
        "inside the data it reads": data / ("res.json" if case.kind == "file" else "out"),
        "another command's output": report,
        "a FIFO": r / "fifo",
        "a link": r / "link",
        "a 300-character name": r / ("x" * 300),
        "a newline in the name": r / "new\nline",
    }
    if case.model:
        places["inside the model it reads"] = case.model(world) / ("res.json" if case.kind == "file" else "out")
    out = {name: str(path) for name, path in places.items()}
    if case.kind == "file":
        out["a trailing slash"] = str(r / "new-folder") + "/"
    return out


def names(dest: str, line: str) -> bool:
    """Whether an error line names the destination: as typed, or as Python writes a name holding a newline."""
    name = Path(dest).name
    return name in line or repr(name)[1:-1] in line


def walk(name: str, module, case: Case, world: World, capsys, monkeypatch) -> list[str]:
    """Send command `name` to every hostile destination; what went wrong, one line each (empty: all refused)."""
    problems = []
    for where, dest in _hostile(world, name, case).items():
        before = world.snapshot()
        argv = case.argv(world, dest)
        if case.chdir:
            monkeypatch.chdir(world.root)
        capsys.readouterr()
        try:
            code = module.main(argv)
        except SystemExit as e:
            code = e.code
        except Exception as e:  # a traceback is never a clear line
            code, problems = 1, [*problems, f"{name} -> {where}: {type(e).__name__}: {e}"]
        err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
        if code in (0, None):
            problems.append(f"{name} -> {where}: exit 0")
        elif not err or not re.match(r"(relkt [a-z-]+: )?error: ", err[-1]):
            problems.append(f"{name} -> {where}: no error line ({err[-3:]})")
        elif not names(dest, err[-1]):
            problems.append(f"{name} -> {where}: the error does not name the destination ({err[-1][:300]})")
        after = world.snapshot()
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        made_here = {"configs", "teacher.yaml", "student.yaml"}  # what the case itself wrote
        changed = [k for k in changed if k.split("/")[0] not in made_here and not k.startswith("configs/")]
        if changed:
            problems.append(f"{name} -> {where}: changed {changed[:5]}")
    return problems


def test_every_command_has_a_case():
    assert set(CASES) == set(COMMANDS), "a registered command without a hostile-destination case"


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_refuses_every_hostile_destination(name, world, capsys, monkeypatch):
    module = importlib.import_module(COMMANDS[name][0])
    case = CASES[name]
    assert walk(name, module, case, world, capsys, monkeypatch) == []
    # the control: the same line to a place it may write gets past the door (the folder claimed, the file written),
    # so each refusal above was the destination's
    if case.chdir:
        monkeypatch.chdir(world.root)
    fresh = case.fresh(world) if case.fresh else world.root / "fresh" / ("out.json" if case.kind == "file" else "out")
    before = world.snapshot()
    if case.dry:  # the plan accepted: the refusals above came from the plan's check of the run folder
        assert module.main([*case.argv(world, str(fresh)), *case.dry]) == 0, capsys.readouterr().err[-2000:]
        return
    module.main(case.argv(world, str(fresh)))
    assert fresh.exists() and world.snapshot() != before, capsys.readouterr().err[-2000:]


class WritesPastTheDoor:
    """A command that writes its report with open(): what a command added without the door would do."""

    @staticmethod
    def main(argv: list[str]) -> int:
        out = Path(argv[argv.index("--output") + 1])
        out.mkdir(parents=True, exist_ok=True)
        (out / "report.md").write_text("a report")
        return 0


def test_a_command_that_bypasses_the_door_fails_the_walk(world, capsys, monkeypatch):
    case = Case("folder", lambda w, d: ["--output", d])
    problems = walk("double", WritesPastTheDoor, case, world, capsys, monkeypatch)
    assert any("a user's folder: exit 0" in p for p in problems)
    assert any("another command's output" in p and "report/report.md" in p for p in problems)


def test_every_field_that_names_a_folder_of_data_is_known_to_the_door():
    """A config or request field named `*_dir`, `*_qa` or `more_*` is data a command reads: an output inside it is
    refused only if relkt.io.DATA_FIELDS names it, so a field added next month must be added there (this test says
    so)."""
    import dataclasses
    import typing

    from relkt.config import StudentConfig, TeacherConfig
    from relkt.io import DATA_FIELDS
    from relkt.jobs import requests

    seen, stack, names = set(), [TeacherConfig, StudentConfig], set()
    stack += [obj for obj in vars(requests).values() if dataclasses.is_dataclass(obj) and isinstance(obj, type)]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        for name, hint in typing.get_type_hints(cls).items():
            if name in {f.name for f in dataclasses.fields(cls)}:
                names.add(name)
                stack += [t for t in (hint, *typing.get_args(hint)) if dataclasses.is_dataclass(t)]
    looks_like_data = {n for n in names if (n.endswith(("_dir", "_qa")) and n != "output_dir") or n.startswith("more_")}
    assert len(seen) > 10 and looks_like_data and looks_like_data <= DATA_FIELDS, looks_like_data - DATA_FIELDS


# ----- every API job: the same destinations from Python ------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """How an API job names where it writes (`kind`), the call that writes there, and the call to a new place (the
    control; default: the same call) when the job's own would train for long."""

    kind: str
    call: Callable[[World, str], object]
    model: Callable[[World], Path] | None = None
    data: Callable[[World], Path] | None = None
    control: Callable[[World, str], object] | None = None
    chdir: bool = False
    dry: bool = False  # the control is a dry run: it makes nothing


def _crossval_configs(world: World) -> tuple[Path, Path]:
    """A teacher and a student config a cross-validation points at each fold's teacher."""
    teacher = world.root / "cv_teacher.yaml"
    student = world.root / "cv_student.yaml"
    _config(world, "teacher", "runs/cv_teacher")
    (world.root / "teacher.yaml").rename(teacher)
    config = json.loads(teacher.read_text())
    teacher.write_text(json.dumps({**config, "output_dir": "runs/cv_teacher"}))
    _config(world, "student", "runs/cv_student")
    config = json.loads((world.root / "student.yaml").read_text())
    config["teacher"] = {"spec": "hub:runs/cv_teacher/best"}
    student.write_text(json.dumps({**config, "output_dir": "runs/cv_student"}))
    (world.root / "student.yaml").unlink()
    return teacher, student


def _stage(world: World, stage: str, dest: str):
    from relkt import api

    argv = _config(world, stage, dest)
    return api.config(stage, argv[1], [argv[-1]])


def _api_jobs() -> dict[str, Job]:
    from relkt import api
    from relkt.config import PoolSection
    from relkt.jobs.requests import CoverageRequest, InterpolateRequest, TeachRequest

    def reproduce(w: World, d: str, dry_run: bool = False):
        name, _, setups = _setups(w, d)
        return api.reproduce(name, setups, dry_run=dry_run)

    return {
        "train_teacher": Job("folder", lambda w, d: api.train_teacher(_stage(w, "teacher", d))),
        "train_student": Job(
            "folder", lambda w, d: api.train_student(_stage(w, "student", d)), model=lambda w: w.teacher
        ),
        "score": Job("file", lambda w, d: api.score("ngram", PoolSection(data_dir=str(w.data)), "all", output=d)),
        "cross_validate": Job(
            "folder",
            lambda w, d: api.cross_validate(*_crossval_configs(w), d, folds=2),
            control=lambda w, d: api.cross_validate(*_crossval_configs(w), d, folds=2, only_folds=[]),
        ),
        "coverage": Job(
            "folder",
            lambda w, d: api.coverage(CoverageRequest(encoders={"a": "ngram"}, data_dir=str(w.data), output=d)),
        ),
        "teach": Job(
            "folder",
            lambda w, d: api.teach(
                TeachRequest(
                    teacher=f"muse:{w.teacher}",
                    langs=["de"],
                    pairs_dir=str(w.pairs),
                    qa_dir=str(w.data),
                    set=["data.corpus_dev_pairs=10"],
                    output=d,
                )
            ),
            model=lambda w: w.teacher,
        ),
        "interpolate": Job(
            "folder",
            lambda w, d: api.interpolate(
                InterpolateRequest(
                    teacher=f"muse:{w.teacher}", student=f"muse:{w.student}", data_dir=str(w.data), output=d
                )
            ),
            model=lambda w: w.student,
        ),
        "reproduce": Job("folder", reproduce, control=lambda w, d: reproduce(w, d, dry_run=True), chdir=True, dry=True),
    }


NO_OUTPUT = {"config", "retrieve", "setups", "compare", "audit"}  # API functions that write nothing


def test_every_api_function_is_walked_or_writes_nothing():
    import dataclasses
    import inspect
    import typing

    from relkt import api

    functions = {n for n in api.__all__ if inspect.isfunction(getattr(api, n))}
    assert functions == set(_api_jobs()) | NO_OUTPUT, (
        "an API function that is neither walked nor known to write nothing"
    )
    for name in NO_OUTPUT:  # no `output` argument, nor a request that holds one (AuditRequest once held one unread)
        hints = typing.get_type_hints(getattr(api, name))
        assert "output" not in hints, name
        assert not any(dataclasses.is_dataclass(h) and "output" in typing.get_type_hints(h) for h in hints.values()), (
            name
        )


@pytest.mark.parametrize("name", sorted(_api_jobs()))
def test_every_api_job_refuses_every_hostile_destination(name, world, monkeypatch):
    from relkt.errors import RelktError

    job = _api_jobs()[name]
    if job.chdir:
        monkeypatch.chdir(world.root)
    case = Case(job.kind, lambda w, d: [], model=job.model, data=job.data)
    problems = []
    for where, dest in _hostile(world, name, case).items():
        before = world.snapshot()
        try:
            job.call(world, dest)
            problems.append(f"{name} -> {where}: ran")
        except RelktError as e:
            if not names(dest, str(e)):
                problems.append(f"{name} -> {where}: the error does not name the destination ({str(e)[:300]})")
        except Exception as e:  # a traceback is never a clear line
            problems.append(f"{name} -> {where}: {type(e).__name__}: {e}")
        after = world.snapshot()
        changed = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
        changed = [k for k in changed if not k.startswith(("configs", "cv_", "teacher.yaml", "student.yaml"))]
        if changed:
            problems.append(f"{name} -> {where}: changed {changed[:5]}")
    assert problems == [], "\n".join(problems)
    fresh = world.root / "fresh" / ("out.json" if job.kind == "file" else "out")
    try:  # the control: the same call to a new place gets past the door (what a tiny run does after it, aside)
        answer = (job.control or job.call)(world, str(fresh))
    except RelktError as e:
        answer = e
        assert str(fresh) not in str(e).split(":")[0], e
    if job.dry:  # a recipe's dry run: its plan, run folders checked, accepted
        assert answer == 0, answer
    else:
        assert fresh.exists() or job.kind == "file" and fresh.parent.exists(), name
