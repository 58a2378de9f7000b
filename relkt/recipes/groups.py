"""One student per language group from one teacher (relkt.config.student_groups), each scored on the run's test
split, then combined: every language as its own group's student scored it (`student.json`, read like any result).

    from relkt.recipes.groups import GroupStudents

    GroupStudents("configs/paper_muse_reference/student.yaml", groups, "runs/x",
                  sets=["teacher.spec=muse:runs/x/teacher/best"]).run()
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from relkt.config import StudentConfig, load_config, run_config
from relkt.config.student_groups import StudentGroup
from relkt.data.selection import train_source
from relkt.recipes.crossval import check_groups
from relkt.recipes.fold_scores import rebuild_spec, score_run
from relkt.recipes.pooled_tables import combine_groups


@dataclass
class GroupStudents:
    """The student config (a path), its groups, the output folder (OUTPUT/student_GROUP run folders, their scores,
    OUTPUT/student.json), overrides for every group, and the smoke switch."""

    student_config: str
    student_groups: tuple[StudentGroup, ...]
    output: str
    sets: Sequence[str] = ()
    smoke: bool = False
    name: str = ""  # the setup's name, for messages

    def config(self, group: StudentGroup) -> StudentConfig:
        data = load_config(StudentConfig, self.student_config, list(self.sets)).data
        out = Path(self.output) / f"student_{group.name}"
        overrides = group.overrides(data.source_lang, str(out), train_source(data).languages())
        return run_config(StudentConfig, self.student_config, [*self.sets, *overrides], self.smoke)

    def run(self) -> Path:
        """Check every group, train each, score each, combine; returns OUTPUT/student.json. Resumes as it goes."""
        from relkt.stages.student_trainer import StudentTrainer  # deferred: TensorFlow, only when students train

        student = load_config(StudentConfig, self.student_config, list(self.sets))
        where = f"setup {self.name}" if self.name else "student_groups"
        check_groups(self.student_groups, student, student.data, None, self.config, where)
        out = Path(self.output)
        configs = {g.name: self.config(g) for g in self.student_groups}
        for config in configs.values():
            StudentTrainer.train(config)
        base = student.teacher.spec
        for name in configs:
            run = out / f"student_{name}"
            score_run(rebuild_spec(base, run / "best"), run / "config.yaml", out / f"student_{name}.json")
        combine_groups(self.student_groups, {n: out / f"student_{n}.json" for n in configs}, out / "student.json")
        return out / "student.json"
