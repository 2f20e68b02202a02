"""A package namespace filled on first use (PEP 562): the package's `__init__` says which module defines each
name it exports, and importing the package, or one module of it, imports nothing more. The reports import a
few engine modules (`amnesia.decay`, `amnesia.config`) and task modules (the log schema, scoring) without the
rest of the engine and of the task vocabulary."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import Any


def exports(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """The module `__getattr__` of `package`: `name` is taken from the module `package.homes[name]`, imported
    then, and kept in the package's namespace (the next lookup is a plain attribute)."""
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f"{package}.{home}"), name)
        namespace[name] = value
        return value

    return __getattr__
