"""Teach an encoder new languages from parallel text, and show what changed, in one command.

    python -m relkt.teach --langs bn,te,ta,am,km,he,fi,sw --controls ja,fr,ar,ru --pairs-dir ../shared/data/parallel \
        --questions-dir ../shared/data/xor-questions --qa-dir ../shared/data/squad-train \
        --test-dir ../shared/data/xquad-r --output runs/teach

Coverage before (the base, zero-shot), the recommended student (relkt/recipes/teach_student.yaml, one file, with what
the flags name set over it, then `--set`), coverage after, and forgetting: the controls (languages the base reads,
trained beside as replay, the rows they read kept out of the taught set), the watched languages (`--watch`: scored,
never trained) and the QA test source whole. One report, OUTPUT/report.md, with its figure
(OUTPUT/coverage/coverage.png) and OUTPUT/teach.json. Every input is read and checked before anything trains;
rerunning the same command resumes the student and redoes the report.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import re
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from relkt import api
from relkt.cli import check_formats, run_cli
from relkt.cli_types import positive_int
from relkt.config import StudentConfig, config_yaml
from relkt.config.config_io import as_overrides, run_config
from relkt.coverage import run as coverage_run
from relkt.data.parallel_corpus import pair_languages, read_pairs
from relkt.errors import ConfigError, DataError
from relkt.io import atomic_files, json_text
from relkt.pair_coverage import read_items
from relkt.requests import CoverageRequest, TeachRequest

RECIPE = Path(__file__).resolve().parent / "recipes" / "teach_student.yaml"
log = logging.getLogger(__name__)


@dataclass
class TeachResult:
    """Where a teach run wrote its report, and what it found: `report` is OUTPUT/report.md, `summary` teach.json."""

    output: Path
    summary: dict[str, Any]

    @property
    def report(self) -> Path:
        return self.output / "report.md"


def codes(text: str) -> list[str]:
    return [x.strip().lower() for x in text.split(",") if x.strip()]


def student_config(request: TeachRequest) -> StudentConfig:
    """The recipe with what the flags name set over it, then the request's `set` (a user's `--set` wins)."""
    langs, controls = codes(request.langs), codes(request.controls)
    sets = {
        "output_dir": str(Path(request.output) / "student"),
        "data.student_langs": langs + controls,
        "student.language_rows.langs": langs,
        "data.corpus_dir": request.pairs_dir,
        "data.more_pairs": {request.questions_dir: 0} if request.questions_dir else {},
    }
    if request.qa_dir:
        sets["data.data_dir"] = request.qa_dir
    if request.test_dir:
        sets["data.test_dir"] = request.test_dir
    if request.teacher:
        sets["teacher.spec"] = request.teacher
    # The flags' settings go with the recipe, so --smoke shrinks them too (e.g. the question files' share); --set last.
    return run_config(StudentConfig, request.config or RECIPE, request.set, request.smoke, as_overrides(sets))


def coverage_request(request: TeachRequest, config: StudentConfig, student_spec: str = "") -> CoverageRequest:
    """The report's request: the base and the student on the taught languages and the controls, held out as the
    student held them out (the same pairs), the test source whole."""
    base = config.student.spec or config.teacher.spec
    return CoverageRequest(
        encoder=[f"zero-shot={base}"] + ([f"student={student_spec}"] if student_spec else []),
        langs=",".join(codes(request.langs) + codes(request.controls) + codes(request.watch)),
        pairs_dir=request.pairs_dir,
        dev_pairs=config.data.corpus_dev_pairs,
        held_out_sources=",".join(config.data.corpus_held_out_sources),
        questions_dir=request.questions_dir,
        test_dir=request.test_dir,
        learned=request.langs,
        batch_size=request.batch_size,
        output=str(Path(request.output) / "coverage"),
    )


def check_inputs(request: TeachRequest, config: StudentConfig) -> None:
    """Everything the run will read, before anything trains: one error naming the file or flag."""
    langs, controls = codes(request.langs), codes(request.controls)
    if not langs:
        raise ConfigError("--langs: name the languages to teach (e.g. --langs bn,te)")
    if not request.pairs_dir:
        raise ConfigError("--pairs-dir: a folder of {lang}.tsv pair files (source, en, xx) is needed")
    both = sorted(set(langs) & set(controls))
    if both:
        raise ConfigError(f"--controls: {', '.join(both)} also in --langs; a control is a language not taught")
    watch = codes(request.watch)
    trained = sorted(set(watch) & set(langs + controls))
    if trained:
        raise ConfigError(
            f"--watch: {', '.join(trained)} also in --langs or --controls; a watched language never trains"
        )
    source = config.data.source_lang
    if source in langs + controls + watch:
        raise ConfigError(
            f"--langs/--controls/--watch: {source} is the teacher's language (data.source_lang), not taught"
        )
    have = pair_languages(request.pairs_dir)
    missing = [x for x in langs + controls + watch if x not in have]
    if missing:
        raise DataError(
            f"--pairs-dir {request.pairs_dir}: no pairs for {', '.join(missing)} (no "
            f"{', '.join(x + '.tsv' for x in missing)}); it holds {', '.join(have) or 'no .tsv files'}"
        )
    dev_pairs, sources = config.data.corpus_dev_pairs, config.data.corpus_held_out_sources
    for lang in langs + controls + watch:
        train, held = read_pairs(request.pairs_dir, lang, max_bad_share=0.0).split(dev_pairs, sources)
        if not len(held):
            raise DataError(
                f"{Path(request.pairs_dir) / f'{lang}.tsv'}: no held-out document to score (data.corpus_dev_pairs = "
                f"{dev_pairs}): the report would have nothing the student never saw; hold out some pairs"
            )
        if not len(train) and lang not in watch:
            raise DataError(f"{Path(request.pairs_dir) / f'{lang}.tsv'}: every pair is held out; none left to train")
    if request.questions_dir:
        asked = pair_languages(request.questions_dir)
        for lang in [x for x in langs + controls if x in asked]:
            pairs = read_pairs(request.questions_dir, lang, max_bad_share=0.0)
            if pairs.splits is None or not len(pairs.trainable()):
                raise DataError(
                    f"{pairs.path}: no `split = train` row: relkt.teach trains on a question file's train rows alone "
                    "(the others are scored); mark some rows train, or move the file out of --questions-dir"
                )
    read_items(coverage_request(request, config))  # every file the report reads, strictly


def teach(request: TeachRequest, command: str = "") -> TeachResult:
    """Coverage before, the recommended student, coverage after, one report; `command` is recorded in it."""
    t0 = time.monotonic()
    config = student_config(request)
    check_formats(config.data)
    check_inputs(request, config)
    rest = config.student.language_rows.rest_lr_multiplier
    if rest and not codes(request.controls):
        log.warning(
            "no --controls: the network trains (student.language_rows.rest_lr_multiplier = %g) with no language the "
            "base reads replayed beside; expect them to drift (the recipe was measured with --controls ja,fr,ar,ru)",
            rest,
        )
    out = Path(request.output)
    student = api.train_student(config)
    t1 = time.monotonic()
    cover = coverage_request(request, config, student.spec)
    coverage_run(cover)
    t2 = time.monotonic()
    coverage = json.loads((Path(cover.output) / "report.json").read_text(encoding="utf-8"))
    summary = {
        "command": command,
        "langs": codes(request.langs),
        "controls": codes(request.controls),
        "watch": codes(request.watch),
        "recipe": request.config or "relkt/recipes/teach_student.yaml (the shipped recipe)",
        "student": {"run": config.output_dir, "spec": student.spec, "best": student.summary.get("best")},
        "start": student.summary.get("start"),
        "wall_seconds": {"student": round(t1 - t0, 1), "report": round(t2 - t1, 1), "total": round(t2 - t0, 1)},
        "request": dataclasses.asdict(request),
        "coverage": coverage,
    }
    md = teach_markdown(summary, (Path(cover.output) / "report.md").read_text(encoding="utf-8"))
    with atomic_files([out / "teach.json", out / "report.md"]) as (js, report_md):
        js.write(json_text(summary).encode("utf-8"))
        report_md.write(md.encode("utf-8"))
    return TeachResult(out, summary)


def teach_markdown(summary: dict[str, Any], coverage_md: str) -> str:
    """The teach report: what ran and how long, then the coverage report (its sections one level down)."""
    wall = summary["wall_seconds"]
    best, start = summary["student"]["best"] or {}, summary["start"] or {}
    lines = [
        f"# relkt.teach: {', '.join(summary['langs'])}",
        "",
        *([f"    {summary['command']}", ""] if summary["command"] else []),
        f"Taught: {', '.join(summary['langs'])}; controls (the base reads them; trained beside as replay): "
        f"{', '.join(summary['controls']) or 'none'}; watched (scored only, never trained): "
        f"{', '.join(summary['watch']) or 'none'}. Recipe: `{summary['recipe']}`; the run's resolved config: "
        f"`{summary['student']['run']}/config.yaml`.",
        "",
        f"Wall time: student {wall['student'] / 60:.1f} min, report {wall['report'] / 60:.1f} min, total "
        f"{wall['total'] / 60:.1f} min (this invocation; a resumed student counts only what it trained now).",
        "",
        f"Dev {best.get('metric', '?')}: {start.get('value', '?')} at the start, best {best.get('value', '?')} at step "
        f"{best.get('step', '?')}. Zero-shot is coverage before; student is coverage after; the test source's "
        "languages not taught show forgetting. Figure: [coverage/coverage.png](coverage/coverage.png).",
        "",
    ]
    body = re.sub(r"^(#+) ", r"#\1 ", coverage_md, flags=re.M)
    return "\n".join(lines) + "\n" + body.rstrip() + "\n"


def build_parser(prog: str = "python -m relkt.teach") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=prog, description=__doc__.split("\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--langs", required=True, help="comma-separated languages to teach, e.g. bn,te")
    p.add_argument("--pairs-dir", required=True, help="folder of {lang}.tsv pair files (source, en, xx)")
    p.add_argument("--output", required=True, help="run folder: student/, coverage/, report.md, teach.json")
    p.add_argument(
        "--questions-dir",
        default=None,
        help="folder of question files (id, split, xx, en): `split = train` rows train, the others are scored "
        "(default: none)",
    )
    p.add_argument(
        "--controls",
        default="",
        help="comma-separated languages the base reads, trained beside as replay (their teacher targets hold the "
        "network, which the recipe trains gently) and scored: forgetting (default: none)",
    )
    p.add_argument(
        "--watch",
        default="",
        help="comma-separated languages the base reads, scored before and after but never trained on: forgetting "
        "where the student does not replay them (default: none)",
    )
    p.add_argument(
        "--qa-dir",
        default=None,
        help="English QA source whose documents the d and dq terms read, e.g. ../shared/data/squad-train "
        "(default: data.data_dir's default, $RELKT_DATA_DIR)",
    )
    p.add_argument("--test-dir", default=None, help="a QA test source scored whole before and after (default: none)")
    p.add_argument("--teacher", default=None, help="the base encoder spec (default: the recipe's, muse)")
    p.add_argument("--config", default=None, help=f"the recipe (default: {RECIPE.name} in relkt/recipes)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="override a recipe key (repeat)")
    p.add_argument("--smoke", action="store_true", help="shrink the run for a quick check (default: off)")
    p.add_argument("--batch-size", type=positive_int, default=128, help="encoding batch of the report (default: 128)")
    p.add_argument(
        "--print-config", action="store_true", help="print the student's resolved config and exit (default: off)"
    )
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = vars(build_parser().parse_args(argv))
    show = args.pop("print_config")
    request = TeachRequest(**args)
    command = "python -m relkt.teach " + shlex.join(sys.argv[1:] if argv is None else list(argv))

    def body() -> int:
        if show:
            print(config_yaml(student_config(request)), end="")
            return 0
        result = teach(request, command)
        print(f"wrote {result.report} and {result.output / 'teach.json'}")
        return 0

    return run_cli(body, interrupted="interrupted; rerun the same command to resume the student")


if __name__ == "__main__":
    sys.exit(main())
