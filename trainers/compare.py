"""Print results.json files from relkt.evaluate side by side (LAReQA mAP and XX->EN P@1 per language).

    python trainers/compare.py runs/x/zero_shot_test.json runs/x/teacher/test.json runs/x/student/test.json
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> None:
    paths = [Path(p) for p in (argv if argv is not None else sys.argv[1:])]
    results = [json.loads(p.read_text()) for p in paths]
    names = [p.parent.name if p.name == "test.json" else p.stem for p in paths]
    langs = sorted(results[0]["lareqa"]["per_language"])
    print("| lang | " + " | ".join(f"{n} mAP" for n in names) + " | " + " | ".join(f"{n} XX->EN P@1" for n in names) + " |")
    print("|---" * (1 + 2 * len(names)) + "|")
    for lang in langs:
        maps = [f"{100 * r['lareqa']['per_language'][lang]['mAP']:.2f}" for r in results]
        p1 = [f"{100 * r['xx_en'][lang]['P@1']:.2f}" for r in results]
        print(f"| {lang} | " + " | ".join(maps) + " | " + " | ".join(p1) + " |")
    maps = [f"**{100 * r['lareqa']['mAP']:.2f}**" for r in results]
    p1 = [f"{100 * sum(v['P@1'] for v in r['xx_en'].values()) / len(r['xx_en']):.2f} (mean)" for r in results]
    print("| all | " + " | ".join(maps) + " | " + " | ".join(p1) + " |")


if __name__ == "__main__":
    main()
