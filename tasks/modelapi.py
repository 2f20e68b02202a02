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
    # The simulated clock at the call (Unix seconds; the replay starts at the task's stated start, else at
    # 0.0, 1970-01-01 UTC): the date a deployed agent knows. The prompt does not show it; only the scripted
    # `temporal` reader reads it, to tell whether an end a memory states ("until Friday") has passed. Real
    # models must ignore it.
    now: float | None = None


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


def tool_calls_as_text(messages: list[Message]) -> list[Message]:
    """The messages with the agent's tool calls written out as plain text, for a chat template that knows no
    tool calls: such templates join `content` strings and break on the `content: None` of an assistant
    message that only calls tools (SmolLM2's: "can only concatenate str (not NoneType) to str"), or refuse
    a `tool` role. An assistant message with tool calls says which tool it called with which arguments (after
    its own text, if any); a tool result becomes a user message that names the tool; roles keep alternating
    (assistant call, user result). Other messages are passed on as they are, with `content` never None."""
    names: dict[str, str] = {}
    rendered: list[Message] = []
    for message in messages:
        calls = message.get("tool_calls") or ()
        if calls:
            lines = [message["content"]] if message.get("content") else []
            for call in calls:
                function = call.get("function") or {}
                name = str(function.get("name") or "tool")
                names[str(call.get("id"))] = name
                lines.append(f"[calls tool {name} with {function.get('arguments') or '{}'}]")
            rendered.append({"role": "assistant", "content": "\n".join(lines)})
        elif message.get("role") == "tool":
            name = names.get(str(message.get("tool_call_id")), "tool")
            rendered.append(
                {"role": "user", "content": f"[tool {name} returned]\n{message.get('content') or ''}"}
            )
        else:
            rendered.append({**message, "content": message.get("content") or ""})
    return rendered
