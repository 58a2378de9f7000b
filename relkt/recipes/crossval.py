"""k-fold cross-validation of teacher and student: every question is scored once, on a model that never trained on
its unit (article by default; `data.split_unit`), and significance is computed on the pooled questions (CL-ReLKT's
XQuAD tables).

    from relkt.recipes.crossval import CrossValidation

    cv = CrossValidation("configs/xquad_muse/teacher.yaml", "configs/xquad_muse/student.yaml", "runs/cv", folds=5)
    result = cv.run()            # or cv.run(only_folds=[0]) now, the rest later
    result.pooled["student"]     # runs/cv/student.json: every fold's test questions

For fold k of K (units shuffled with data.split_seed, cut into K folds): the teacher and then the student(s) train on
the other folds (dev carved from them) in OUTPUT/fold{k}/teacher and OUTPUT/fold{k}/student (or student_GROUP, one
per language group), ordinary resumable run folders; the zero-shot base, the teacher and the student are scored on
fold k (OUTPUT/fold{k}/{zero_shot,teacher,student}.json; the student's `last/` export too, student_last.json).
Once every fold is scored, the per-question scores are pooled into OUTPUT/{zero_shot,teacher,student,student_last}.json
(+ .per_question.npz) and compared (OUTPUT/comparison.md,
comparison_vs_zero_shot.md, paper_table.md). Interrupted, the same call resumes: finished runs and scores are kept, an
unfinished run resumes at its last checkpoint, and a fold whose `best/` changed is scored again. An ablation of the
student reuses another cross-validation's teachers (`teachers_from`: hard links, checked as on resume).
"""

from __future__ import annotations

import hashlib
import logging
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from relkt.analysis import mcnemar
from relkt.config import StudentConfig, TeacherConfig, load_config, run_config
from relkt.config.student_groups import StudentGroup, group_of_language
from relkt.data.parallel_corpus import pair_languages
from relkt.data.selection import scored_source, train_source
from relkt.errors import ConfigError
from relkt.io import (
    atomic_files,
    atomic_write_json,
    atomic_write_npz,
    atomic_write_text,
    link_tree,
    read_bytes,
    read_json,
    read_yaml,
)
from relkt.jobs.pool import run_pool
from relkt.jobs.scoring import per_question_path, read_per_question, score, write_evaluation, write_result_pair
from relkt.metrics.per_question_scores import concatenate_scores, scores_by_language, summarise_scores
from relkt.recipes.comparison import comparison, write_comparison
from relkt.recipes.setups import Setup

log = logging.getLogger("relkt.crossval")

MODELS = ("zero_shot", "teacher", "student")
PAPER_FILE = Path(__file__).resolve().parent / "cl_relkt_paper.yaml"  # CL-ReLKT's Table 2 (XQuAD P@1)


@dataclass
class CrossvalResult:
    """Where a cross-validation's files are: each fold's folder, and once every fold is scored the pooled results
    (model -> OUTPUT/MODEL.json) and tables (name -> path)."""

    output: Path
    folds: list[Path]
    pooled: dict[str, Path] = field(default_factory=dict)
    tables: dict[str, Path] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return bool(self.pooled)


@dataclass
class CrossValidation:
    """One cross-validation: the two stages' configs (paths), the output folder, K folds, the overrides for both
    stages (`sets`) or one (`teacher_sets`, `student_sets`), and optionally one student per language group."""

    teacher_config: str
    student_config: str
    output: str
    folds: int = 5
    sets: Sequence[str] = ()
    teacher_sets: Sequence[str] = ()
    student_sets: Sequence[str] = ()
    student_groups: tuple[StudentGroup, ...] = ()
    smoke: bool = False  # shrink both stages (the trainers' smoke switch)
    max_length: int | None = None  # tokens a text when scoring (default: relkt.jobs.scoring's)
    eval_langs: Sequence[str] | None = None  # the languages scored (default: all)
    name: str = ""  # the setup's name, for messages
    teachers_from: str | None = None  # another cross-validation's folder: its fold teachers are reused, not trained
    # the encoder scored as zero-shot; "" = the teacher config's encoder.spec. Set it when the teacher starts from
    # another run's export (teacher_sets encoder.spec=muse:DIR) so zero-shot stays the untrained base.
    zero_shot: str = ""

    @classmethod
    def from_setup(cls, setup: Setup, configs_dir: str | Path, output: str | Path, **changes) -> CrossValidation:
        """A crossval setup of the setups file (`relkt.recipes.setups`): its folds, configs, `set` and groups;
        `changes` (e.g. sets=[...], folds=2) are added to or replace them."""
        if setup.recipe != "crossval":
            raise ConfigError(f"setup {setup.name}: a {setup.recipe} setup, not crossval")
        extra_sets = list(changes.pop("sets", ()))
        changes["student_sets"] = [*setup.student_set, *changes.get("student_sets", ())]
        changes["teacher_sets"] = [*setup.teacher_set, *changes.get("teacher_sets", ())]
        changes["zero_shot"] = changes.get("zero_shot") or setup.zero_shot
        return cls(
            teacher_config=str(Path(configs_dir) / setup.teacher),
            student_config=str(Path(configs_dir) / setup.student),
            output=str(output),
            folds=changes.pop("folds", None) or setup.folds,
            sets=[*setup.set, *extra_sets],
            student_groups=setup.student_groups,
            name=setup.name,
            **changes,
        )

    def __post_init__(self):
        if self.folds < 2:
            raise ConfigError(f"cross-validation needs folds >= 2, got {self.folds}")
        self.sets, self.teacher_sets, self.student_sets = (
            list(self.sets),
            list(self.teacher_sets),
            list(self.student_sets),
        )

    # ----- configs ------------------------------------------------------------------------------------------------
    def teacher(self, fold: int) -> TeacherConfig:
        """Fold `fold`'s teacher config: the fold, its run folder OUTPUT/fold{k}/teacher."""
        out = self.fold_dir(fold) / "teacher"
        overrides = [*self.sets, *self._split(fold), *self.teacher_sets, f"output_dir={out}"]
        return run_config(TeacherConfig, self.teacher_config, overrides, self.smoke)

    def student(self, fold: int, group: StudentGroup | None = None) -> StudentConfig:
        """Fold `fold`'s student config (of `group`, when given): pointed at the fold's teacher."""
        out = self.fold_dir(fold)
        base = load_config(StudentConfig, self.student_config, [*self.sets, *self.student_sets])
        teacher_base = load_config(TeacherConfig, self.teacher_config, [*self.sets, *self.teacher_sets])

        def pointed(spec: str) -> str:  # the student config's teacher path -> this fold's teacher
            return spec.replace(str(teacher_base.output_dir).rstrip("/"), str(out / "teacher")) if spec else spec

        if pointed(base.teacher.spec) == base.teacher.spec:
            raise ConfigError(
                f"{self.student_config}: teacher.spec {base.teacher.spec!r} does not name the teacher config's "
                f"output_dir {teacher_base.output_dir!r}; crossval cannot point it at each fold's teacher"
            )
        overrides = [*self.sets, *self._split(fold), *self.student_sets, f"output_dir={out / 'student'}"]
        overrides.append(f"teacher.spec={pointed(base.teacher.spec)}")
        if base.student.spec:
            overrides.append(f"student.spec={pointed(base.student.spec)}")
        if group is not None:
            overrides += self.group_overrides(group, out / f"student_{group.name}")
        return run_config(StudentConfig, self.student_config, overrides, self.smoke)

    def _split(self, fold: int) -> list[str]:
        return [f"data.folds={self.folds}", f"data.fold={fold}"]

    def group_overrides(self, group: StudentGroup, output_dir: Path) -> list[str]:
        """The overrides that make the student config `group`'s student (relkt.config.student_groups)."""
        data = load_config(StudentConfig, self.student_config, [*self.sets, *self.student_sets]).data
        return group.overrides(data.source_lang, str(output_dir), train_source(data).languages())

    def fold_dir(self, fold: int) -> Path:
        """The folder of fold `k` under the output folder."""
        return Path(self.output) / f"fold{fold}"

    # ----- checks ------------------------------------------------------------------------------------------------
    def check(self) -> None:
        """Before any training, every fold's configs and every group at once: each resolves (an unknown key or a
        bad value is refused here), each scored language is in a group, each group's languages are in the data."""
        self.zero_shot_spec(self.teacher(0))
        self.student(0)
        check_groups(
            self.student_groups,
            load_config(StudentConfig, self.student_config, [*self.sets, *self.student_sets]),
            load_config(TeacherConfig, self.teacher_config, [*self.sets, *self.teacher_sets]).data,
            self.eval_langs,
            lambda group: self.student(0, group),
            f"setup {self.name}" if self.name else "student_groups",
        )

    # ----- the recipe --------------------------------------------------------------------------------------------
    def run(self, only_folds: Sequence[int] | None = None) -> CrossvalResult:
        """Train and score the folds (`only_folds`, default all), then pool and compare once every fold is scored."""
        self.check()
        folds = range(self.folds) if only_folds is None else list(only_folds)
        for fold in folds:
            self.run_fold(fold)
        result = CrossvalResult(Path(self.output), [self.fold_dir(k) for k in range(self.folds)])
        scored = {m: [self.fold_dir(k) / f"{m}.json" for k in range(self.folds)] for m in MODELS}
        if not all(p.exists() for paths in scored.values() for p in paths):
            log.info(
                "folds %s done; pooled tables once all %d folds are scored", ", ".join(map(str, folds)), self.folds
            )
            return result
        out = Path(self.output)
        for model, paths in scored.items():
            pool_results(paths, out / f"{model}.json")
            result.pooled[model] = out / f"{model}.json"
        last = [self.fold_dir(k) / "student_last.json" for k in range(self.folds)]
        if all(p.exists() for p in last):  # each fold's last/ (the comparison tables stay best/'s)
            pool_results(last, out / "student_last.json")
            result.pooled["student_last"] = out / "student_last.json"
        pooled = [result.pooled[m] for m in MODELS]
        for name, against in (("comparison.md", "previous"), ("comparison_vs_zero_shot.md", "first")):
            write_comparison(out / name, comparison(pooled, against, "article"))
            result.tables[name] = out / name
        result.tables["paper_table.md"] = paper_table(out)
        with np.load(per_question_path(out / "student.json")) as z:
            if "xx_en_scored_article_hit1" in z.files:
                result.tables["paper_table_scored_article.md"] = paper_table(out, unit="scored_article")
        return result

    def run_fold(self, fold: int) -> None:
        """Fold `fold`: teacher, student(s), then the three scores (each kept while the export it scored is there)."""
        from relkt.stages.student_trainer import StudentTrainer  # deferred: TensorFlow, only when a fold trains
        from relkt.stages.teacher_trainer import TeacherTrainer  # deferred: TensorFlow, only when a fold trains

        out, t0 = self.fold_dir(fold), time.perf_counter()
        teacher = self.teacher(fold)
        adopted = self.adopt_teacher(fold)
        try:
            TeacherTrainer.train(teacher)  # an adopted teacher is checked as on any resume, and kept
        except ConfigError as e:
            if not adopted:
                raise
            for path in adopted:  # nothing of the refused teacher stays behind in this folder
                shutil.rmtree(path) if path.is_dir() else path.unlink()
            raise ConfigError(
                f"teachers_from {self.teachers_from}: fold {fold}'s teacher is not this one's: {e}"
            ) from e
        students = {g.name: self.student(fold, g) for g in self.student_groups} or {"": self.student(fold)}
        for config in students.values():
            StudentTrainer.train(config)
        base = teacher.encoder.spec
        teacher_run = out / "teacher" / "config.yaml"
        self.score(self.zero_shot_spec(teacher), teacher_run, out / "zero_shot.json")
        self.score(rebuild_spec(base, out / "teacher" / "best"), teacher_run, out / "teacher.json")
        for name, config in students.items():
            run, suffix = Path(config.output_dir), f"_{name}" if name else ""
            self.score(rebuild_spec(base, run / "best"), run / "config.yaml", out / f"student{suffix}.json")
            self.score_last(base, run, out / f"student{suffix}.json", out / f"student{suffix}_last.json")
        if self.student_groups:
            for tail in ("", "_last"):
                parts = {n: out / f"student_{n}{tail}.json" for n in students}
                if all(path.exists() for path in parts.values()):
                    combine_groups(self.student_groups, parts, out / f"student{tail}.json")
        log.info("fold %d: done in %.0f s (this process)", fold, time.perf_counter() - t0)
        atomic_write_text(Path(self.output) / "wall_seconds.tsv", wall_seconds(Path(self.output)))

    def zero_shot_spec(self, teacher: TeacherConfig) -> str:
        """The model scored before training: `zero_shot`, of the teacher's encoder kind, else the teacher's start."""
        if not self.zero_shot:
            return teacher.encoder.spec
        if self.zero_shot.partition(":")[0] != teacher.encoder.spec.partition(":")[0]:
            raise ConfigError(
                f"zero_shot {self.zero_shot!r} is not of the teacher's encoder kind ({teacher.encoder.spec!r}): the "
                "teacher must start from a model of the base it is compared with"
            )
        return self.zero_shot

    def adopt_teacher(self, fold: int) -> list[Path]:
        """Fold `fold`'s teacher run (hard links) and its and the zero-shot's scores, from the same fold of
        `teachers_from`, while this fold has no teacher: an ablation of the student trains no teacher again. The
        teacher's config guard and fingerprints then check it as on any resume (another teacher config, split or
        data is refused). Returns what was copied (nothing when there is no source or the fold has a teacher)."""
        if not self.teachers_from or (self.fold_dir(fold) / "teacher").exists():
            return []
        src, out = Path(self.teachers_from) / f"fold{fold}", self.fold_dir(fold)
        if not (src / "teacher" / "best").is_dir():
            raise ConfigError(
                f"teachers_from {self.teachers_from}: {src / 'teacher'} holds no trained teacher (no best/)"
            )
        out.mkdir(parents=True, exist_ok=True)
        copied = [link_tree(src / "teacher", out / "teacher")]
        for model in ("zero_shot", "teacher"):  # each kept by score_run while the export it scored is the one here
            scores = src / f"{model}.json"
            if scores.exists() and per_question_path(scores).exists():
                pair = [per_question_path(scores), scores]
                with atomic_files([out / path.name for path in pair]) as files:  # both or neither
                    for f, path in zip(files, pair):
                        f.write(read_bytes(path, "results file"))
                copied += [out / path.name for path in pair]
        log.info("fold %d: teacher and its scores from %s", fold, src)
        return copied

    def score(self, spec: str, run_config_path: Path, output: Path) -> None:
        score_run(spec, run_config_path, output, self.eval_langs, self.max_length)

    def score_last(self, base: str, run: Path, best_score: Path, output: Path) -> None:
        """The student's `last/` beside its dev-selected `best/`: a dev metric that stops on noise picks a model that
        still gained to the end (docs/results/best_recipe_pieces.md, "Which export is scored"). A `last/` that is
        `best/` (the best step was the last) takes best's scores, marked so."""
        last = rebuild_spec(base, run / "last")
        if not (run / "last").exists():
            log.warning("%s has no last/ (a run from before relkt kept one): only best/ is scored", run)
            return
        if export_identity(last) != export_identity(rebuild_spec(base, run / "best")):
            self.score(last, run / "config.yaml", output)
            return
        results = read_json(best_score, "results JSON")
        setup = {k: v for k, v in results["setup"].items() if k not in ("encode_seconds", "score_seconds")}
        results["setup"] = {**setup, "same_export_as": best_score.name}
        write_result_pair(results, read_scores(best_score), output)


def score_run(
    spec: str,
    run_config_path: Path,
    output: Path,
    langs: Sequence[str] | None = None,
    max_length: int | None = None,
) -> None:
    """`spec` on a run's test split (its own split, from its config.yaml). A score already written is kept while
    the model it scored is the one there now (a run trained on to more epochs may have a new `best/`, a fold's
    zero-shot may now be another base; its score is then redone, never reported stale)."""
    from relkt.encoders.encoder_kind import kind_of  # deferred: TensorFlow

    identity = export_identity(spec)
    if output.exists():
        scored = read_json(output, "results JSON").get("setup", {})
        # An export is known by its relkt.json (a copy linked in from another fold folder is the same model); a base
        # model (`muse`, `minilm`: no relkt.json) by its spec.
        if scored.get("export") == identity and (identity is not None or scored.get("encoder") == spec):
            print(f"kept {output}")
            return
        print(f"rescoring {output}: {spec} is not the model it scored")
    data = run_pool(run_config_path)
    takes = kind_of(spec).takes_max_length  # a hub export keeps its length
    result = score(spec, data, "test", langs, max_length=max_length if takes else None, progress=False)
    result.results["setup"]["config"] = str(run_config_path)
    result.results["setup"]["export"] = identity
    write_evaluation(result, output)


def rebuild_spec(base_spec: str, export: Path) -> str:
    """A trained export as the spec its base's kind reads it by (muse:DIR, bert:DIR: their length still chooseable)."""
    from relkt.encoders.encoder_kind import kind_of  # deferred: TensorFlow

    return kind_of(base_spec).rebuild_spec(str(export))


def export_identity(spec: str) -> str | None:
    """sha256 of the `relkt.json` of the export `spec` names (every export writes a new one: its time and training
    step); None for a base model (`muse`, `minilm`)."""
    path = spec.partition(":")[2]
    metadata = Path(path) / "relkt.json" if path else None
    return hashlib.sha256(read_bytes(metadata, "relkt.json")).hexdigest() if metadata and metadata.exists() else None


def check_groups(groups, student: StudentConfig, scored_data, eval_langs, group_config, where: str) -> None:
    """Every student group at once, before the first trains: each scored language is in a group, each group's
    languages are in the data (the training source, a pair folder), each group's config (`group_config(group)`)
    resolves with its `set`."""
    if not groups:
        return
    scored = list(eval_langs) if eval_langs else scored_source(scored_data, "test")[0].languages()
    group_of_language(groups, scored, where)
    known = set(train_source(student.data).languages()) | {student.data.source_lang}
    for folder in ([student.data.corpus_dir] if student.data.corpus_dir else []) + list(student.data.more_pairs):
        known |= set(pair_languages(folder))
    for group in groups:
        unknown = [lang for lang in group.langs if lang not in known]
        if unknown:
            raise ConfigError(
                f"{where}: student_groups.{group.name}: {', '.join(unknown)} has no data (the training source and "
                f"pair folders hold {', '.join(sorted(known))})"
            )
    for group in groups:
        try:
            group_config(group)
        except ConfigError as e:
            at = f"student_groups.{group.name}"
            said = str(e).removeprefix(f"{at}: ")  # the group's own message names it already: say it once
            raise ConfigError(f"{where}: {at}: {said}") from None


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
        with np.load(per_question_path(out / f"{m}.json")) as z:
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
