"""The folds' scores pooled into one table: every fold's test questions in one results file a model
(`pool_results`), the group students' languages combined (`combine_groups`), CL-ReLKT's Table 2 beside ours
(`paper_table`), and the folds' wall time (`wall_seconds`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from relkt.analysis import mcnemar
from relkt.config.student_groups import StudentGroup, group_of_language
from relkt.errors import ConfigError
from relkt.io import atomic_write_json, atomic_write_npz, atomic_write_text, read_json, read_npz, read_yaml
from relkt.jobs.scoring import per_question_path, read_per_question
from relkt.metrics.per_question_scores import concatenate_scores, scores_by_language, summarise_scores

MODELS = ("zero_shot", "teacher", "student")
PAPER_FILE = Path(__file__).resolve().parent / "cl_relkt_paper.yaml"  # CL-ReLKT's Table 2 (XQuAD P@1)


def wall_seconds(out: Path) -> str:
    """fold, stage, seconds of each fold done so far: a trained run's `wall_seconds` (summed over the sessions it
    was resumed in; blank for a run finished before relkt recorded it) and each score's encoding and ranking."""
    rows = ["fold\tstage\tseconds"]
    folds = [p for p in out.glob("fold*") if p.is_dir() and p.name[4:].isdigit()]
    for fold in sorted(folds, key=lambda p: int(p.name[4:])):
        for summary in sorted(fold.glob("*/summary.json")):
            seconds = read_json(summary, "run summary").get("wall_seconds", "")
            rows.append(f"{fold.name[4:]}\t{summary.parent.name}\t{seconds}")
        for scored in sorted(fold.glob("*.json")):
            setup = read_json(scored, "results JSON").get("setup", {})
            if "encode_seconds" in setup:
                seconds = round(setup["encode_seconds"] + setup["score_seconds"], 1)
                rows.append(f"{fold.name[4:]}\tscore {scored.stem}\t{seconds}")
    return "\n".join(rows) + "\n"


def read_scores(path: Path) -> dict[str, np.ndarray]:
    """A scored fold's per-question scores (relkt.metrics.per_question_scores)."""
    return read_per_question(path)


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
        "export": {
            name: read_json(path, "results JSON").get("setup", {}).get("export") for name, path in scored.items()
        },
        "split_cut": read_json(next(iter(scored.values())), "results JSON").get("setup", {}).get("split_cut"),
    }
    atomic_write_npz(per_question_path(output), **combined)
    atomic_write_json(output, results)
    return results


def pool_results(paths: Sequence[Path], output: Path) -> dict:
    """Concatenate the folds' per-question scores and summarise them in relkt evaluate's JSON layout (the means a
    per-question file holds: LAReQA mAP, XX->EN P@1 per unit; each fold's LAReQA pool is its own test split)."""
    pooled = concatenate_scores([read_scores(path) for path in paths], str(output))
    results = summarise_scores(pooled)
    results["setup"] = {"pooled_from": [str(p) for p in paths], "split_cut": pooled_split(paths)}
    atomic_write_npz(per_question_path(output), **pooled)
    atomic_write_json(output, results)
    return results


def pooled_split(paths: Sequence[Path]) -> dict | None:
    """The folds' split as one: their unit, and the overlap over every fold's test questions (each fold's share
    weighted by its questions); None when a fold's score has no measure."""
    cuts = [read_json(p, "results JSON").get("setup", {}).get("split_cut") for p in paths]
    if not all(c and c.get("overlap") and c.get("test_questions") for c in cuts):
        return None
    n = sum(c["test_questions"] for c in cuts)
    return {
        "unit": cuts[0]["unit"],
        "test_questions": n,
        "overlap": {k: sum(c["overlap"][k] * c["test_questions"] for c in cuts) / n for k in ("context", "article")},
    }


def paper_table(out: Path, paper_file: Path = PAPER_FILE, unit: str = "article") -> Path:
    """Markdown: per language, CL-ReLKT's XQuAD P@1 (mUSE-small zero-shot / teacher / student) beside the pooled
    XX->EN P@1 at `unit` (article: every article of the data set; scored_article: the reference code's pool, the
    scored questions' own articles) of OUTPUT/{zero_shot,teacher,student}.json, McNemar's p of teacher vs zero-shot
    and of student vs teacher, and the pooled LAReQA mAP (each fold's pool: its test split, all languages).
    Written to OUTPUT/paper_table.md (article) or OUTPUT/paper_table_UNIT.md; returns its path."""
    paper = read_yaml(paper_file, "the paper's table")["xquad_p1"]
    hit = f"xx_en_{unit}_hit1"
    pq = {}
    for m in MODELS:
        z = read_npz(per_question_path(out / f"{m}.json"), "per-question file")
        order = np.lexsort((z["qas_id"].astype(str), z["lang"].astype(str)))
        pq[m] = {k: z[k][order] for k in ("qas_id", "lang", "AP")}
        pq[m]["hit"] = z[hit][order]
    if any(not np.array_equal(pq[m]["qas_id"], pq["zero_shot"]["qas_id"]) for m in MODELS):
        raise ConfigError(f"{out}: the pooled models do not hold the same questions")
    langs = [x for x in paper["muse_small"] if x in set(pq["zero_shot"]["lang"].tolist())]
    rows = []

    def p1(m, sel):
        return 100 * pq[m]["hit"][sel].mean()

    def p_value(a, b, sel):
        r = mcnemar(pq[a]["hit"][sel] > 0, pq[b]["hit"][sel] > 0)
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
        "McNemar p, teacher vs zero-shot (* < 0.05) | McNemar p, student vs teacher | LAReQA mAP: zero-shot / teacher "
        "/ student | questions |",
        "|---|---|---|---|---|---|---|",
    ]
    path = out / ("paper_table.md" if unit == "article" else f"paper_table_{unit}.md")
    atomic_write_text(path, "\n".join(head + rows) + "\n")
    return path
