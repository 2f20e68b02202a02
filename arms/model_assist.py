"""The optional LLM path of the rule-based arms (extraction, distilling, supersession judgement): one
call through `ctx.model`, logged as a `model_call` record (model-visible ⟺ logged) with a `purpose`
naming the arm step."""

from __future__ import annotations

import time
from typing import Any

from amnesia.tokens import count_tokens
from arms.base import ArmContext
from tasks.errors import ArmConfigError
from tasks.logschema import ModelCall
from tasks.modelapi import ModelRequest


def ask_model(ctx: ArmContext, purpose: str, prompt: str, *, call_seed: int, max_tokens: int = 256) -> str:
    """Send one user message to the configured model and return its text. Raises ArmConfigError without a
    model."""
    if ctx.model is None:
        raise ArmConfigError(f"{purpose}: this option needs a model (run with --model ...)")
    messages: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    started = time.perf_counter()
    response = ctx.model.complete(ModelRequest(messages=messages, seed=call_seed, max_tokens=max_tokens))
    ctx.log(
        ModelCall(
            session_index=None,
            turn_index=None,
            call_index=None,
            purpose=purpose,
            messages=messages,
            response=response.text,
            prompt_tokens=response.prompt_tokens or count_tokens(prompt),
            completion_tokens=response.completion_tokens,
            model=ctx.model.name,
            cached=response.cached,
            tool_calls=list(response.tool_calls),
            wall_ms=round((time.perf_counter() - started) * 1000, 3),
        )
    )
    return response.text
