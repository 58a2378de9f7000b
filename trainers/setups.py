"""Print the setups of configs/setups.yaml (relkt.recipes.setups): `relkt reproduce --list` under its older name.

python trainers/setups.py --list
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from relkt.cli import reproduce


def main(argv: Sequence[str] | None = None) -> int:
    return reproduce.main(["--list"])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
