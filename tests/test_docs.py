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
    limit = 150 if path == ROOT / "README.md" else 400
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


def readme_table(text: str) -> list[list[str]]:
    lines = text.splitlines()
    start = lines.index("| setup | result | chapter |") + 2
    rows = []
    while start < len(lines) and lines[start].startswith("|"):
        rows.append([c.strip() for c in lines[start].strip().strip("|").split("|")])
        start += 1
    return rows


def test_the_readme_is_a_landing_page_whose_numbers_link_to_their_chapters():
    """'Where it stands': a number and a link a row, each link a chapter of docs/results/ that the results index
    lists; dated timings and commit hashes stay in the chapters."""
    rows = readme_table((ROOT / "README.md").read_text(encoding="utf-8"))
    index = (ROOT / "docs" / "results" / "README.md").read_text(encoding="utf-8")
    assert 3 <= len(rows) <= 10
    for setup, result, chapter in rows:
        target = LINK.findall(chapter)
        assert len(target) == 1 and target[0].startswith("docs/results/"), chapter
        assert f"]({target[0].removeprefix('docs/results/').split('#')[0]}" in index, f"{target[0]} not in the index"
        assert len(result) <= 120, f"{setup}: a README cell is a number, its detail is in the chapter"
        for cell in (setup, result):
            assert not re.search(r"\b20\d\d-\d\d-\d\d\b", cell), f"a date in the README's table: {cell}"
            assert not re.search(r"\bat [0-9a-f]{7,40}\b", cell), f"a commit in the README's table: {cell}"
