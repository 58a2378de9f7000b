"""The README and docs stay readable and connected: short files, links that resolve, one headline table."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found, fence = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        fence ^= line.startswith("```")
        m = re.match(r"^#{1,6} (.+)$", line)
        if m and not fence:
            found.add(slug(m[1]))
    return found


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_doc_is_short_and_its_links_resolve(path):
    lines = len(path.read_text(encoding="utf-8").splitlines())
    limit = 350 if path == ROOT / "README.md" else 400
    assert lines <= limit, f"{path.name}: {lines} lines; a long result is a chapter of docs/results/ of its own"
    broken = []
    for target in LINK.findall(path.read_text(encoding="utf-8")):
        if target.startswith(("http://", "https://", "mailto:")):
            continue
        file, _, anchor = target.partition("#")
        dest = (path.parent / file).resolve() if file else path
        if not dest.exists():
            broken.append(target)
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            broken.append(target)
    assert not broken, f"{path.relative_to(ROOT)}: links to nothing: {broken}"


def headline_table(text: str) -> list[str]:
    lines = text.splitlines()
    start = lines.index("| what | result | bar | detail |")
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return lines[start:end]


def test_the_readme_copies_the_results_index_headline_table():
    readme = headline_table((ROOT / "README.md").read_text(encoding="utf-8"))
    index = headline_table((ROOT / "docs" / "results" / "README.md").read_text(encoding="utf-8"))
    # the same rows, each link seen from docs/results/
    assert [row.replace("](docs/results/", "](").replace("](#", "](../../README.md#") for row in readme] == index
