"""Article-level k-fold cross-validation of teacher and student: every question is scored once, on a model that never
trained on its article, and significance is computed on the pooled questions (CL-ReLKT's XQuAD tables).

    python trainers/crossval.py --folds 5 --teacher-config configs/xquad_muse_teacher.yaml \
        --student-config configs/xquad_muse_student.yaml --output runs/xquad_muse/crossval

For fold k of K (articles shuffled with data.split_seed, cut into K folds): the teacher and then the student train
on the other folds' articles (dev carved from them) in OUTPUT/fold{k}/teacher and OUTPUT/fold{k}/student, ordinary
resumable run folders; the zero-shot base, the teacher and the student are scored on fold k's articles
(OUTPUT/fold{k}/{zero_shot,teacher,student}.json). Then the folds' per-question scores are pooled into
OUTPUT/{zero_shot,teacher,student}.json (+ .per_question.npz) and compared (OUTPUT/comparison.md: paired bootstrap on
LAReQA mAP, McNemar on XX->EN article P@1). Killed, the same command resumes: finished runs and scores are kept, an
unfinished run resumes at its last checkpoint. A student config asking for more epochs trains the finished students
on, and a fold whose `best/` changed is scored again (each score records the export it scored).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import yaml

from relkt import evaluate
from relkt.analysis import mcnemar
from relkt.config import StudentConfig, TeacherConfig, load_config
from relkt.config.student_groups import StudentGroup, group_of_language
from relkt.data.parallel_corpus import pair_languages
from relkt.data.selection import scored_source, train_source
from relkt.errors import ConfigError, DataError
from relkt.io import atomic_write_json, atomic_write_npz, atomic_write_text
from relkt.metrics.per_question_scores import concatenate_scores, scores_by_language, summarise_scores

MODELS = ("zero_shot", "teacher", "student")


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python trainers/crossval.py", description=__doc__.split("\n")[0])
    p.add_argument(
        "--setup",
        default=None,
        help="a crossval setup of configs/setups.yaml: its folds and configs (python trainers/setups.py --list)",
    )
    p.add_argument("--folds", type=int, default=None, help="number of article folds (default: the setup's, else 5)")
    p.add_argument(
        "--only-folds",
        default=None,
        help="comma-separated folds to run now, e.g. 0,1 (default: all); the "
        "pooled tables are written once every fold is scored",
    )
    p.add_argument(
        "--teacher-config", help="stage-1 YAML (its encoder.spec is the zero-shot base; default: the setup's)"
    )
    p.add_argument(
        "--student-config",
        help="stage-2 YAML; its teacher and student specs are pointed at each fold's teacher (default: the setup's)",
    )
    p.add_argument("--output", required=True, help="folder of the fold runs and the pooled results")
    p.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override for both stages (e.g. data.split_seed=1)",
    )
    p.add_argument(
        "--teacher-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override for the teacher alone (e.g. mining.online_epochs=1)",
    )
    p.add_argument(
        "--student-set",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override for the student(s) alone (e.g. distill.epochs=2)",
    )
    p.add_argument(
        "--setups-file",
        default=None,
        help="the setups file --setup reads (default: configs/setups.yaml; its configs are relative to its folder)",
    )
    p.add_argument("--smoke", action="store_true", help="shrink both stages (each trainer's --smoke)")
    p.add_argument(
        "--max-length",
        type=int,
        default=None,
        help="tokens per text when scoring (default: relkt.evaluate's: "
        "whole articles for muse, the encoder's own limit for BERT)",
    )
    p.add_argument("--eval-langs", default=None, help="question/candidate languages scored (default: all)")
    args = p.parse_args(argv)
    if args.setup:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from setups import SETUPS_FILE, get_setup  # deferred: the sibling script, on the path just above

        setups_file = Path(args.setups_file) if args.setups_file else SETUPS_FILE
        try:
            setup = get_setup(args.setup, setups_file)
        except ConfigError as e:
            p.error(str(e))
        if setup.recipe != "crossval":
            p.error(
                f"--setup {args.setup}: a {setup.recipe} setup, not crossval (bash trainers/reproduce.sh {args.setup})"
            )
        args.folds = args.folds or setup.folds
        args.teacher_config = args.teacher_config or str(setups_file.parent / setup.teacher)
        args.student_config = args.student_config or str(setups_file.parent / setup.student)
        args.student_groups = setup.student_groups
        args.set = list(setup.set) + args.set
    else:
        args.student_groups = ()
    if not (args.teacher_config and args.student_config):
        p.error("name --setup, or both --teacher-config and --student-config")
    args.folds = args.folds or 5
    return args


def rebuild_spec(base_spec: str, export: Path) -> str:
    """A trained export as an encoder spec that takes --max-length: muse:DIR for a muse base, bert:DIR for BERT."""
    kind = base_spec.split(":", 1)[0]
    return f"muse:{export}" if kind == "muse" else f"bert:{export}" if kind in ("bert", "minilm") else f"hub:{export}"


def fold_commands(args: argparse.Namespace, fold: int) -> tuple[list[str], list[str], Path]:
    """The trainers' argument lists for one fold, and the fold's folder."""
    out = Path(args.output) / f"fold{fold}"
    split = ["--set", f"data.folds={args.folds}", "--set", f"data.fold={fold}"]
    common = sets(args.set) + split + (["--smoke"] if args.smoke else [])
    teacher_cfg = load_config(TeacherConfig, args.teacher_config, args.set + args.teacher_set)
    student_cfg = load_config(StudentConfig, args.student_config, args.set + args.student_set)
    teacher_dir = str(out / "teacher")

    def pointed(spec: str) -> str:  # the student config's teacher path -> this fold's teacher
        return spec.replace(str(teacher_cfg.output_dir).rstrip("/"), teacher_dir) if spec else spec

    teacher = ["--config", args.teacher_config, *common, *sets(args.teacher_set), "--set", f"output_dir={teacher_dir}"]
    student = [
        "--config",
        args.student_config,
        *common,
        *sets(args.student_set),
        "--set",
        f"output_dir={out / 'student'}",
        "--set",
        f"teacher.spec={pointed(student_cfg.teacher.spec)}",
    ]
    if student_cfg.student.spec:
        student += ["--set", f"student.spec={pointed(student_cfg.student.spec)}"]
    if pointed(student_cfg.teacher.spec) == student_cfg.teacher.spec:
        raise SystemExit(
            f"error: {args.student_config}: teacher.spec {student_cfg.teacher.spec!r} does not name the "
            f"teacher config's output_dir {teacher_cfg.output_dir!r}; crossval cannot point it at each fold's teacher"
        )
    return teacher, student, out


def sets(overrides: Sequence[str]) -> list[str]:
    return [x for s in overrides for x in ("--set", s)]


def group_commands(args: argparse.Namespace, student: list[str], out: Path) -> dict[str, list[str]]:
    """Each student group's trainer arguments: the fold's student, made the group's (its languages, dev languages,
    run folder OUTPUT/foldK/student_GROUP and settings; relkt.config.student_groups)."""
    data = load_config(StudentConfig, args.student_config, args.set + args.student_set).data
    held = train_source(data).languages()
    return {
        g.name: student + sets(g.overrides(data.source_lang, str(out / f"student_{g.name}"), held))
        for g in args.student_groups
    }


def export_identity(spec: str) -> str | None:
    """sha256 of the `relkt.json` of the export `spec` names (every export writes a new one: its time and training
    step); None for a base model (`muse`, `minilm`)."""
    path = spec.partition(":")[2]
    metadata = Path(path) / "relkt.json" if path else None
    return hashlib.sha256(metadata.read_bytes()).hexdigest() if metadata and metadata.exists() else None


def score(args: argparse.Namespace, spec: str, run_config: Path, output: Path) -> None:
    """relkt.evaluate on the fold's test articles (the run's split, from its config.yaml). A score already written is
    kept while the export it scored is the one there now (a run trained on to more epochs may have a new `best/`;
    its score is then redone, never reported stale)."""
    identity = export_identity(spec)
    if output.exists():
        if json.loads(output.read_text()).get("setup", {}).get("export") == identity:
            print(f"kept {output}")
            return
        print(f"rescoring {output}: {spec} is not the export it scored")
    argv = ["--encoder", spec, "--config", str(run_config), "--split", "test", "--output", str(output), "--no-progress"]
    if args.max_length and spec.split(":", 1)[0] in ("muse", "bert", "minilm"):  # a hub export keeps its length
        argv += ["--max-length", str(args.max_length)]
    if args.eval_langs:
        argv += ["--langs", args.eval_langs]
    if rc := evaluate.main(argv):
        raise SystemExit(rc)
    result = json.loads(output.read_text())
    result.setdefault("setup", {})["export"] = identity
    atomic_write_json(output, result)


def run_fold(args: argparse.Namespace, fold: int) -> None:
    from relkt import train_student, train_teacher  # deferred: TensorFlow, only when a fold runs

    teacher, student, out = fold_commands(args, fold)
    t0 = time.perf_counter()
    if rc := train_teacher.main(teacher):
        raise SystemExit(rc)
    groups = group_commands(args, student, out)
    for argv in groups.values() or [student]:
        if rc := train_student.main(argv):
            raise SystemExit(rc)
    base = load_config(TeacherConfig, args.teacher_config, args.set + args.teacher_set).encoder.spec
    run_config = out / "teacher" / "config.yaml"
    score(args, base, run_config, out / "zero_shot.json")
    score(args, rebuild_spec(base, out / "teacher" / "best"), run_config, out / "teacher.json")
    if not groups:
        score(args, rebuild_spec(base, out / "student" / "best"), out / "student" / "config.yaml", out / "student.json")
    for name in groups:
        run = out / f"student_{name}"
        score(args, rebuild_spec(base, run / "best"), run / "config.yaml", out / f"student_{name}.json")
    if groups:
        combine_groups(
            args.student_groups, {name: out / f"student_{name}.json" for name in groups}, out / "student.json"
        )
    print(f"fold {fold}: done in {time.perf_counter() - t0:.0f} s (this process)")
    atomic_write_text(out.parent / "wall_seconds.tsv", wall_seconds(out.parent))


def wall_seconds(out: Path) -> str:
    """fold, stage, seconds of each fold done so far: a trained run's `wall_seconds` (summed over the sessions it
    was resumed in; blank for a run finished before relkt recorded it) and each score's encoding and ranking."""
    rows = ["fold\tstage\tseconds"]
    folds = [p for p in out.glob("fold*") if p.is_dir() and p.name[4:].isdigit()]
    for fold in sorted(folds, key=lambda p: int(p.name[4:])):
        for summary in sorted(fold.glob("*/summary.json")):
            seconds = json.loads(summary.read_text()).get("wall_seconds", "")
            rows.append(f"{fold.name[4:]}\t{summary.parent.name}\t{seconds}")
        for scored in sorted(fold.glob("*.json")):
            setup = json.loads(scored.read_text()).get("setup", {})
            if "encode_seconds" in setup:
                seconds = round(setup["encode_seconds"] + setup["score_seconds"], 1)
                rows.append(f"{fold.name[4:]}\tscore {scored.stem}\t{seconds}")
    return "\n".join(rows) + "\n"


def check_groups(args: argparse.Namespace) -> None:
    """Before any training, every group at once: each scored language is in a group, each group's languages are in
    the data (the training source or a pair folder), and each group's student config loads with its `set` (an unknown
    key or a bad value is refused here, not after the groups before it have trained)."""
    if not args.student_groups:
        return
    where = f"setup {args.setup}" if getattr(args, "setup", None) else "student_groups"
    student = load_config(StudentConfig, args.student_config, args.set + args.student_set)
    teacher_config = getattr(args, "teacher_config", None)
    data = load_config(TeacherConfig, teacher_config, args.set + args.teacher_set).data if teacher_config else None
    scored_data = data or student.data
    scored = args.eval_langs.split(",") if args.eval_langs else scored_source(scored_data, "test")[0].languages()
    group_of_language(args.student_groups, scored, where)
    known = set(train_source(student.data).languages()) | {student.data.source_lang}
    for folder in ([student.data.corpus_dir] if student.data.corpus_dir else []) + list(student.data.more_pairs):
        known |= set(pair_languages(folder))
    for group in args.student_groups:
        unknown = [lang for lang in group.langs if lang not in known]
        if unknown:
            raise ConfigError(
                f"{where}: student_groups.{group.name}: {', '.join(unknown)} has no data (the training source and "
                f"pair folders hold {', '.join(sorted(known))})"
            )
    for name, argv in group_commands(args, [], Path(args.output)).items():
        overrides = [argv[i + 1] for i in range(0, len(argv), 2) if argv[i] == "--set"]
        try:
            load_config(StudentConfig, args.student_config, args.set + args.student_set + overrides)
        except ConfigError as e:
            raise ConfigError(f"{where}: student_groups.{name}: {e}") from None


def read_scores(path: Path) -> dict[str, np.ndarray]:
    with np.load(evaluate.per_question_path(path)) as z:
        return {k: z[k] for k in z.files}


def combine_groups(groups: Sequence[StudentGroup], scored: dict[str, Path], output: Path) -> dict:
    """One result for the group students: each language's questions as its own group's student scored them (every
    group's student scored the whole pool; a scored language in no group is an error)."""
    parts = {name: read_scores(path) for name, path in scored.items()}
    langs = sorted(set().union(*(set(p["lang"].tolist()) for p in parts.values())))
    owner = group_of_language(groups, langs, f"{output}: student_groups")
    combined = scores_by_language(parts, owner, str(output))
    results = summarise_scores(combined)
    results["setup"] = {
        "student_groups": {g.name: {"langs": list(g.langs), "settings": g.settings} for g in groups},
        "combined_from": {name: str(path) for name, path in scored.items()},
        "export": {name: json.loads(path.read_text()).get("setup", {}).get("export") for name, path in scored.items()},
        "split_cut": json.loads(next(iter(scored.values())).read_text()).get("setup", {}).get("split_cut"),
    }
    atomic_write_npz(evaluate.per_question_path(output), **combined)
    atomic_write_json(output, results)
    return results


def pool_results(paths: Sequence[Path], output: Path) -> dict:
    """Concatenate the folds' per-question scores and summarise them in relkt.evaluate's JSON layout (the means a
    per-question file holds: LAReQA mAP, XX->EN P@1 per unit; each fold's LAReQA pool is its own test articles)."""
    pooled = concatenate_scores([read_scores(path) for path in paths], str(output))
    results = summarise_scores(pooled)
    results["setup"] = {"pooled_from": [str(p) for p in paths], "split_cut": pooled_split([p for p in paths])}
    atomic_write_npz(evaluate.per_question_path(output), **pooled)
    atomic_write_json(output, results)
    return results


def pooled_split(paths: Sequence[Path]) -> dict | None:
    """The folds' split as one: their unit, and the overlap over every fold's test questions (each fold's share
    weighted by its questions); None when a fold's score has no measure."""
    cuts = [json.loads(p.read_text()).get("setup", {}).get("split_cut") for p in paths]
    if not all(c and c.get("overlap") and c.get("test_questions") for c in cuts):
        return None
    n = sum(c["test_questions"] for c in cuts)
    return {
        "unit": cuts[0]["unit"],
        "test_questions": n,
        "overlap": {k: sum(c["overlap"][k] * c["test_questions"] for c in cuts) / n for k in ("context", "article")},
    }


PAPER_FILE = Path(__file__).resolve().parent / "expected" / "cl_relkt_paper.yaml"


def paper_table(out: Path, paper_file: Path = PAPER_FILE, unit: str = "article") -> str:
    """Markdown: per language, CL-ReLKT's XQuAD P@1 (mUSE-small zero-shot / teacher / student) beside the pooled
    XX->EN P@1 at `unit` (article: every article of the data set; scored_article: the reference code's pool, the
    scored questions' own articles) of OUTPUT/{zero_shot,teacher,student}.json, McNemar's p of teacher vs zero-shot
    and of student vs teacher, and the pooled LAReQA mAP (each fold's pool: its test articles, all languages).
    Written to OUTPUT/paper_table.md (article) or OUTPUT/paper_table_UNIT.md."""
    paper = yaml.safe_load(paper_file.read_text())["xquad_p1"]
    hit = f"xx_en_{unit}_hit1"
    pq = {}
    for m in MODELS:
        with np.load(evaluate.per_question_path(out / f"{m}.json")) as z:
            order = np.lexsort((z["qas_id"].astype(str), z["lang"].astype(str)))
            pq[m] = {k: z[k][order] for k in ("qas_id", "lang", "AP")}
            pq[m]["xx_en_article_hit1"] = z[hit][order]
    if any(not np.array_equal(pq[m]["qas_id"], pq["zero_shot"]["qas_id"]) for m in MODELS):
        raise SystemExit(f"error: {out}: the pooled models do not hold the same questions")
    langs = [x for x in paper["muse_small"] if x in set(pq["zero_shot"]["lang"].tolist())]
    rows = []

    def p1(m, sel):
        return 100 * pq[m]["xx_en_article_hit1"][sel].mean()

    def p_value(a, b, sel):
        r = mcnemar(pq[a]["xx_en_article_hit1"][sel] > 0, pq[b]["xx_en_article_hit1"][sel] > 0)
        direction = "up" if r["only_b"] > r["only_a"] else "down" if r["only_a"] > r["only_b"] else "level"
        return f"{r['p_value']:.3f}{'*' if r['p_value'] < 0.05 else ''} ({direction})"

    for lang in langs + ["all"]:
        sel = pq["zero_shot"]["lang"] != "en" if lang == "all" else pq["zero_shot"]["lang"] == lang
        sel &= np.isin(pq["zero_shot"]["lang"], langs)
        paper_cells = " / ".join(
            f"{paper[k][lang]:.1f}" if lang != "all" else f"{np.mean([paper[k][x] for x in langs]):.1f}"
            for k in ("muse_small", "muse_teacher", "muse_student")
        )
        ours = " / ".join(f"{p1(m, sel):.1f}" for m in MODELS)
        maps = " / ".join(f"{100 * np.nanmean(pq[m]['AP'][sel]):.2f}" for m in MODELS)
        rows.append(
            f"| {lang if lang != 'all' else 'mean of ' + str(len(langs))} | {paper_cells} | {ours} | "
            f"{p_value('zero_shot', 'teacher', sel)} | {p_value('teacher', 'student', sel)} | {maps} "
            f"| {int(sel.sum())} |"
        )
    head = [
        f"| lang | paper P@1: zero-shot / teacher / student | relkt P@1 ({unit}): zero-shot / teacher / student | "
        "McNemar p, "
        "teacher vs zero-shot (* < 0.05) | McNemar p, student vs teacher | LAReQA mAP: zero-shot / teacher / student | "
        "questions |",
        "|---|---|---|---|---|---|---|",
    ]
    text = "\n".join(head + rows) + "\n"
    atomic_write_text(out / ("paper_table.md" if unit == "article" else f"paper_table_{unit}.md"), text)
    return text


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.folds < 2:
        print(f"error: --folds must be >= 2, got {args.folds}", file=sys.stderr)
        return 2
    folds = range(args.folds) if args.only_folds is None else [int(x) for x in args.only_folds.split(",")]
    try:
        check_groups(args)
        for fold in folds:
            run_fold(args, fold)
    except (ConfigError, DataError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    out = Path(args.output)
    scored = [[out / f"fold{k}" / f"{m}.json" for k in range(args.folds)] for m in MODELS]
    if not all(p.exists() for paths in scored for p in paths):
        print(f"folds {', '.join(map(str, folds))} done; pooled tables once all {args.folds} folds are scored")
        return 0
    for model, paths in zip(MODELS, scored):
        pool_results(paths, out / f"{model}.json")
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import compare  # deferred: the sibling script, on the path just above

    pooled = [str(out / f"{m}.json") for m in MODELS]
    rc = compare.main([*pooled, "--xx-en-unit", "article", "--output", str(out / "comparison.md")])
    rc = rc or compare.main(
        [*pooled, "--against", "first", "--xx-en-unit", "article", "--output", str(out / "comparison_vs_zero_shot.md")]
    )
    if not rc and (Path(__file__).resolve().parent / "expected" / "cl_relkt_paper.yaml").exists():
        print(paper_table(out))
        with np.load(evaluate.per_question_path(out / "student.json")) as z:
            if "xx_en_scored_article_hit1" in z.files:
                print(paper_table(out, unit="scored_article"))
    print(json.dumps({m: str(out / f"{m}.json") for m in MODELS}))
    return rc


if __name__ == "__main__":
    sys.exit(main())
