"""Model adapters, resolved from a spec string: `scripted`, `scripted:first|last|newest|uniform`,
`openai:<model>`, `gguf:<short name or path>`.

An adapter registers a prefix with `register_model(prefix, factory)`; `factory(argument) -> Model` gets
the text after the colon (or None). Adapters living in other modules are imported on first use: a known
prefix maps to its module in `_ADAPTER_MODULES`; any other prefix is looked up as `runners.models.<prefix>`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from runners.models.base import Model
from runners.models.scripted import ScriptedModel

ModelFactory = Callable[[str | None], Model]

_FACTORIES: dict[str, ModelFactory] = {}
_ADAPTER_MODULES = {"openai": "runners.models.openai_compat", "gguf": "runners.models.gguf"}


class ModelSpecError(ValueError):
    """An unknown model spec or bad adapter settings; one line."""


def register_model(prefix: str, factory: ModelFactory) -> None:
    if prefix in _FACTORIES:
        raise ValueError(f"model prefix {prefix!r} is already registered")
    _FACTORIES[prefix] = factory


def _load_adapter(prefix: str) -> None:
    module = _ADAPTER_MODULES.get(prefix, f"runners.models.{prefix}")
    try:
        importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name != module:
            raise


def resolve_model(spec: str) -> Model:
    """The model for a spec string; raises ModelSpecError (one line) for an unknown prefix."""
    prefix, _, argument = spec.strip().partition(":")
    if prefix not in _FACTORIES and prefix.isidentifier():
        _load_adapter(prefix)
    if prefix not in _FACTORIES:
        known = ", ".join(sorted(_FACTORIES))
        raise ModelSpecError(f"model: unknown model {spec!r}; known prefixes: {known}")
    try:
        return _FACTORIES[prefix](argument or None)
    except ValueError as error:
        raise ModelSpecError(str(error).splitlines()[0]) from None


register_model("scripted", lambda argument: ScriptedModel(argument or "uniform"))
