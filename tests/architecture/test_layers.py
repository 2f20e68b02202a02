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
