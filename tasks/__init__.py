"""The task vocabulary shared by arms, runners and reports: task specs and their YAML loading (`spec`,
`load`), the seeded generator (`generate`), scoring rules (`scoring`), the model protocol (`modelapi`), the
session-log record schema with its writer and reader (`logschema`), the harness error tree (`errors`) and the
lazy registry style (`registry`). The shipped YAML sets live beside this code in helpful/, harmful/, mixed/.

Depends on the engine (`amnesia`) only; arms, runners and reports depend on it, never the other way round.
"""

from pathlib import Path

from amnesia.lazy import exports

SHIPPED_TASKS = Path(__file__).resolve().parent  # helpful/, harmful/, mixed/ (YAML) live here

__all__ = [
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
]

_HOMES = {  # name -> the module of this package that defines it, imported on first use (amnesia.lazy)
    "BadInput": "errors",
    "HarnessError": "errors",
    "ReportInputError": "errors",
    "ServiceError": "errors",
    "TaskSetError": "errors",
    "load_tasks": "load",
    "read_task_set": "load",
    "validate_path": "load",
    "LOG_FORMAT_VERSION": "logschema",
    "RECORD_TYPES": "logschema",
    "LogWriter": "logschema",
    "Record": "logschema",
    "read_log": "logschema",
    "Message": "modelapi",
    "Model": "modelapi",
    "ModelRequest": "modelapi",
    "ModelResponse": "modelapi",
    "classify": "scoring",
    "CLASSIFICATIONS": "spec",
    "ForgetSpec": "spec",
    "ProbeSpec": "spec",
    "RememberSpec": "spec",
    "Session": "spec",
    "Task": "spec",
    "Turn": "spec",
}
__getattr__ = exports(__name__, _HOMES)
