"""Agent-managed memory: the model gets the seven `amnesia_*` tools and decides itself what to remember,
recall and forget. One user turn becomes a short loop: call the model with the tools; while it answers
with tool calls, run each through the arm's dispatcher, append the assistant message and one `tool` message
per call, and call again; the first answer without tool calls (or the last round) is the turn's answer.

Every round is reported through `on_call` (the runner logs it as a `model_call` record) and every tool call
through `on_tool` (a `tool_call` record), so model-visible ⟺ logged holds inside the loop too.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

from tasks.logschema import ToolCall
from tasks.modelapi import Message, Model, ModelRequest, ModelResponse

ToolDispatch = Callable[[str, str], str]  # (tool name, arguments JSON text) -> result JSON text
MAX_ROUNDS = 4  # model calls per turn; a small model can loop on tool calls forever


@dataclass(frozen=True)
class ToolRound:
    """One model call inside the loop: the exact messages sent and what came back."""

    messages: list[Message]
    response: ModelResponse
    wall_ms: float


@dataclass(frozen=True)
class ToolInvocation:
    """One tool call the model made, with the dispatcher's answer."""

    round_index: int
    tool_call_id: str
    name: str
    arguments: str
    result: str

    def to_record(self, *, session_index: int, turn_index: int, call_index: int) -> ToolCall:
        """The session-log record of this invocation, placed at the turn and model call that asked for it."""
        return ToolCall(
            session_index=session_index,
            turn_index=turn_index,
            call_index=call_index,
            round_index=self.round_index,
            tool_call_id=self.tool_call_id,
            name=self.name,
            arguments=self.arguments,
            result=self.result,
        )


def run_tool_loop(
    model: Model,
    request: ModelRequest,
    tools: list[dict],
    dispatch: ToolDispatch,
    *,
    on_call: Callable[[ToolRound], None],
    on_tool: Callable[[ToolInvocation], None],
    seed_for_round: Callable[[int], int],
    max_rounds: int = MAX_ROUNDS,
) -> ModelResponse:
    """Drive the loop for one user turn and return the final response (its text is the turn's answer)."""
    messages = list(request.messages)
    for round_index in range(max_rounds):
        sent = list(messages)
        call = replace(request, messages=sent, tools=tools, seed=seed_for_round(round_index))
        started = time.perf_counter()
        response = model.complete(call)
        on_call(ToolRound(sent, response, (time.perf_counter() - started) * 1000.0))
        if not response.tool_calls:
            return response
        messages.append(
            # content "" rather than null: the API takes both, and chat templates join contents as strings
            {"role": "assistant", "content": response.text or "", "tool_calls": list(response.tool_calls)}
        )
        for position, tool_call in enumerate(response.tool_calls):
            invocation = _invoke(tool_call, round_index, position, dispatch)
            on_tool(invocation)
            messages.append(
                {"role": "tool", "tool_call_id": invocation.tool_call_id, "content": invocation.result}
            )
        if round_index + 1 == max_rounds:
            return response  # out of rounds: the tools ran, and this text (maybe empty) is the answer
    raise ValueError(f"max_rounds: must be >= 1, got {max_rounds}")


def _invoke(tool_call: dict, round_index: int, position: int, dispatch: ToolDispatch) -> ToolInvocation:
    function = tool_call.get("function") or {}
    name = str(function.get("name") or "")
    arguments = function.get("arguments")
    if not isinstance(arguments, str):  # some servers send an object; the dispatcher takes either
        arguments = json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)
    call_id = str(tool_call.get("id") or f"call-{round_index}-{position}")
    return ToolInvocation(round_index, call_id, name, arguments, dispatch(name, arguments))
