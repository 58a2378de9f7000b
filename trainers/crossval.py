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
from relkt.errors import ConfigError
from relkt.io import atomic_write_json, atomic_write_npz, atomic_write_text

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

        try:
            setup = get_setup(args.setup)
        except ConfigError as e:
            p.error(str(e))
        if setup.recipe != "crossval":
            p.error(
                f"--setup {args.setup}: a {setup.recipe} setup, not crossval (bash trainers/reproduce.sh {args.setup})"
            )
        args.folds = args.folds or setup.folds
        args.teacher_config = args.teacher_config or str(SETUPS_FILE.parent / setup.teacher)
        args.student_config = args.student_config or str(SETUPS_FILE.parent / setup.student)
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
    common = [x for s in args.set for x in ("--set", s)] + split + (["--smoke"] if args.smoke else [])
    teacher_cfg = load_config(TeacherConfig, args.teacher_config, args.set)
    student_cfg = load_config(StudentConfig, args.student_config, args.set)
    teacher_dir = str(out / "teacher")

    def pointed(spec: str) -> str:  # the student config's teacher path -> this fold's teacher
        return spec.replace(str(teacher_cfg.output_dir).rstrip("/"), teacher_dir) if spec else spec

    teacher = ["--config", args.teacher_config, *common, "--set", f"output_dir={teacher_dir}"]
    student = [
        "--config",
        args.student_config,
        *common,
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
    if rc := train_student.main(student):
        raise SystemExit(rc)
    base = load_config(TeacherConfig, args.teacher_config, args.set).encoder.spec
    run_config = out / "teacher" / "config.yaml"
    score(args, base, run_config, out / "zero_shot.json")
    score(args, rebuild_spec(base, out / "teacher" / "best"), run_config, out / "teacher.json")
    score(args, rebuild_spec(base, out / "student" / "best"), out / "student" / "config.yaml", out / "student.json")
    print(f"fold {fold}: done in {time.perf_counter() - t0:.0f} s")


def pool_results(paths: Sequence[Path], output: Path) -> dict:
    """Concatenate the folds' per-question scores and summarise them in relkt.evaluate's JSON layout (the means a
    per-question file holds: LAReQA mAP, XX->EN P@1 per unit; each fold's LAReQA pool is its own test articles)."""
    parts = []
    for path in paths:
        with np.load(evaluate.per_question_path(path)) as z:
            parts.append({k: z[k] for k in z.files})
    keys = set.intersection(*(set(p) for p in parts))
    pooled = {k: np.concatenate([p[k] for p in parts]) for k in sorted(keys)}
    key = np.char.add(np.char.add(pooled["qas_id"].astype(str), "\x00"), pooled["lang"].astype(str))
    if len(np.unique(key)) != len(key):
        raise SystemExit(f"error: {output}: a question is scored in two folds; the folds overlap")
    langs = sorted(set(pooled["lang"].tolist()))
    results = {
        "lareqa": {
            "mAP": float(np.nanmean(pooled["AP"])),
            "n_questions": int(len(key)),
            "per_language": {lang: {"mAP": float(np.nanmean(pooled["AP"][pooled["lang"] == lang]))} for lang in langs},
        }
    }
    for hits in sorted(k for k in keys if k.startswith("xx_en") and k.endswith("_hit1")):
        results[hits[: -len("_hit1")]] = {
            lang: {
                "P@1": float(pooled[hits][pooled["lang"] == lang].mean()),
                "n_questions": int((pooled["lang"] == lang).sum()),
            }
            for lang in langs
        }
    results["setup"] = {"pooled_from": [str(p) for p in paths]}
    atomic_write_npz(evaluate.per_question_path(output), **pooled)
    atomic_write_json(output, results)
    return results


PAPER_FILE = Path(__file__).resolve().parent / "expected" / "cl_relkt_paper.yaml"


def paper_table(out: Path, paper_file: Path = PAPER_FILE) -> str:
    """Markdown: per language, CL-ReLKT's XQuAD P@1 (mUSE-small zero-shot / teacher / student) beside the pooled
    article-level XX->EN P@1 of OUTPUT/{zero_shot,teacher,student}.json, McNemar's p of teacher vs zero-shot and of
    student vs teacher, and the pooled LAReQA mAP (each fold's pool: its test articles, all languages)."""
    paper = yaml.safe_load(paper_file.read_text())["xquad_p1"]
    pq = {}
    for m in MODELS:
        with np.load(evaluate.per_question_path(out / f"{m}.json")) as z:
            order = np.lexsort((z["qas_id"].astype(str), z["lang"].astype(str)))
            pq[m] = {k: z[k][order] for k in ("qas_id", "lang", "AP", "xx_en_article_hit1")}
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
        "| lang | paper P@1: zero-shot / teacher / student | relkt P@1: zero-shot / teacher / student | McNemar p, "
        "teacher vs zero-shot (* < 0.05) | McNemar p, student vs teacher | LAReQA mAP: zero-shot / teacher / student | "
        "questions |",
        "|---|---|---|---|---|---|---|",
    ]
    text = "\n".join(head + rows) + "\n"
    atomic_write_text(out / "paper_table.md", text)
    return text


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.folds < 2:
        print(f"error: --folds must be >= 2, got {args.folds}", file=sys.stderr)
        return 2
    folds = range(args.folds) if args.only_folds is None else [int(x) for x in args.only_folds.split(",")]
    for fold in folds:
        run_fold(args, fold)
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
    print(json.dumps({m: str(out / f"{m}.json") for m in MODELS}))
    return rc


if __name__ == "__main__":
    sys.exit(main())
