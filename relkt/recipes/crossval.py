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
(+ .per_question.npz) and compared (OUTPUT/comparison.md, comparison_vs_zero_shot.md, paper_table.md:
relkt.recipes.pooled_tables; each score: relkt.recipes.fold_scores). Interrupted, the same call resumes: finished runs
and scores are kept, an unfinished run resumes at its last checkpoint, and a fold whose `best/` changed is scored
again. An ablation of the student reuses another cross-validation's teachers (`teachers_from`: hard links, checked as
on resume).
"""

from __future__ import annotations

import dataclasses
import logging
import re
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from relkt.config import StudentConfig, TeacherConfig, load_config, run_config
from relkt.config.student_groups import StudentGroup, group_of_language
from relkt.data.parallel_corpus import pair_languages
from relkt.data.selection import scored_source, train_source
from relkt.errors import ConfigError
from relkt.io import (
    OUTPUT_MARKER,
    atomic_files,
    atomic_write_text,
    check_output_dir,
    claim_dir,
    data_paths,
    link_tree,
    npz_keys,
    read_bytes,
    refuse_bad_name,
)
from relkt.jobs.scoring import per_question_path
from relkt.recipes.comparison import comparison, write_comparison
from relkt.recipes.fold_scores import FoldScore, length_for, rebuild_spec, score_fold
from relkt.recipes.pooled_tables import MODELS, combine_groups, paper_table, pool_results, wall_seconds
from relkt.recipes.setups import Setup

log = logging.getLogger("relkt.crossval")
FOLD = re.compile(r"^fold\d+$")  # a fold's folder
OWN_FILE = re.compile(r"^[a-z_]+(\.per_question\.npz|\.json|\.md|\.tsv)$")  # the pooled scores and tables


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
    def claim_output(self, make: bool = True) -> Path:
        """The output folder through the write door, before anything is read or trained: new, empty or a
        cross-validation's own (its marker; or, from before relkt marked it, nothing but its folds and tables), never
        a user's folder, another job's output or the data the stages read. `make`: False makes no folder."""
        refuse_bad_name(self.output)  # a name no file system holds: one line, before anything looks at it
        out = Path(self.output)
        if out.is_dir() and not (out / OUTPUT_MARKER).exists() and not out.is_symlink():
            names = [p.name for p in out.iterdir()]
            if any(FOLD.match(n) for n in names) and all(FOLD.match(n) or OWN_FILE.match(n) for n in names):
                atomic_write_text(out / OUTPUT_MARKER, '{"written_by": "relkt", "kind": "crossval"}\n')
        configs = (
            load_config(TeacherConfig, self.teacher_config, [*self.sets, *self.teacher_sets]),
            load_config(StudentConfig, self.student_config, [*self.sets, *self.student_sets]),
        )
        return (claim_dir if make else check_output_dir)(self.output, "crossval", reads=data_paths(*configs))

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
        self.claim_output(make=False)  # the door first, then the plan's checks, then the folder made
        self.check()
        self.claim_output()
        folds = range(self.folds) if only_folds is None else list(only_folds)
        for fold in folds:
            self.run_fold(fold)
        for fold in folds if self.student_groups else ():  # each fold's group students as one student's scores
            out = self.fold_dir(fold)
            for tail in ("", "_last"):
                parts = {g.name: out / f"student_{g.name}{tail}.json" for g in self.student_groups}
                if all(path.exists() for path in parts.values()):
                    combine_groups(self.student_groups, parts, out / f"student{tail}.json")
        atomic_write_text(Path(self.output) / "wall_seconds.tsv", wall_seconds(Path(self.output)))
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
        if "xx_en_scored_article_hit1" in npz_keys(per_question_path(out / "student.json"), "per-question file"):
            result.tables["paper_table_scored_article.md"] = paper_table(out, unit="scored_article")
        return result

    def run_fold(self, fold: int) -> None:
        """Fold `fold`, top to bottom: its runs trained (each resumed, or kept when finished), then every score of the
        fold in one pass (each kept while the export it scored is there)."""
        t0 = time.perf_counter()
        teacher = self.teacher(fold)
        students = self.train(fold, teacher)
        scores = self.fold_scores(fold, teacher, students)
        score_fold(scores, self.eval_langs)
        log.info("fold %d: done in %.0f s (this process)", fold, time.perf_counter() - t0)

    def train(self, fold: int, teacher: TeacherConfig) -> dict[str, StudentConfig]:
        """The fold's teacher (adopted from `teachers_from` when asked), then its student(s); returns the students'
        configs by group name ("" for one student)."""
        from relkt.stages.student_trainer import StudentTrainer  # deferred: TensorFlow, only when a fold trains
        from relkt.stages.teacher_trainer import TeacherTrainer  # deferred: TensorFlow, only when a fold trains

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
        groups: Sequence[StudentGroup | None] = self.student_groups or (None,)
        students = {group.name if group else "": self.student(fold, group) for group in groups}
        for config in students.values():
            StudentTrainer.train(config)
        return students

    def fold_scores(self, fold: int, teacher: TeacherConfig, students: dict[str, StudentConfig]) -> list[FoldScore]:
        """What fold `fold` scores, each on its run's own test split: the zero-shot base, the teacher, and each
        student's `best/` and `last/` (a dev metric that stops on noise picks a model that still gained to the end:
        docs/results/best_recipe_pieces.md, "Which export is scored"; a `last/` that is `best/` takes best's
        scores, marked so)."""
        out, base = self.fold_dir(fold), teacher.encoder.spec
        zero_shot = self.zero_shot_spec(teacher)
        scores = [FoldScore(zero_shot, out / "teacher" / "config.yaml", out / "zero_shot.json")]
        runs = [("teacher", out / "teacher")]
        runs += [(f"student_{name}" if name else "student", Path(c.output_dir)) for name, c in students.items()]
        for name, run in runs:
            exports = {"best": f"{name}.json"}
            if name != "teacher" and (run / "last").exists():
                exports["last"] = f"{name}_last.json"
            elif name != "teacher":
                log.warning("%s has no last/ (a run from before relkt kept one): only best/ is scored", run)
            best = None  # a last/ that is best/ takes best's scores
            for export, scored in exports.items():
                job = FoldScore(rebuild_spec(base, run / export), run / "config.yaml", out / scored, best_of=best)
                scores.append(job)
                best = best or job
        return [dataclasses.replace(job, max_length=length_for(job.spec, self.max_length)) for job in scores]

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
