"""One registry style for the harness's pluggable parts (arms, model providers): a table of name ->
"module:attribute", imported on first use. Nothing registers itself as a side effect of an import, so the
table is the whole list, `list` commands need no imports, and a worker process loads only what it runs."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any


class LazyRegistry:
    """Maps names to objects named by "module:attribute" strings, importing each module on first lookup."""

    def __init__(self, kind: str, targets: Mapping[str, str]) -> None:
        self.kind = kind  # what a name names, for error messages ("arm", "model provider")
        self._targets = dict(targets)
        self._loaded: dict[str, Any] = {}

    def names(self) -> list[str]:
        """Every registered name, sorted."""
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        return name in self._targets

    def target(self, name: str) -> str:
        """The "module:attribute" a name points at (KeyError for an unknown name)."""
        return self._targets[name]

    def load(self, name: str) -> Any:
        """The object registered under `name` (KeyError for an unknown name)."""
        if name not in self._loaded:
            module, _, attribute = self._targets[name].partition(":")
            self._loaded[name] = getattr(importlib.import_module(module), attribute)
        return self._loaded[name]
