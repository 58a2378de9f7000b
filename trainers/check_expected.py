"""Check a quickstart's test scores against the ranges the README states (measured over seeds), and the order the
method predicts (relkt.recipes.expected). Prints one line per check and exits 1 when any fails.

    python trainers/check_expected.py trainers/expected/quickstart_muse.yaml \
        --zero-shot runs/quickstart_muse/zero_shot_test.json --teacher runs/quickstart_muse/teacher/test.json \
        --student runs/quickstart_muse/student/test.json
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from relkt.cli.common import Parser
from relkt.errors import RelktError
from relkt.recipes.expected import MODELS, check_files, verdict


def main(argv: Sequence[str] | None = None) -> int:
    p = Parser(prog="python trainers/check_expected.py", description=__doc__.split("\n")[0])
    p.add_argument("expected", help="YAML of ranges and orderings (trainers/expected/*.yaml)")
    for model in MODELS:
        p.add_argument(
            f"--{model.replace('_', '-')}", required=True, help=f"the {model} results JSON of relkt evaluate"
        )
    args = p.parse_args(argv)
    try:
        lines = check_files(args.expected, args.zero_shot, args.teacher, args.student)
    except RelktError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(verdict(lines))
    return 0 if all(ok for ok, _ in lines) else 1


if __name__ == "__main__":
    sys.exit(main())
