"""Model adapters, resolved from a spec string `provider:model` or `provider/model` (as other tools write
it): `scripted`, `scripted:first|last|newest|temporal|uniform`, `scripted:tools[-first|last|newest]` (calls
the arm's recall tool when its prompt lacks the answer), `openai:<model>`, `gguf:<short name or path>`;
`openai/gpt-4o-mini`, `gguf/smollm2-135m`, `scripted/newest` are the same models.

`PROVIDERS` maps each prefix to its adapter's `from_spec(argument) -> Model` (the text after the separator,
or None), imported on first use (`tasks.registry.LazyRegistry`), so a run loads only the adapter it drives.
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


def split_spec(spec: str) -> tuple[str, str | None]:
    """(provider, argument or None): the provider ends at the first `:` or `/`, whichever comes first, so
    `gguf:/abs/file.gguf` and `openai/org/model` keep the rest whole."""
    text = spec.strip()
    cut = min((index for index in (text.find(":"), text.find("/")) if index >= 0), default=len(text))
    return text[:cut], text[cut + 1 :] or None


def resolve_model(spec: str) -> Model:
    """The model for a spec string; raises ModelSpecError (one line) for an unknown provider or settings
    that cannot work."""
    prefix, argument = split_spec(spec)
    if prefix not in PROVIDERS:
        known = ", ".join(PROVIDERS.names())
        raise ModelSpecError(
            f"--model: unknown provider {prefix!r} in {spec!r}; known providers: {known} "
            "(write provider/model or provider:model, e.g. openai/gpt-4o-mini)"
        )
    try:
        return PROVIDERS.load(prefix)(argument)
    except ValueError as error:
        raise ModelSpecError(str(error).splitlines()[0]) from None
