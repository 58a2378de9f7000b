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
    start = next(i for i, line in enumerate(lines) if line.startswith("| setup | model | pool |")) + 2
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
    assert 3 <= len(rows) <= 30
    for setup, _, _, _, *cells, chapter in rows:
        result = " | ".join(cells)
        target = LINK.findall(chapter)
        assert len(target) == 1 and target[0].startswith("docs/results/"), chapter
        assert f"]({target[0].removeprefix('docs/results/').split('#')[0]}" in index, f"{target[0]} not in the index"
        assert len(result) <= 120, f"{setup}: a README cell is a number, its detail is in the chapter"
        for cell in (setup, result):
            assert not re.search(r"\b20\d\d-\d\d-\d\d\b", cell), f"a date in the README's table: {cell}"
            assert not re.search(r"\bat [0-9a-f]{7,40}\b", cell), f"a commit in the README's table: {cell}"


def test_the_results_index_is_short_lines_without_issue_numbers():
    index = (ROOT / "docs" / "results" / "README.md").read_text(encoding="utf-8")
    long = [line[:60] for line in index.splitlines() if len(line) > 200]
    assert not long, f"docs/results/README.md: lines over 200 characters: {long}"
    assert not re.search(r"#\d+\b", index), "an issue number a reader of the repository cannot open"
    listed = set(re.findall(r"\]\(([a-z_]+\.md)\)", index))
    chapters = {p.name for p in (ROOT / "docs" / "results").glob("*.md")} - {"README.md"}
    assert listed == chapters, f"chapters not in the index: {sorted(chapters - listed)}"


COMMAND = re.compile(
    r"(?:(?<!from )(?<![\w.])relkt (?P<cmd>[a-z][a-z-]*))|(?:python -m (?P<module>relkt[\w.]*))"
    r"|(?P<path>(?:trainers|benchmarks)/[\w./-]+\.(?:py|sh))"
)


def quoted_commands(text: str) -> list[re.Match]:
    """Commands in code: fenced blocks and `inline` spans."""
    code = re.findall(r"```.*?```", text, re.S) + re.findall(r"`[^`\n]+`", text)
    return [m for block in code for m in COMMAND.finditer(block)]


def runnable(module: str) -> bool:
    """Whether `python -m module` runs something: a module with a `__main__` block, or a package with __main__.py."""
    import importlib.util

    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        return False
    source = Path(spec.origin)
    if source.name == "__init__.py":
        source = source.parent / "__main__.py"
    return source.exists() and "__main__" in source.read_text(encoding="utf-8")


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_command_a_doc_quotes_names_what_exists(path):
    from relkt.cli.__main__ import COMMANDS

    missing = []
    for m in quoted_commands(path.read_text(encoding="utf-8")):
        if m["cmd"] and m["cmd"] not in COMMANDS:
            missing.append(f"relkt {m['cmd']}")
        if m["module"] and not runnable(m["module"].rstrip(".")):
            missing.append(f"python -m {m['module']}")
        if m["path"] and not (ROOT / m["path"]).exists():
            missing.append(m["path"])
    assert not missing, f"{path.relative_to(ROOT)} quotes commands that do not exist: {sorted(set(missing))}"
