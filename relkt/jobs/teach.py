"""Teach an encoder new languages from parallel text, and show what changed, in one call.

    from relkt import api
    from relkt.jobs.requests import TeachRequest

    result = api.teach(TeachRequest(langs=["bn", "te"], controls=["ja", "fr"], pairs_dir="../shared/data/parallel",
                                    questions_dir="../shared/data/xor-questions", output="runs/teach"))
    result.report, result.summary["coverage"]["figures"]

Coverage before (the base, zero-shot), the recommended student (relkt/recipes/teach_student.yaml, one file, with what
the request names set over it, then `set`), coverage after, and forgetting: the controls (languages the base reads,
trained beside as replay, the rows they read kept out of the taught set), the watched languages (`watch`: scored,
never trained) and the QA test source whole; with `qa_test_dir`, answer retrieval in each language of a QA source
(its questions against its own passages, and against English ones). One report, OUTPUT/report.md, with its figure
(OUTPUT/coverage/coverage.png) and OUTPUT/teach.json. Every input is read once and checked before anything trains;
the student and the report are handed what was read. Rerunning resumes the student and redoes the report.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
from collections import Counter
from pathlib import Path
from typing import Any

from relkt.config import StudentConfig
from relkt.config.config_io import as_overrides, run_config
from relkt.data.native_questions import native_sources
from relkt.data.pair_items import PairItems, check_taught_pairs, read_pair_items
from relkt.data.parallel_corpus import PairFiles, pair_file
from relkt.data.qa_format import check_format_name
from relkt.data.qa_source import QaSource
from relkt.data.selection import train_source
from relkt.data.student_inputs import StudentInputs
from relkt.data.unseen import check_unseen
from relkt.errors import ConfigError
from relkt.io import atomic_files, claim_dir, data_paths, json_text, refuse_bad_name, refuse_links
from relkt.jobs.coverage import run as coverage_run
from relkt.jobs.requests import CoverageRequest, TeachRequest
from relkt.jobs.results import RunResult, TeachResult

RECIPE = Path(__file__).resolve().parents[1] / "recipes" / "teach_student.yaml"
log = logging.getLogger(__name__)


def codes(names: list[str]) -> list[str]:
    """Language codes as given, trimmed and lower-cased, empty ones dropped."""
    return [x.strip().lower() for x in names if x.strip()]


def choose_other_domain(request: TeachRequest, reader: PairFiles | None = None) -> dict[str, str]:
    """{taught language: the source of its pair file held out whole}, the report's bitext of another domain: the
    request's `other_domain` when given, else for each taught language whose file holds two sources or more, its
    smallest (fewest pairs; the first by name on a tie), so the most pairs still train. A file of one source has
    none."""
    if request.other_domain is not None:
        return dict(request.other_domain)
    if not request.pairs_dir:
        return {}
    reader = reader or PairFiles()
    out = {}
    for lang in codes(request.langs):
        if not pair_file(request.pairs_dir, lang).is_file():
            continue  # check_inputs names the missing file
        counts = Counter(reader.read(request.pairs_dir, lang, max_bad_share=0.0).source)
        if len(counts) > 1:
            out[lang] = min(sorted(counts), key=lambda source: counts[source])
    return out


def student_config(request: TeachRequest, other_domain: dict[str, str] | None = None) -> StudentConfig:
    """The recipe with what the flags name set over it, then the request's `set` (a user's `--set` wins);
    `other_domain`: the sources held out whole (`choose_other_domain`'s, read here when not given)."""
    langs, controls = codes(request.langs), codes(request.controls)
    sets = {
        "data.corpus_other_domain": choose_other_domain(request) if other_domain is None else other_domain,
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
        encoders={"zero-shot": base, **({"student": student_spec} if student_spec else {})},
        langs=codes(request.langs) + codes(request.controls) + codes(request.watch),
        pairs_dir=request.pairs_dir,
        dev_pairs=config.data.corpus_dev_pairs,
        held_out_sources=list(config.data.corpus_held_out_sources),
        other_domain=dict(config.data.corpus_other_domain),
        questions_dir=request.questions_dir,
        test_dir=request.test_dir,
        qa_test_dir=request.qa_test_dir,
        learned=codes(request.langs),
        batch_size=request.batch_size,
        output=str(Path(request.output) / "coverage"),
    )


def check_languages(request: TeachRequest, source: str) -> None:
    """The languages the request names, against each other and the teacher's language `source`: one error naming the
    field (checked before the student's config is built from them, whose own message would name its keys instead)."""
    langs, controls = codes(request.langs), codes(request.controls)
    if not langs:
        raise ConfigError("TeachRequest.langs: name the languages to teach (e.g. bn, te)")
    if not request.pairs_dir:
        raise ConfigError("TeachRequest.pairs_dir: a folder of {lang}.tsv pair files (source, en, xx) is needed")
    both = sorted(set(langs) & set(controls))
    if both:
        raise ConfigError(
            f"TeachRequest.controls: {', '.join(both)} also in TeachRequest.langs; a control is a language not taught"
        )
    watch = codes(request.watch)
    trained = sorted(set(watch) & set(langs + controls))
    if trained:
        raise ConfigError(
            f"TeachRequest.watch: {', '.join(trained)} also in TeachRequest.langs or TeachRequest.controls; a watched "
            "language never trains"
        )
    if source in langs + controls + watch:
        raise ConfigError(
            f"TeachRequest.langs/TeachRequest.controls/TeachRequest.watch: {source} is the teacher's language "
            "(data.source_lang), not taught"
        )


def check_inputs(
    request: TeachRequest,
    config: StudentConfig,
    pair_files: PairFiles | None = None,
    cover: CoverageRequest | None = None,
) -> PairItems:
    """Everything the run will read, before anything trains: one error naming the file or field. Returns the
    report's items; every file is read through `pair_files`, once."""
    reader = pair_files or PairFiles()
    langs, controls, watch = codes(request.langs), codes(request.controls), codes(request.watch)
    check_languages(request, config.data.source_lang)
    data = config.data
    check_taught_pairs(
        request.pairs_dir,
        langs + controls,
        watch,
        data.corpus_dev_pairs,
        data.corpus_held_out_sources,
        request.questions_dir,
        reader,
        where="TeachRequest.",
        other_domain=config.data.corpus_other_domain,
    )
    cover = cover or coverage_request(request, config)
    check_format_name(config.data.format, "data.format")
    check_format_name(config.data.test_format, "data.test_format")
    if request.qa_test_dir:  # answer retrieval is scored on questions and passages no training row came from
        check_qa_test_source(request.qa_test_dir, config)
    return read_pair_items(
        cover.langs,
        cover.pairs_dir,
        cover.dev_pairs,
        cover.held_out_sources,
        cover.questions_dir,
        reader=reader,
        where="TeachRequest.",
        other_domain=cover.other_domain,
    )  # every file the report reads, strictly


def check_qa_test_source(qa_test_dir: str, config: StudentConfig) -> None:
    """The QA test source opens, holds questions, and shares no article, context or question id with the student's
    QA training source (`data.data_dir`) or its native questions (`data.native_qa`)."""
    test = QaSource.open(qa_test_dir)
    scored = test.read()
    name = f"{test.path} (TeachRequest.qa_test_dir)"
    held = [(train_source(config.data, download=False), "data.data_dir")]
    held += [(source, "data.native_qa") for source in native_sources(config.data)]
    for source, key in held:
        if source is not None:
            check_unseen(source.read(), scored, f"{source.path} ({key})", name, fix=QA_TEST_FIX)


QA_TEST_FIX = "score a QA source the student does not train on (MLQA dev when it trains on MLQA test, or the reverse)"


def teach(request: TeachRequest, command: str = "") -> TeachResult:
    """Coverage before, the recommended student, coverage after, one report; `command` is recorded in it."""
    from relkt.stages.student_trainer import StudentTrainer  # deferred: heavy (TensorFlow), after the checks

    t0 = time.monotonic()
    refuse_bad_name(request.output)  # before the student's config names a folder inside it
    pair_files = PairFiles()
    recipe = run_config(StudentConfig, request.config or RECIPE, request.set, request.smoke)
    check_languages(request, recipe.data.source_lang)  # before the languages are set into the student's config
    config = student_config(request, choose_other_domain(request, pair_files))
    before = coverage_request(request, config)  # the report's request, its student named once trained
    items = check_inputs(request, config, pair_files, before)
    # OUT and the two folders in it, before an hour of training
    out = claim_dir(request.output, "teach", reads=data_paths(request))
    refuse_links(out / "student", below=out)
    claim_dir(out / "coverage", "coverage", below=out)
    rest = config.student.language_rows.rest_lr_multiplier
    if rest and not codes(request.controls):
        log.warning(
            "no controls (TeachRequest.controls): the network trains (student.language_rows.rest_lr_multiplier = "
            "%g) with no language the base reads replayed beside; expect them to drift (the recipe was measured with "
            "controls ja, fr, ar, ru)",
            rest,
        )
    inputs = StudentInputs.for_config(config, pair_files)
    trained = StudentTrainer.train(config, inputs=inputs)
    student = RunResult(Path(config.output_dir), trained, config.student.spec or config.teacher.spec)
    t1 = time.monotonic()
    cover = dataclasses.replace(before, encoders={**before.encoders, "student": student.spec})
    report = coverage_run(cover, items)
    t2 = time.monotonic()
    coverage = report.report
    summary = {
        "command": command,
        "langs": codes(request.langs),
        "controls": codes(request.controls),
        "watch": codes(request.watch),
        "other_domain": dict(config.data.corpus_other_domain),
        "recipe": (request.config or "relkt/recipes/teach_student.yaml (the shipped recipe)")
        + (f", with --set {' '.join(request.set)}" if request.set else ""),
        "student": {"run": config.output_dir, "spec": student.spec, "best": student.summary.get("best")},
        "start": student.summary.get("start"),
        "wall_seconds": {"student": round(t1 - t0, 1), "report": round(t2 - t1, 1), "total": round(t2 - t0, 1)},
        "request": dataclasses.asdict(request),
        "coverage": coverage,
    }
    md = teach_markdown(summary, report.markdown)
    with atomic_files([out / "teach.json", out / "report.md"]) as (js, report_md):
        js.write(json_text(summary).encode("utf-8"))
        report_md.write(md.encode("utf-8"))
    return TeachResult(out, summary, report)


def teach_markdown(summary: dict[str, Any], coverage_md: str) -> str:
    """The teach report: what ran and how long, then the coverage report (its sections one level down)."""
    wall = summary["wall_seconds"]
    best, start = summary["student"]["best"] or {}, summary["start"] or {}
    lines = [
        f"# relkt teach: {', '.join(summary['langs'])}",
        "",
        *([f"    {summary['command']}", ""] if summary["command"] else []),
        f"Taught: {', '.join(summary['langs'])}; controls (the base reads them; trained beside as replay): "
        f"{', '.join(summary['controls']) or 'none'}; watched (scored only, never trained): "
        f"{', '.join(summary['watch']) or 'none'}. Bitext of another domain (a whole source held out of training): "
        f"{', '.join(f'{x} {src}' for x, src in summary['other_domain'].items()) or 'none'}. "
        f"Recipe: `{summary['recipe']}`; the run's resolved config: "
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
