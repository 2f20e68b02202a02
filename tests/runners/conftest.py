"""Fixtures for the runner tests: SmolLM2's chat template rendered as llama-cpp-python renders it, and a
stand-in `llama_cpp` module whose model renders it, so that the GGUF adapter's messages meet the real
template without the model."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from typing import Any, ClassVar

import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

# SmolLM2-135M-Instruct's chat template (from its GGUF metadata): contents are joined with `+`.
SMOLLM2_TEMPLATE = (
    "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}"
    "{{ '<|im_start|>system\\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face'"
    " + '<|im_end|>\\n' }}"
    "{% endif %}{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
    "{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def _render(messages: list[dict[str, Any]]) -> str:
    template = ImmutableSandboxedEnvironment().from_string(SMOLLM2_TEMPLATE)
    return template.render(messages=messages, add_generation_prompt=True)


class TemplateLlama:
    """A stand-in for `llama_cpp.Llama` that renders the chat template as the real one does, then answers."""

    prompts: ClassVar[list[str]] = []

    def __init__(self, **kwargs: Any) -> None:
        pass

    def create_chat_completion(self, messages: list[dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        TemplateLlama.prompts.append(_render(messages))
        return {"choices": [{"message": {"content": "registry.npmjs.org"}, "finish_reason": "stop"}]}

    def close(self) -> None:
        """The adapter closes a loaded model at exit (runners.models.gguf); nothing to release here."""


@pytest.fixture
def template_llama(monkeypatch) -> type[TemplateLlama]:
    """The stand-in `llama_cpp` module for this test: `GGUFModel` chat calls render SmolLM2's template (the
    prompts rendered are in `.prompts`)."""
    TemplateLlama.prompts = []
    module = types.ModuleType("llama_cpp")
    module.Llama = TemplateLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    return TemplateLlama


@pytest.fixture(scope="session")
def render_smollm2() -> Callable[[list[dict[str, Any]]], str]:
    """`render_smollm2(messages)`: the prompt SmolLM2's chat template makes of them (raises as it does)."""
    return _render
