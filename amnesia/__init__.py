"""Amnesia: a forgetting engine for agent memory. Every memory has a shelf life."""

from amnesia.audit import AuditEntry
from amnesia.clock import Clock, SimulatedClock, SystemClock
from amnesia.config import Config
from amnesia.engine import Amnesia
from amnesia.errors import (
    AmnesiaError,
    CapacityExceeded,
    InjectionRefused,
    InvalidInput,
    NotFound,
    NotRestorable,
    SecretRefused,
    StoreBusy,
)
from amnesia.item import MemoryItem
from amnesia.stores import InMemoryStore, SQLiteStore, Store
from amnesia.views import (
    ForgetSummary,
    Injection,
    InjectionDecision,
    InjectionPlan,
    MemoryView,
    PlugDetail,
    PlugView,
    StatusView,
    SweepResult,
)

__version__ = "0.1.0"  # kept equal to pyproject.toml's version (a test checks)

__all__ = [
    "Amnesia",
    "AmnesiaError",
    "AuditEntry",
    "CapacityExceeded",
    "Clock",
    "Config",
    "ForgetSummary",
    "InMemoryStore",
    "Injection",
    "InjectionDecision",
    "InjectionPlan",
    "InjectionRefused",
    "InvalidInput",
    "MemoryItem",
    "MemoryView",
    "NotFound",
    "NotRestorable",
    "PlugDetail",
    "PlugView",
    "SQLiteStore",
    "SecretRefused",
    "SimulatedClock",
    "StatusView",
    "Store",
    "StoreBusy",
    "SweepResult",
    "SystemClock",
]
