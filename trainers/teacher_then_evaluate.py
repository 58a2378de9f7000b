"""Stage 1 then scoring: train a teacher from a config, then evaluate its best export on the test articles.

python trainers/teacher_then_evaluate.py --config configs/quickstart/teacher.yaml [--set key=value ...]
"""

from __future__ import annotations

import sys

from relkt.cli import evaluate, train_teacher
from relkt.cli.common import Parser
from relkt.config import TeacherConfig, load_config


def main(argv: list[str] | None = None) -> int:
    p = Parser()
    p.add_argument("--config", required=True)
    p.add_argument("--set", action="append", default=[])
    args = p.parse_args(argv)
    sets = [x for s in args.set for x in ("--set", s)]
    if rc := train_teacher.main(["--config", args.config, *sets]):
        return rc
    config = load_config(TeacherConfig, args.config, args.set)
    d = config.data
    return evaluate.main(
        [
            "--encoder",
            f"hub:{config.output_dir}/best",
            "--split",
            "test",
            "--no-progress",
            "--split-fractions",
            ",".join(map(str, d.split_fractions)),
            "--split-seed",
            str(d.split_seed),
            *(["--data-dir", d.data_dir] if d.data_dir else []),
            "--output",
            f"{config.output_dir}/test.json",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
