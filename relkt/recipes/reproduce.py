"""`relkt reproduce`: a setup of the setups file end to end, by its recipe: a `pipeline` setup's steps
(relkt.recipes.pipeline), a `crossval` setup's article folds (relkt.recipes.crossval), a `steps` setup's own steps
(relkt.recipes.step_recipes)."""

from __future__ import annotations

from pathlib import Path

from relkt.errors import ConfigError
from relkt.recipes.expected import check_files, verdict
from relkt.recipes.pipeline import Step, output_dir_of, pipeline_steps, run_steps
from relkt.recipes.setups import Setup, get_setup, listing, load_setups
from relkt.recipes.step_recipes import STEP_RECIPES


def setups_listing(setups: Path) -> str:
    """Every setup of the file `setups` (its configs under its folder, the checkout above it), recommended first."""
    return listing(load_setups(setups))


def reproduce(name: str, setups: Path, seed: int | None = None, dry_run: bool = False) -> int:
    """Run the setup `name` of the file `setups` (from the checkout's root, where its paths start); with `seed`,
    run folders `_seedN`; with `dry_run`, print a pipeline's commands. The exit code of what ran."""
    setup = get_setup(name, setups)
    if setup.recipe == "crossval":
        return crossval(setup, setups, seed, dry_run)
    if setup.recipe == "steps":
        if setup.steps not in STEP_RECIPES:
            raise ConfigError(
                f"{setups}: setup {name}: steps {setup.steps!r} is not valid; valid: {', '.join(STEP_RECIPES)}"
            )
        steps = STEP_RECIPES[setup.steps](setup, setups.parent, seed)
        run_steps(steps, dry_run=dry_run)
        reports = [s.report for s in steps if s.report]
        if reports and not dry_run:
            print("\nOpen these:\n" + "\n".join(f"  {r}" for r in reports))
        return 0
    return pipeline(setup, setups, seed, dry_run)


def pipeline(setup: Setup, setups: Path, seed: int | None, dry_run: bool) -> int:
    """The pipeline's steps, then the comparison of its scores and, with expected ranges, their check."""
    from relkt.recipes.comparison import (  # deferred: --list and --help answer without numpy's tables
        comparison,
        write_comparison,
    )

    steps = pipeline_steps(setup, setups.parent, seed)
    results = run_steps(steps, dry_run=dry_run)
    root = Path(results[0]).parent
    if dry_run:
        print(f"(then the comparison of {len(results)} results files and, with expected ranges, their check)")
        return 0
    out = write_comparison(root / "comparison.md", comparison(results))
    print(f"wrote {out}")
    if setup.expected:
        student = next(r for r in results[2:] if r.endswith("/test.json"))
        lines = check_files(setup.expected, results[0], results[1], student)
        print(verdict(lines))
        if not all(ok for ok, _ in lines):
            print("WARNING: this run falls outside the README's expected ranges (above)")
    print("\nOpen these:")
    print(f"  {root}/comparison.md    the test scores side by side, with per-language significance")
    for step in steps:
        if step.argv[:1] in (["relkt.train_teacher"], ["relkt.train_student"]):
            run_dir = step_output(step)
            print(f"  {run_dir}/curves.png    dev curve, loss terms and learning rate; model in {run_dir}/best")
    return 0


def step_output(step: Step) -> str:
    """The run folder of a trainer step: its `--set output_dir=` or its config's."""
    for i, arg in enumerate(step.argv):
        if arg == "--set" and step.argv[i + 1].startswith("output_dir="):
            return step.argv[i + 1].partition("=")[2]
    return output_dir_of(Path(step.argv[step.argv.index("--config") + 1]))


def crossval(setup: Setup, setups: Path, seed: int | None, dry_run: bool) -> int:
    """The setup's k-fold cross-validation into runs/NAME[_seedN]/crossval."""
    from relkt.recipes.crossval import CrossValidation  # deferred: the folds' trainers load TensorFlow

    output = f"runs/{setup.name}{f'_seed{seed}' if seed is not None else ''}/crossval"
    sets = [f"seed={seed}", f"data.split_seed={seed}"] if seed is not None else []
    if dry_run:
        print(f"k-fold cross-validation of {setup.name} ({setup.folds} folds) into {output}")
        return 0
    result = CrossValidation.from_setup(setup, setups.parent, output, sets=sets).run(None)
    for name, path in result.tables.items():
        print(f"wrote {path} ({name})")
    return 0
