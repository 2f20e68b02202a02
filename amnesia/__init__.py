"""Amnesia: a forgetting engine for agent memory. Every memory has a shelf life.

The names below are imported on first use (`amnesia.lazy`): `from amnesia import Amnesia` imports the
engine, `import amnesia.decay` imports that module alone."""

from amnesia.lazy import exports

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
    "StoreFull",
    "SweepResult",
    "SystemClock",
]

_HOMES = {  # name -> the module of this package that defines it
    "AuditEntry": "audit",
    "Clock": "clock",
    "SimulatedClock": "clock",
    "SystemClock": "clock",
    "Config": "config",
    "Amnesia": "engine",
    "AmnesiaError": "errors",
    "CapacityExceeded": "errors",
    "InjectionRefused": "errors",
    "InvalidInput": "errors",
    "NotFound": "errors",
    "NotRestorable": "errors",
    "SecretRefused": "errors",
    "StoreBusy": "errors",
    "StoreFull": "errors",
    "MemoryItem": "item",
    "InMemoryStore": "stores",
    "SQLiteStore": "stores",
    "Store": "stores",
    "ForgetSummary": "views",
    "Injection": "views",
    "InjectionDecision": "views",
    "InjectionPlan": "views",
    "MemoryView": "views",
    "PlugDetail": "views",
    "PlugView": "views",
    "StatusView": "views",
    "SweepResult": "views",
}
__getattr__ = exports(__name__, _HOMES)
