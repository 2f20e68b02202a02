"""The one-way architecture (docs/ARCHITECTURE.md), enforced on every import statement in the tree,
including imports inside functions and under TYPE_CHECKING:

    amnesia  <-  tasks  <-  arms  <-  runners        reports (amnesia + tasks only)
                                                      amnesia_bench on top (CLI + API)
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HARNESS = ("amnesia", "tasks", "arms", "runners", "reports", "amnesia_bench")
# package -> the project packages it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "amnesia": set(),
    "tasks": {"amnesia"},
    "arms": {"amnesia", "tasks"},
    "runners": {"amnesia", "tasks", "arms"},
    "reports": {"amnesia", "tasks"},
    "amnesia_bench": {"amnesia", "tasks", "arms", "runners", "reports"},
}


def imported_packages(source: str) -> set[str]:
    """The top-level names of every absolute import in a module's source."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def violations(root: Path) -> list[str]:
    """`file: package -> forbidden package` for every import that breaks the layering under `root`."""
    found = []
    for package, allowed in ALLOWED.items():
        for path in sorted((root / package).rglob("*.py")):
            for name in sorted(imported_packages(path.read_text(encoding="utf-8")) & set(HARNESS)):
                if name != package and name not in allowed:
                    found.append(f"{path.relative_to(root)}: {package} -> {name}")
    return found


def test_every_package_imports_only_the_layers_below_it():
    assert violations(ROOT) == []


def test_runners_and_reports_meet_only_in_amnesia_bench():
    # The packages only: scripts (benchmarks/, scripts/) may use both, and a virtualenv or a run folder inside
    # the checkout is not ours to walk.
    both = []
    for package in HARNESS:
        for path in sorted((ROOT / package).rglob("*.py")):
            if {"runners", "reports"} <= imported_packages(path.read_text(encoding="utf-8")):
                both.append(package)
    assert set(both) <= {"amnesia_bench"}, both


@pytest.mark.parametrize(
    ("package", "line"),
    [
        ("amnesia", "from tasks.spec import Task"),
        ("arms", "import runners.replay"),
        ("reports", "from runners.models import resolve_model"),
        ("reports", "    from arms.registry import create_arm"),  # a lazy import inside a function counts
        ("tasks", "from reports.logread import load_runs"),
        ("runners", "from amnesia_bench.cli import app"),
    ],
)
def test_the_check_catches_a_forbidden_import(tmp_path, package, line):
    module = tmp_path / package / "module.py"
    module.parent.mkdir()
    body = f"def f():\n{line}\n" if line.startswith(" ") else f"{line}\n"
    module.write_text(body, encoding="utf-8")
    assert len(violations(tmp_path)) == 1


def module_imports(root: Path, package: str) -> dict[str, set[str]]:
    """module -> the modules of the same package it imports (anywhere in its source: lazy and TYPE_CHECKING
    imports count, `from package import name` counts when `name` is a module)."""
    graph: dict[str, set[str]] = {}
    for path in sorted((root / package).rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                if node.module == package:
                    found.update(f"{package}.{alias.name}" for alias in node.names)
                elif node.module.startswith(package + "."):
                    found.add(node.module)
            elif isinstance(node, ast.Import):
                found.update(alias.name for alias in node.names if alias.name.startswith(package + "."))
        graph[module] = found - {module}
    return {module: {d for d in deps if d in graph} for module, deps in graph.items()}


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every module that reaches itself through the imports, with the path it takes."""
    circles = []
    for start in sorted(graph):
        seen, stack = set(), [(start, [start])]
        while stack:
            module, path = stack.pop()
            for nxt in sorted(graph[module]):
                if nxt == start:
                    circles.append([*path, start])
                elif nxt not in seen:
                    seen.add(nxt)
                    stack.append((nxt, [*path, nxt]))
    return circles


# The engine keeps two circles between modules that describe one thing (config <-> item, selection <-> views);
# the harness packages have none, and must not grow one: a module there can be read knowing only what it
# imports.
@pytest.mark.parametrize("package", ["tasks", "arms", "runners", "reports", "amnesia_bench"])
def test_no_module_of_a_harness_package_imports_itself_through_others(package):
    assert import_circles(module_imports(ROOT, package)) == []


def test_the_circle_check_finds_a_lazy_circle(tmp_path):
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "a.py").write_text("from reports.b import thing\n", encoding="utf-8")
    (tmp_path / "reports" / "b.py").write_text("def f():\n    from reports import a\n", encoding="utf-8")
    assert import_circles(module_imports(tmp_path, "reports")) == [
        ["reports.a", "reports.b", "reports.a"],
        ["reports.b", "reports.a", "reports.b"],
    ]
