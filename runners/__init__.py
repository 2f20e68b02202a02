"""The replay side of the harness: the runner (`runner.run`), one (arm, task) replay on a simulated clock
(`replay`), arm specs from names, config files and `--set` (`armconfig`), model adapters (`models`) and the
agent-managed tool loop (`toolloop`). Writes session logs through `tasks.logschema`; never imports reports."""

from amnesia.lazy import exports

__all__ = ["PROVIDERS", "ArmSpec", "RunOptions", "RunSummary", "resolve_arm_specs", "resolve_model", "run"]

_HOMES = {  # name -> the module of this package that defines it, imported on first use (amnesia.lazy)
    "ArmSpec": "armconfig",
    "resolve_arm_specs": "armconfig",
    "PROVIDERS": "models",
    "resolve_model": "models",
    "RunOptions": "runner",
    "RunSummary": "runner",
    "run": "runner",
}
__getattr__ = exports(__name__, _HOMES)
