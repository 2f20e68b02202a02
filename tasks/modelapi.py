"""The model interface: one request in, one response out. The runner never knows which model it drives."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

# OpenAI chat format: {"role": "system"|"user"|"assistant"|"tool", "content": str, ...}
Message = dict[str, Any]


@dataclass(frozen=True)
class ModelRequest:
    messages: list[Message]
    # The probe's candidate values (expect ∪ stale ∪ poison). Only the scripted model reads them: they are its
    # script, telling it which strings to look for in the prompt. Real models must ignore them.
    candidates: tuple[str, ...] = ()
    is_probe: bool = False
    seed: int = 0  # per-call seed derived from (run seed, arm, task id, call index)
    tools: list[dict] | None = None  # OpenAI tools schema, for agent-managed memory mode
    max_tokens: int = 128


@dataclass(frozen=True)
class ModelResponse:
    text: str
    prompt_tokens: int
    completion_tokens: int
    tool_calls: tuple[dict, ...] = ()
    cached: bool = False
    raw: dict = field(default_factory=dict)


@runtime_checkable
class Model(Protocol):
    name: str

    def describe(self) -> dict:
        """A JSON-able description for the run manifest (adapter, model id, sampling params...)."""
        ...

    def complete(self, request: ModelRequest) -> ModelResponse: ...
