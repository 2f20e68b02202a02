"""Each package's public surface is its `__all__`: every listed name exists, public functions and classes have
docstrings, and a change to the surface is a deliberate edit of the lists below (not an accident)."""

from __future__ import annotations

import importlib
import inspect

import pytest

PUBLIC = {
    "tasks": [
        "CLASSIFICATIONS",
        "LOG_FORMAT_VERSION",
        "RECORD_TYPES",
        "SHIPPED_TASKS",
        "BadInput",
        "ForgetSpec",
        "HarnessError",
        "LogWriter",
        "Message",
        "Model",
        "ModelRequest",
        "ModelResponse",
        "ProbeSpec",
        "Record",
        "RememberSpec",
        "ReportInputError",
        "ServiceError",
        "Session",
        "Task",
        "TaskSetError",
        "Turn",
        "classify",
        "load_tasks",
        "read_log",
        "read_task_set",
        "validate_path",
    ],
    "arms": [
        "ARMS",
        "VARIANTS",
        "Arm",
        "ArmBase",
        "ArmContext",
        "CompactionInfo",
        "MemoryContext",
        "MemoryLog",
        "OwnStoreArm",
        "SessionInfo",
        "available",
        "create_arm",
        "fit_block",
        "forget_selects",
        "memory_line",
        "resolve",
        "scope_for",
        "visible_to",
    ],
    "runners": [
        "PROVIDERS",
        "ArmSpec",
        "RunOptions",
        "RunSummary",
        "resolve_arm_specs",
        "resolve_model",
        "run",
    ],
    "reports": ["RunData", "build_report", "compute_tables", "load_runs"],
    "amnesia_bench": ["DEFAULT_ARMS", "__version__", "build_report", "load_run", "run"],
}


@pytest.mark.parametrize("package", sorted(PUBLIC))
def test_all_is_the_agreed_public_surface(package):
    module = importlib.import_module(package)
    assert sorted(module.__all__) == sorted(PUBLIC[package])
    for name in module.__all__:
        obj = getattr(module, name)  # AttributeError: __all__ names something that is not there
        if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__.split(".")[0] == package:
            assert inspect.getdoc(obj), f"{package}.{name} has no docstring"


def test_version_is_a_release_string():
    import amnesia_bench

    assert amnesia_bench.__version__.split(".")[0].isdigit()


def test_importing_the_arms_package_loads_no_arm():
    """The registry is lazy: `import arms` must not import the arm modules (no import side effects)."""
    import subprocess
    import sys

    code = "import sys, arms; print(sorted(m for m in sys.modules if m.startswith('arms.')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert "arms.amnesia_arm" not in out and "arms.retrieval" not in out


def test_the_cli_and_the_report_start_without_what_they_do_not_use():
    """The packages fill their namespaces on first use (amnesia.lazy), and the CLI imports a command's
    modules when it runs: `amnesia-bench` starts without the engine, the runners, the arms or pandas, and
    the report (its modules and the log reader the figure worker runs first) without the engine either."""
    import json
    import subprocess
    import sys

    code = (
        "import json, sys; from amnesia_bench.cli import app; cli = sorted(sys.modules); "
        "import reports.logread; reader = sorted(sys.modules); import reports.build, reports.figures; "
        "print(json.dumps([cli, reader, sorted(sys.modules)]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    cli, reader, report = (set(modules) for modules in json.loads(out))
    heavy = {"amnesia.engine", "amnesia.stores", "runners.runner", "arms.base", "pandas", "numpy", "yaml"}
    assert not cli & heavy and not reader & heavy
    assert not report & {"amnesia.engine", "amnesia.stores", "runners.runner", "arms.base"}


def test_every_engine_name_is_there_when_asked_for():
    import amnesia

    for name in amnesia.__all__:
        assert getattr(amnesia, name).__module__.startswith("amnesia.")
    with pytest.raises(AttributeError):
        amnesia.not_a_name  # noqa: B018
