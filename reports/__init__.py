"""Reports built only from run folders (manifest + session logs read through `tasks.logschema`): metrics,
task-clustered CIs and paired tests (`stats`, `metrics`), figures, report.md, the CI gate (`gate`),
`compare` and `rescore`. Imports the engine and the task vocabulary only, never runners or arms."""

from reports.build import build_report, compute_tables
from reports.logread import RunData, load_runs

__all__ = ["RunData", "build_report", "compute_tables", "load_runs"]
