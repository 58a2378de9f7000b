"""docs/architecture.md's table is the import rule: every relkt module imports only the packages its row lists
(plus errors, io, registry and the relkt root); imports inside functions say why they are deferred; the TF-free
layers stay so."""

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ALWAYS = {"errors", "io", "registry", "names", "__init__"}


def rules() -> dict[str, set[str]]:
    """{unit: units it may import}, read off the table (a unit: `relkt.X`, X a package or a top-level module)."""
    out = {}
    for line in (ROOT / "docs" / "architecture.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not cells[0].startswith("`relkt."):
            continue
        allowed = set(re.findall(r"`([a-z_]+)`", cells[2]))
        for unit in re.findall(r"`relkt\.([a-z_]+)`", cells[0]):
            out[unit] = allowed
    return out


def modules():
    for path in sorted((ROOT / "relkt").rglob("*.py")):
        parts = path.relative_to(ROOT / "relkt").with_suffix("").parts
        yield path, ("__init__" if parts == ("__init__",) else parts[0])


def _is_module(name: str) -> bool:
    return (ROOT / "relkt" / f"{name}.py").exists() or (ROOT / "relkt" / name).is_dir()


def relkt_imports(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module != "relkt":
                names = [node.module]
            else:  # `from relkt import io` is the module io; `from relkt import PAPER_WEIGHTS` is the root's name
                names = [f"relkt.{a.name}" if _is_module(a.name) else "relkt.__init__" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        found += [(node.lineno, n.split(".")[1]) for n in names if n.startswith("relkt.")]
    return found


def test_the_table_names_every_package_and_module():
    table = rules()
    units = {unit for _, unit in modules()} - {"__init__"}
    assert units <= set(table), f"not in docs/architecture.md: {sorted(units - set(table))}"


def test_every_module_imports_only_what_its_row_allows():
    table, broken = rules(), []
    for path, unit in modules():
        if unit == "__init__":
            continue
        for line, target in relkt_imports(ast.parse(path.read_text())):
            if target != unit and target not in ALWAYS and target not in table[unit]:
                broken.append(
                    f"{path.relative_to(ROOT)}:{line} imports relkt.{target} (relkt.{unit} may import "
                    f"{', '.join(sorted(table[unit])) or 'nothing'})"
                )
    assert not broken, "\n".join(broken)


def test_imports_inside_functions_say_why_they_are_deferred():
    undocumented = []
    for path in (
        sorted(ROOT.glob("relkt/**/*.py")) + sorted(ROOT.glob("trainers/*.py")) + sorted(ROOT.glob("benchmarks/*.py"))
    ):
        lines = path.read_text().splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for sub in ast.walk(node):
                    if isinstance(sub, (ast.Import, ast.ImportFrom)) and "# deferred:" not in lines[sub.lineno - 1]:
                        undocumented.append(f"{path.relative_to(ROOT)}:{sub.lineno}: {lines[sub.lineno - 1].strip()}")
    assert not undocumented, "imports inside functions without a `# deferred:` reason:\n" + "\n".join(undocumented)


@pytest.mark.parametrize(
    "module",
    [
        "relkt.cli",
        "relkt.cli.__main__",
        "relkt.cli.evaluate",
        "relkt.cli.coverage",
        "relkt.cli.teach",
        "relkt.cli.interpolate",
        "relkt.cli.train_teacher",
        "relkt.cli.train_student",
        "relkt.train_teacher",
        "relkt.train_student",
        "relkt.config",
        "relkt.data",
        "relkt.metrics",
        "relkt.analysis",
        "relkt.reports.tables",
        "relkt.jobs.scoring",
        "relkt.jobs.coverage",
        "relkt.jobs.teach",
        "relkt.jobs.interpolate",
        "relkt.api",
        "relkt.recipes.crossval",
    ],
)
def test_tensorflow_free_layers_do_not_load_it(module):
    code = f"import sys, {module}; heavy = [m for m in ('tensorflow', 'keras') if m in sys.modules]; print(heavy)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]", f"importing {module} loads {out.stdout.strip()}"


def test_a_forbidden_import_is_caught(tmp_path):
    """The checker itself: an encoders module importing relkt.analysis breaks the rule."""
    tree = ast.parse("import numpy\nfrom relkt.analysis.tokenizer_audit import audit_tokenizer\nfrom relkt import io\n")
    targets = [t for _, t in relkt_imports(tree)]
    assert targets == ["analysis", "io"]
    assert "analysis" not in rules()["encoders"] and "analysis" in rules()["jobs"]


def test_test_modules_share_code_through_tests_helpers_only():
    """A test module is not a library: what two of them share lives in tests/helpers/ (fixtures in conftest.py)."""
    tests = Path(__file__).resolve().parent
    offenders = []
    for path in tests.rglob("*.py"):
        if "helpers" in path.relative_to(tests).parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            offenders += [
                f"{path.relative_to(tests)}: {n}"
                for n in names
                if n.startswith("tests.") and not n.startswith("tests.helpers")
            ]
    assert not offenders, offenders


def test_two_wings_no_library_module_imports_the_command_lines():
    offenders = []
    for path, unit in modules():
        if unit in ("cli", "train_teacher", "train_student"):
            continue
        offenders += [
            f"{path.relative_to(ROOT)}:{line}" for line, t in relkt_imports(ast.parse(path.read_text())) if t == "cli"
        ]
    assert not offenders, offenders


def test_the_package_root_holds_at_most_eight_modules():
    root = sorted(p.name for p in (ROOT / "relkt").glob("*.py"))
    assert len(root) <= 8, root


def test_argparse_lives_in_the_command_lines_alone():
    outside = [
        str(p.relative_to(ROOT))
        for p in (ROOT / "relkt").rglob("*.py")
        if "argparse" in p.read_text() and "cli" not in p.relative_to(ROOT / "relkt").parts[:1]
    ]
    assert not outside, outside


def module_graph() -> dict[str, set[str]]:
    """{module: relkt modules it imports}, imports inside functions included (a deferred import still ties two
    files), each module a file (`relkt.jobs.scoring`); a package's `__init__` is its own node."""
    graph: dict[str, set[str]] = {}
    for path in sorted((ROOT / "relkt").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        targets = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module.startswith("relkt"):
                for alias in node.names:  # `from relkt.jobs import record` names the module relkt.jobs.record
                    sub = f"{node.module}.{alias.name}"
                    targets.add(sub if _is_module_path(sub) else node.module)
            elif isinstance(node, ast.Import):
                targets |= {a.name for a in node.names if a.name.startswith("relkt")}
        graph[name] = {t for t in targets if t != name and _is_module_path(t)}
    return graph


def _is_module_path(dotted: str) -> bool:
    base = ROOT.joinpath(*dotted.split("."))
    return base.with_suffix(".py").exists() or (base / "__init__.py").exists()


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm, iterative): import circles. A
    package's `__init__` that hands its modules' names on is left out (it imports down, its modules up to it)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    nodes = {n: {t for t in ts if t in graph} for n, ts in graph.items()}
    for root in nodes:
        if root in index:
            continue
        work = [(root, iter(sorted(nodes[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = []
                    while True:
                        member = stack.pop()
                        on.discard(member)
                        group.append(member)
                        if member == node:
                            break
                    if len(group) > 1:
                        out.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = counter[0]
                counter[0] += 1
                stack.append(child)
                on.add(child)
                work.append((child, iter(sorted(nodes[child]))))
            elif child in on:
                low[node] = min(low[node], index[child])
    return out


def test_no_module_imports_its_way_back_to_itself():
    packages = {".".join(p.relative_to(ROOT).parts[:-1]) for p in (ROOT / "relkt").rglob("__init__.py")}
    graph = {n: ts - packages for n, ts in module_graph().items() if n not in packages}
    found = circles(graph)
    assert not found, "import circles (deferred imports count):\n" + "\n".join(" -> ".join(c) for c in found)


def test_the_circle_finder_finds_a_circle():
    double = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert circles(double) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
