"""The replay side of the harness: the runner (`runner.run`), one (arm, task) replay on a simulated clock
(`replay`), arm specs from names, config files and `--set` (`armconfig`), model adapters (`models`) and the
agent-managed tool loop (`toolloop`). Writes session logs through `tasks.logschema`; never imports reports."""

from runners.armconfig import ArmSpec, resolve_arm_specs
from runners.models import PROVIDERS, resolve_model
from runners.runner import RunOptions, RunSummary, run

__all__ = ["PROVIDERS", "ArmSpec", "RunOptions", "RunSummary", "resolve_arm_specs", "resolve_model", "run"]
