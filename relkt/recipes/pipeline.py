"""A `pipeline` setup as named steps: zero-shot score -> teacher -> its test score -> each student and its test scores
-> the comparison -> the expected-range check. Each step is one relkt command run as its own process (the commands a
reader would type, printed with `dry_run`); trainers resume themselves, and a score is computed again only when its
model is newer than its results file (stale).

    from relkt.recipes.pipeline import pipeline_steps, run_steps
    run_steps(pipeline_steps(setup, Path("configs"), seed=None))
"""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from relkt.config import StudentConfig, TeacherConfig, load_config
from relkt.errors import ConfigError, Interrupted, RelktError
from relkt.io import check_run_folder, read_json
from relkt.recipes.setups import Setup


@dataclass
class Step:
    """One command of the pipeline (`argv` after `python -m`), its name, and the results file it writes (`output`)
    from the model folder `model`: a score step is skipped while its results are newer than the model. A step that
    writes a report from earlier steps' files runs in this process instead (`call`, shown as `shown_as`)."""

    name: str
    argv: list[str]
    output: str = ""
    model: str = ""
    then: list[str] = field(default_factory=list)  # results files this step adds to the comparison
    call: Callable[[], None] | None = None
    shown_as: str = ""
    report: str = ""  # a file this step writes for a reader to open (a comparison, a coverage report)
    run_dir: str = ""  # the run folder a trainer step trains into: checked, with every other, before the first step

    def stale(self) -> bool:
        """Whether the step must run: no results file yet, or its model exported after it."""
        if not self.output or not Path(self.output).is_file():
            return True
        stamp = Path(self.model) / "relkt.json"
        return stamp.is_file() and stamp.stat().st_mtime > Path(self.output).stat().st_mtime

    def shown(self) -> str:
        """The step as a reader would type it (or the in-process step's description)."""
        return self.shown_as or "python -m " + shlex.join(self.argv)


def record(setup: Setup, model: str, pool: str, results: str) -> Step:
    """Keep `results` (a score step's file) as the setup's committed record of `model` on `pool`
    (docs/results/records/SETUP/MODEL_POOL.json, relkt.jobs.record), written again only when the results are newer."""
    from relkt.jobs.record import record_path, record_results  # deferred: numpy, when the steps are listed

    path = record_path(setup.name, model, pool)

    def write() -> None:
        if path.is_file() and path.stat().st_mtime >= Path(results).stat().st_mtime:
            print(f"{path} is newer than {results}; kept")
            return
        record_results(results, setup=setup.name, model=model, pool=pool, chapter=setup.chapter, output=path)
        print(f"wrote {path}")

    return Step(
        f"record {model} {pool}", [], call=write, shown_as=f"relkt record {results} -> {path}", report=str(path)
    )


def output_dir_of(config: Path) -> str:
    """A config's run folder, through its base chain."""
    cls = StudentConfig if "student" in config.stem else TeacherConfig
    return load_config(cls, config).output_dir


def _score(name: str, spec: str, output: str, config: str, model: str = "", card: bool = False) -> Step:
    """`relkt evaluate` of `spec` on the test split of the data `config` (a run's saved config, or the setup's
    config before its run) names: the data the model trained on, never an environment variable's instead. The
    models a setup records (`card`, and zero-shot) are also ranked language-aware, the setting chosen on dev."""
    argv = ["relkt.cli.evaluate", "--encoder", spec, "--config", config, "--split", "test", "--no-progress"]
    argv += ["--output", output] + (["--rank-adjust", "auto"] if card or name == "zero-shot" else [])
    return Step(name, argv + (["--card"] if card else []), output, model, [output])


def pipeline_steps(setup: Setup, configs_dir: Path, seed: int | None = None) -> list[Step]:
    """The setup's commands in order; with `seed`, every run folder gets a `_seedN` suffix and both stages that
    seed. Paths are as a command run from the checkout's root reads them (configs under `configs_dir`)."""
    if setup.recipe != "pipeline":
        raise ConfigError(f"setup {setup.name}: a {setup.recipe} setup has no pipeline steps")
    teacher_cfg = configs_dir / setup.teacher
    t_out = output_dir_of(teacher_cfg)
    root = str(Path(t_out).parent)
    seed_set: list[str] = []
    if seed is not None:
        root = f"{root}_seed{seed}"
        t_out = f"{root}/{Path(t_out).name}"
        seed_set = ["--set", f"seed={seed}"]
    kind = load_config(StudentConfig, configs_dir / setup.student).teacher.spec.split(":", 1)[0]
    zero = f"{root}/zero_shot_test.json"
    steps = [
        _score("zero-shot", setup.zero_shot or "muse", zero, str(teacher_cfg)),
        Step(
            "teacher",
            ["relkt.train_teacher", "--config", str(teacher_cfg), *_run_sets(seed_set, seed, t_out)],
            run_dir=t_out,
        ),
        _score(
            "teacher test", f"hub:{t_out}/best", f"{t_out}/test.json", f"{t_out}/config.yaml", f"{t_out}/best", True
        ),
    ]
    students = [(c, output_dir_of(configs_dir / c)) for c in (setup.student, *setup.more_students)]
    for config, out in students:
        out = f"{root}/{Path(out).name}" if seed is not None else out
        sets = ["--set", f"teacher.spec={kind}:{t_out}/best", *_run_sets(seed_set, seed, out)]
        steps.append(
            Step(
                f"student {Path(config).stem}",
                ["relkt.train_student", "--config", str(configs_dir / config), *sets],
                run_dir=out,
            )
        )
        run = f"{out}/config.yaml"
        steps.append(_score("student test", f"hub:{out}/best", f"{out}/test.json", run, f"{out}/best", True))
        steps.append(_score("student last test", f"hub:{out}/last", f"{out}/test_last.json", run, f"{out}/last"))
        if setup.interpolate:
            steps.append(
                Step(
                    "interpolate",
                    [
                        "relkt.cli.interpolate",
                        "--teacher",
                        f"bert:{t_out}/best",
                        "--student",
                        f"bert:{out}/last",
                        "--output",
                        f"{out}/wise",
                    ],
                )
            )
            steps.append(_score("interpolated test", f"hub:{out}/wise", f"{out}/test_wise.json", run, f"{out}/wise"))
    for config in setup.grow_students:
        out = output_dir_of(configs_dir / config)
        out = f"{root}/{Path(out).name}_e4" if seed is not None else f"{out}_e4"
        sets = ["--set", f"teacher.spec={kind}:{t_out}/best", *_run_sets(seed_set, seed, out)]
        sets += ["--set", f"output_dir={out}", "--set", "distill.epochs=4"]
        steps.append(Step("grown student", ["relkt.train_student", "--config", str(configs_dir / config), *sets]))
        steps.append(
            _score("grown student test", f"hub:{out}/best", f"{out}/test.json", f"{out}/config.yaml", f"{out}/best")
        )
    if setup.chapter and seed is None:  # a seeded rerun is not the setup's record
        first = f"{students[0][1]}/test.json"
        for model, results in (("zero_shot", zero), ("teacher", f"{t_out}/test.json"), ("student", first)):
            adjusted = str(Path(results).with_name(Path(results).stem + ".adjusted.json"))
            steps += [record(setup, model, "test", results), record(setup, model, "test-adjusted", adjusted)]
    return steps


def _run_sets(seed_set: list[str], seed: int | None, out: str) -> list[str]:
    return [*seed_set, "--set", f"output_dir={out}"] if seed is not None else []


def run_steps(steps: Sequence[Step], dry_run: bool = False, log=print) -> list[str]:
    """Run each step as `python -m ...` (or print it with `dry_run`), in order, stopping at the first that fails;
    the results files of the score steps, for the comparison. A student's `last/` score is skipped when `last/` is
    `best/` (the same files)."""
    for step in steps:  # every run folder of the plan, before any step (a dry run says so too): a refusal costs no
        if step.run_dir:  # earlier step's time
            check_run_folder(Path(step.run_dir))
    results: list[str] = []
    for step in steps:
        if step.name.endswith("last test") and _last_is_best(step.model):
            continue
        if dry_run:
            log(step.shown())
        elif step.output and not step.stale():
            log(f"{step.name}: {step.output} is newer than its model; kept")
        elif step.call is not None:
            log(f"\n== {step.name}: {step.shown()}")
            step.call()
        else:
            log(f"\n== {step.name}: {step.shown()}")
            code = run_child(step.argv)
            if code in (-signal.SIGINT, -signal.SIGTERM, 130, 143):
                raise Interrupted(f"interrupted in step '{step.name}'; the same command resumes it")
            if code != 0:
                raise RelktError(f"step '{step.name}' failed (exit {code}): {step.shown()}")
        results += step.then
    return results


def run_child(argv: Sequence[str]) -> int:
    """`python -m ARGV` as a child that SIGINT and SIGTERM reach: either signal to this process is passed on and the
    child is waited for (a trainer checkpoints and exits; no orphan trains on), then its exit code is returned."""
    child = subprocess.Popen([sys.executable, "-m", *argv])

    def forward(signum, frame):
        if child.poll() is None:
            child.send_signal(signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return child.wait()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if child.poll() is None:  # this process is leaving for another reason: the child goes with it
            child.terminate()
            child.wait()


def _last_is_best(last: str) -> bool:
    """Whether a run's `last/` is its `best/` (the best evaluation was the last step): its summary says so."""
    summary = Path(last).parent / "summary.json"
    try:
        s = read_json(summary, "run summary")
        return s["best"]["step"] == s["steps"]
    except (OSError, ValueError, KeyError, TypeError):
        return False
