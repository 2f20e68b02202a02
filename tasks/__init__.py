"""The task vocabulary shared by arms, runners and reports: task specs and their YAML loading (`spec`,
`load`), the seeded generator (`generate`), scoring rules (`scoring`), the model protocol (`modelapi`), the
session-log record schema with its writer and reader (`logschema`), the harness error tree (`errors`) and the
lazy registry style (`registry`). The shipped YAML sets live beside this code in helpful/, harmful/, mixed/.

Depends on the engine (`amnesia`) only; arms, runners and reports depend on it, never the other way round.
"""

from pathlib import Path

from tasks.errors import BadInput, HarnessError, ReportInputError, ServiceError, TaskSetError
from tasks.load import load_tasks, read_task_set, validate_path
from tasks.logschema import LOG_FORMAT_VERSION, RECORD_TYPES, LogWriter, Record, read_log
from tasks.modelapi import Message, Model, ModelRequest, ModelResponse
from tasks.scoring import classify
from tasks.spec import CLASSIFICATIONS, ForgetSpec, ProbeSpec, RememberSpec, Session, Task, Turn

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
