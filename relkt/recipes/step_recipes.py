"""The setups whose steps are their own (`recipe: steps`, `steps: NAME` in the setups file): each a function that lists
its commands, registered by name, run by relkt.recipes.pipeline.run_steps like a pipeline's (trainers resume
themselves; a score is computed again only when its model is newer than its results; comparisons and reports are
written after their inputs).

    relkt reproduce paper_scale_muse [--seed N] [--dry-run]

Shared data is read from `$RELKT_SHARED_DATA` (default `../shared/data`, beside the checkout).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from relkt.recipes.pipeline import Step, record
from relkt.recipes.setups import Setup

StepRecipe = Callable[[Setup, Path, "int | None"], list[Step]]
STEP_RECIPES: dict[str, StepRecipe] = {}


def step_recipe(name: str) -> Callable[[StepRecipe], StepRecipe]:
    """Register a function listing a setup's steps under `name` (a setup's `steps:`)."""

    def register(function: StepRecipe) -> StepRecipe:
        STEP_RECIPES[name] = function
        return function

    return register


def shared_data() -> str:
    """The shared data folder the steps read: `$RELKT_SHARED_DATA`, or `../shared/data` beside the checkout."""
    return os.environ.get("RELKT_SHARED_DATA", "../shared/data")


def run_root(name: str, seed: int | None) -> str:
    """A setup's run folder, `runs/NAME`, with a `_seedN` suffix when seeded."""
    return f"runs/{name}{f'_seed{seed}' if seed is not None else ''}"


def train(stage: str, config: Path, out: str, seed: int | None, *sets: str) -> Step:
    """A trainer (`teacher` or `student`) on `config` into `out`, with `seed` and more `--set`s."""
    argv = [f"relkt.train_{stage}", "--config", str(config), "--set", f"output_dir={out}"]
    argv += [a for s in ([f"seed={seed}"] if seed is not None else []) + list(sets) for a in ("--set", s)]
    return Step(f"{stage} {Path(out).name}", argv, run_dir=out)


def score(name: str, spec: str, output: str, *where: str) -> Step:
    """`relkt evaluate` of `spec` into `output`, on the pool `where` names (`--config RUN` or `--data-dir D --split
    all ...`); recomputed only when the model folder in `spec` is newer than `output`."""
    model = spec.partition(":")[2]
    argv = ["relkt.cli.evaluate", "--encoder", spec, *where, "--no-progress", "--output", output]
    return Step(f"score {name}", argv, output, model, [output])


def compare(name: str, results: list[str], output: str, unit: str = "article", against: str = "previous") -> Step:
    """The comparison of `results` (side by side, each against the one before it or the first) written to `output`."""

    def write() -> None:
        from relkt.recipes.comparison import comparison, write_comparison  # deferred: numpy's tables, when run

        write_comparison(output, comparison(results, against, unit))
        print(f"wrote {output}")

    return Step(f"compare {name}", [], call=write, shown_as=f"compare {' '.join(results)} -> {output}", report=output)


def whole(data_dir: str) -> list[str]:
    """A QA source scored whole at the article and paragraph units (a pool no run trained on)."""
    return ["--data-dir", data_dir, "--split", "all", "--xx-en-unit", "article,paragraph"]


@step_recipe("paper_scale")
def paper_scale(setup: Setup, configs: Path, seed: int | None) -> list[Step]:
    """The paper's teacher on all of SQuAD train, then it, zero-shot mUSE and three students one change at a time
    (the paper's protocol; + native questions; + MLQA's cross-language questions) scored on XQuAD-R and MLQA-R whole,
    each compared with the one before it (the teacher with zero-shot)."""
    root, data = run_root(setup.name, seed), shared_data()
    pools = {"xquad-r": f"{data}/xquad-r", "mlqa": f"{data}/mlqa/dev"}
    steps = [train("teacher", configs / setup.teacher, f"{root}/teacher", seed)]
    for pool, folder in pools.items():
        zero, teacher = f"{root}/zero_shot_{pool}.json", f"{root}/teacher/{pool}.json"
        steps += [
            score(f"zero-shot {pool}", "muse", zero, *whole(folder)),
            score(f"teacher {pool}", f"muse:{root}/teacher/best", teacher, *whole(folder)),
            compare(pool, [zero, teacher], f"{root}/comparison_{pool}.md", against="first"),
        ]
    previous = "teacher"
    for config in (setup.student, *setup.more_students):
        name = Path(config).stem
        steps.append(
            train("student", configs / config, f"{root}/{name}", seed, f"teacher.spec=muse:{root}/teacher/best")
        )
        for pool, folder in pools.items():
            mine = f"{root}/{name}/{pool}.json"
            before = [f"{root}/teacher/{pool}.json"] + (
                [f"{root}/{previous}/{pool}.json"] if previous != "teacher" else []
            )
            steps += [
                score(f"{name} {pool}", f"muse:{root}/{name}/best", mine, *whole(folder)),
                compare(f"{name} {pool}", [*before, mine], f"{root}/comparison_{name}_{pool}.md"),
            ]
        previous = name
    return steps


LAREQA_EIGHT = "ar,de,en,es,ru,th,tr,zh"  # LAReQA Table 5's pool: the languages mUSE was trained on


@step_recipe("lareqa")
def lareqa(setup: Setup, configs: Path, seed: int | None) -> list[Step]:
    """The recommended LAReQA recipe: one teacher run (BM25 epoch, then an epoch of negatives mined online), its rows
    student, and zero-shot mUSE, each scored on XQuAD-R whole, XQuAD-R's eight (LAReQA Table 5) and MLQA-R whole, each
    model against the one before it."""
    root, data = run_root(setup.name, seed), shared_data()
    pools = {
        "xquad-r": whole(f"{data}/xquad-r"),
        "xquad-r-eight": [*whole(f"{data}/xquad-r"), "--langs", LAREQA_EIGHT],
        "mlqa-r": whole(f"{data}/mlqa/dev"),
    }
    teacher, student = f"{root}/teacher", f"{root}/student"
    models = {"zero_shot": "muse", "teacher": f"muse:{teacher}/best", "student": f"muse:{student}/best"}
    steps = [
        train("teacher", configs / setup.teacher, teacher, seed),
        train("student", configs / setup.student, student, seed, f"teacher.spec=muse:{teacher}/best"),
    ]
    for pool, where in pools.items():
        results = [f"{root}/scores/{name}_{pool}.json" for name in models]
        for (name, spec), out in zip(models.items(), results):
            steps.append(score(f"{name} {pool}", spec, out, *where, "--rank-adjust", "auto"))
            if seed is None and setup.chapter:  # a seeded rerun is not the setup's record
                steps += [record(setup, name, pool, out), record(setup, name, f"{pool}-adjusted", adjusted(out))]
        steps.append(compare(pool, results, f"{root}/comparison_{pool}.md"))
    return steps


def adjusted(results: str) -> str:
    """The language-aware ranking's results beside `results` (relkt.jobs.scoring.adjusted_path)."""
    return str(Path(results).with_name(Path(results).stem + ".adjusted.json"))


def apertium_reads_spanish() -> bool:
    """Whether Apertium's English -> Spanish pair is installed (the Apertium student's translations need it)."""
    if shutil.which("apertium") is None:
        return False
    listed = subprocess.run(["apertium", "-l"], capture_output=True, text=True).stdout.split()
    return "eng-spa" in listed


@step_recipe("paper_protocol")
def paper_protocol(setup: Setup, configs: Path, seed: int | None) -> list[Step]:
    """CL-ReLKT's protocol: the teacher from English SQuAD train, the students from parallel text (and Apertium's
    Spanish questions where `apertium eng-spa` is installed), every model on the whole of XQuAD-R, against zero-shot."""
    root = run_root(setup.name, seed)
    teacher_cfg = configs / setup.teacher
    zero = f"{root}/zero_shot_test.json"
    steps = [
        score("zero-shot", "muse", zero, "--config", str(teacher_cfg), "--split", "test"),
        train("teacher", teacher_cfg, f"{root}/teacher", seed),
        score(
            "teacher",
            f"muse:{root}/teacher/best",
            f"{root}/teacher/test.json",
            "--config",
            f"{root}/teacher/config.yaml",
            "--split",
            "test",
        ),
    ]
    results = [zero, f"{root}/teacher/test.json"]
    students = [c for c in (setup.student, *setup.more_students) if "apertium" not in c or apertium_reads_spanish()]
    skipped = [c for c in (setup.student, *setup.more_students) if c not in students]
    for config in skipped:
        print(f"skipped {config}: no apertium eng-spa here (apt-get install apertium apertium-eng-spa)")
    for config in students:
        name, out = Path(config).stem, f"{root}/{Path(config).stem}"
        steps += [
            train("student", configs / config, out, seed, f"teacher.spec=muse:{root}/teacher/best"),
            score(name, f"muse:{out}/best", f"{out}/test.json", "--config", f"{out}/config.yaml", "--split", "test"),
        ]
        results.append(f"{out}/test.json")
    return [*steps, compare("all", results, f"{root}/comparison.md", against="first")]


@step_recipe("paper_reference")
def paper_reference(setup: Setup, configs: Path, seed: int | None) -> list[Step]:
    """CL-ReLKT's protocol with its reference code's teacher and one student per language group (each language scored
    by its group's student), the paper's table beside relkt's."""
    root = run_root(setup.name, seed)
    teacher_cfg = configs / setup.teacher
    seed_sets = [f"seed={seed}"] if seed is not None else []

    def students() -> None:
        from relkt.recipes.groups import GroupStudents  # deferred: only when the step runs
        from relkt.recipes.pooled_tables import paper_table  # deferred: only when the step runs

        sets = [f"teacher.spec=muse:{root}/teacher/best", *seed_sets]
        GroupStudents(str(configs / setup.student), setup.student_groups, root, sets, False, setup.name).run()
        print(f"wrote {paper_table(Path(root))}")

    results = [f"{root}/zero_shot.json", f"{root}/teacher.json", f"{root}/student.json"]
    return [
        score("zero-shot", "muse", results[0], "--config", str(teacher_cfg), "--split", "test"),
        train("teacher", teacher_cfg, f"{root}/teacher", seed),
        score(
            "teacher",
            f"muse:{root}/teacher/best",
            results[1],
            "--config",
            f"{root}/teacher/config.yaml",
            "--split",
            "test",
        ),
        Step(
            "students by group",
            [],
            call=students,
            shown_as=f"one student per language group into {root}",
            report=f"{root}/paper_table.md",
        ),
        compare("all", results, f"{root}/comparison.md", against="first"),
    ]


@step_recipe("sparse_rows")
def sparse_rows(setup: Setup, configs: Path, seed: int | None) -> list[Step]:
    """One teacher, then the trainable-table student with dense Adam and with lazy rows, compared."""
    root = run_root(setup.name, seed)
    steps, results = [train("teacher", configs / setup.teacher, f"{root}/teacher", seed)], []
    for rows in ("dense", "lazy"):
        out = f"{root}/student_{rows}"
        sets = (f"teacher.spec=muse:{root}/teacher/best", f"schedule.sparse_rows={rows}")
        steps += [
            train("student", configs / setup.student, out, seed, *sets),
            score(
                f"student_{rows}",
                f"hub:{out}/best",
                f"{out}/test.json",
                "--config",
                f"{out}/config.yaml",
                "--split",
                "test",
            ),
        ]
        results.append(f"{out}/test.json")
    return [*steps, compare("dense vs lazy", results, f"{root}/comparison.md", unit="pool")]


def coverage(name: str, encoders: dict[str, str], langs: str, learned: str, output: str, *more: str) -> Step:
    """`relkt coverage` of `encoders` (the first the baseline) on `langs`: pairs, XOR questions, XQuAD-R."""
    data = shared_data()
    argv = ["relkt.cli.coverage", *(a for n, spec in encoders.items() for a in ("--encoder", f"{n}={spec}"))]
    argv += ["--langs", langs, "--pairs-dir", f"{data}/parallel", "--dev-pairs", "500"]
    argv += ["--questions-dir", f"{data}/xor-questions", "--test-dir", f"{data}/xquad-r", "--learned", learned]
    return Step(f"coverage {name}", [*argv, *more, "--output", output], report=f"{output}/report.md")


@step_recipe("new_languages")
def new_languages(setup: Setup, configs: Path, seed: int | None) -> list[Step]:
    """One student for languages mUSE never saw, from parallel text, and its language coverage against zero-shot."""
    root, langs = run_root(setup.name, seed), "bn,te,ta,am,km,he,fi,sw,ja,fr"
    encoders = {"zero-shot": "muse", "student": f"muse:{root}/student/best"}
    return [
        train("student", configs / setup.student, f"{root}/student", seed),
        coverage("against zero-shot", encoders, langs, langs, f"{root}/coverage"),
    ]


@step_recipe("teach_questions")
def teach_questions(setup: Setup, configs: Path, seed: int | None) -> list[Step]:
    """The new-languages student with and without XOR-TyDi's training questions (or romanized bn/te), each covered on
    held-out XOR questions, pairs and XQuAD-R, against zero-shot and against the parallel-text student."""
    root, langs, learned = run_root(setup.name, seed), "bn,te,fi,ja,ko,ru,ar", "bn,te,fi,ja"
    names = {"student_parallel": setup.student} | {Path(c).stem: c for c in setup.more_students}
    steps = [train("student", configs / config, f"{root}/{name}", seed) for name, config in names.items()]
    model = {name: f"muse:{root}/{name}/best" for name in names}
    xor = {"parallel+xor": model["student_xor"]}
    more = {"+contrast": model["student_xor_contrast"], "+bank": model["student_xor_bank"]}
    vs_zero = {"zero-shot": "muse", "parallel": model["student_parallel"], **xor, **more}
    vs_parallel = {"parallel": model["student_parallel"], **xor, "parallel+roman": model["student_roman"], **more}
    return [
        *steps,
        coverage("against zero-shot", vs_zero, langs, learned, f"{root}/vs_zero_shot", "--center"),
        coverage("against the parallel student", vs_parallel, langs, learned, f"{root}/vs_parallel", "--center"),
    ]
