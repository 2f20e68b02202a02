"""Model adapters, resolved from a spec string: `scripted`, `scripted:first|last|newest|uniform`,
`openai:<model>`, `gguf:<short name or path>`.

`PROVIDERS` maps each prefix to its adapter's `from_spec(argument) -> Model` (the text after the colon, or
None), imported on first use (`tasks.registry.LazyRegistry`), so a run loads only the adapter it drives.
Adding a provider is one module in runners/models/ with a `from_spec`, plus one line here.
"""

from __future__ import annotations

from tasks.errors import ModelSpecError
from tasks.modelapi import Model
from tasks.registry import LazyRegistry

PROVIDERS = LazyRegistry(
    "model provider",
    {
        "scripted": "runners.models.scripted:from_spec",
        "openai": "runners.models.openai_compat:from_spec",
        "gguf": "runners.models.gguf:from_spec",
    },
)


def resolve_model(spec: str) -> Model:
    """The model for a spec string; raises ModelSpecError (one line) for an unknown prefix or settings that
    cannot work."""
    prefix, _, argument = spec.strip().partition(":")
    if prefix not in PROVIDERS:
        raise ModelSpecError(f"model: unknown model {spec!r}; known prefixes: {', '.join(PROVIDERS.names())}")
    try:
        return PROVIDERS.load(prefix)(argument or None)
    except ValueError as error:
        raise ModelSpecError(str(error).splitlines()[0]) from None
