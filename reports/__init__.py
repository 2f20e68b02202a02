"""Reports built only from run folders (manifest + session logs read through `tasks.logschema`): metrics,
task-clustered CIs and paired tests (`stats`, `metrics`), figures, report.md, the CI gate (`gate`),
`compare` and `rescore`. Imports the engine and the task vocabulary only, never runners or arms."""

from typing import Any

__all__ = ["RunData", "build_report", "compute_tables", "load_runs"]
_HOMES = {"RunData": "logread", "build_report": "build", "compute_tables": "build", "load_runs": "logread"}


def __getattr__(name: str) -> Any:
    """The names above, imported on first use: importing one report module (e.g. `reports.stats` or
    `reports.gate`) must not import matplotlib and the whole report."""
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"reports.{_HOMES[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
