"""The scripted model: a deterministic stand-in for an LLM that reads only its prompt.

For a probe it looks for the probe's candidate values (`request.candidates`, its script) in every message
except the last user message (the question itself), using the scorer's matching rules (whole-word Latin,
substring CJK, negated mentions do not count). It answers with exactly one value present, chosen by a
strategy:

- `uniform` (default): a seeded uniform choice among the distinct values present (a model confused by
  conflicting context); the seed is the request's per-call seed, so the choice never depends on run order;
- `first` / `last`: the value mentioned earliest / latest in the prompt;
- `newest`: trusts the most recently written memory — the value on the memory line with the smallest
  `written <duration> ago`; when no candidate sits on a dated line, the value mentioned latest in the prompt.
- `temporal`: a careful reader of the block, with no memory policy of its own. It sets aside a value on a
  line marked `untrusted`, and a value on a memory line whose text states an end that has passed ("until
  Friday", "for the next 3 days": `amnesia.deadlines.read_deadline`, read at the line's write time, which is
  the call's time `request.now` minus its `written ... ago`); of what is left it answers like `newest`, and it
  abstains when nothing is left. Without `request.now` it cannot tell whether an end has passed and keeps
  every line.

When no candidate is present it abstains ("I don't know."). Non-probe turns get a short acknowledgement.

`scripted:tools` (`scripted:tools-first|last|newest`) is the tool-using variant: when the call offers tools
and no candidate is in its prompt, it first calls the arm's recall/search tool (the first offered of
`RECALL_TOOLS`) with the question — every required string parameter gets the question, a required list of
strings gets `[question]` — and then answers from the prompt plus the tool's result by the same strategy
(abstaining when the result holds no candidate either). It calls at most one tool per turn, only on probes.
Its `calls_tools` attribute tells the arms (option `tools: auto`) to offer their model tools.
Token counts use `amnesia.tokens.count_tokens` over the message contents (no per-message overhead).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from amnesia.deadlines import read_deadline
from amnesia.durations import parse_duration
from amnesia.tokens import count_tokens
from tasks.modelapi import Message, ModelRequest, ModelResponse
from tasks.scoring import find_mentions

Strategy = Literal["uniform", "first", "last", "newest", "temporal"]
STRATEGIES: tuple[Strategy, ...] = ("uniform", "first", "last", "newest", "temporal")
ABSTAIN_TEXT = "I don't know."
ACK_TEXT = "OK, noted."
_WRITTEN_AGO = re.compile(r"written (\d[0-9wdhms]*) ago")
_LINE_SEPARATOR = " · "  # between the parts of a memory line (amnesia.selection, arms.arm_kit.memory_line)
_UNTRUSTED_MARK = "untrusted"  # the part right after `written ... ago` on a line from an untrusted source
TOOLS_PREFIX = "tools"
# The recall/search tool of each arm, in the order the tool-using variant looks for them.
RECALL_TOOLS = ("recall_from_clues", "memory_search", "amnesia_recall")


# History messages recur in every later call of a session (and on every arm), and so do the answers: their
# counts are memoised.
_line_tokens = lru_cache(maxsize=65_536)(count_tokens)


@lru_cache(maxsize=65_536)
def _message_tokens(content: str) -> int:
    """count_tokens(content), as the sum of its lines' memoised counts: a line break is whitespace, which no
    token holds or spans, so the lines' counts add up to the text's. The system message differs in nearly
    every call (its memory block), but most of its lines (the instructions, memory lines) recur."""
    return sum(map(_line_tokens, content.split("\n")))


@dataclass(frozen=True)
class _Occurrence:
    value: str
    position: int  # offset in the concatenated prompt text
    age: float | None  # seconds since the memory line was written, when the mention sits on a dated line
    untrusted: bool = False  # the dated line is marked as coming from an untrusted source
    statement: str = ""  # the dated line's text after `written ... ago` (where a stated end is read)


def _context_text(messages: list[Message]) -> str:
    """All message contents except the last user message, joined in prompt order."""
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return "\n".join(str(m.get("content") or "") for i, m in enumerate(messages) if i != last_user)


def _occurrence(text: str, value: str, position: int) -> _Occurrence:
    """The mention of `value` at `position`, with what its line says when it is a dated memory line."""
    line_start = text.rfind("\n", 0, position) + 1
    line_end = text.find("\n", position)
    line = text[line_start : line_end if line_end >= 0 else len(text)]
    match = _WRITTEN_AGO.search(line)
    if match is None:
        return _Occurrence(value, position, None)
    rest = line[match.end() :].removeprefix(_LINE_SEPARATOR)
    untrusted = rest.startswith(_UNTRUSTED_MARK + _LINE_SEPARATOR)
    age = parse_duration(match.group(1), field="written ago")
    return _Occurrence(value, position, age, untrusted, rest)


@lru_cache(maxsize=256)  # the arms of a task often build the same prompt (nothing forgotten yet)
def _occurrences(text: str, candidates: tuple[str, ...]) -> tuple[_Occurrence, ...]:
    return tuple(
        _occurrence(text, m.value, m.start) for m in find_mentions(text, candidates) if not m.negated
    )


def _lapsed(occurrence: _Occurrence, now: float | None) -> bool:
    """Whether the occurrence's memory line states an end that is past at `now` (unknown `now`: never)."""
    if now is None or occurrence.age is None:
        return False
    end = read_deadline(occurrence.statement, now - occurrence.age)
    return end is not None and end.end <= now


def _newest(occurrences: Sequence[_Occurrence]) -> str:
    dated = [o for o in occurrences if o.age is not None]
    if not dated:
        return occurrences[-1].value
    return min(dated, key=lambda o: (o.age, -o.position)).value


def choose(
    strategy: Strategy,
    occurrences: Sequence[_Occurrence],
    candidates: tuple[str, ...],
    seed: int,
    now: float | None = None,
) -> str | None:
    """The value to answer with, or None to abstain (only `temporal` does, when it sets every occurrence
    aside); `occurrences` is non-empty and in prompt order; `now`: the call's time (`temporal` only)."""
    if strategy == "first":
        return occurrences[0].value
    if strategy == "last":
        return occurrences[-1].value
    if strategy == "newest":
        return _newest(occurrences)
    if strategy == "temporal":
        kept = [o for o in occurrences if not o.untrusted and not _lapsed(o, now)]
        return _newest(kept) if kept else None
    present = {o.value for o in occurrences}
    return random.Random(seed).choice([c for c in candidates if c in present])


_STRATEGY_NOTES: dict[Strategy, str] = {
    "uniform": "a seeded uniform choice among the candidate values in its prompt (default)",
    "first": "the value mentioned earliest in the prompt",
    "last": "the value mentioned latest in the prompt",
    "newest": "the value on the most recently written memory line",
    "temporal": "a careful reader: skips untrusted lines and lines whose stated end has passed, then newest",
}


def catalogue() -> list[tuple[str, str]]:
    """(spec, what it is) for `amnesia-bench list models`."""
    plain = [(f"scripted/{strategy}", _STRATEGY_NOTES[strategy]) for strategy in STRATEGIES]
    tools = [
        (
            f"scripted/{TOOLS_PREFIX}" + ("" if strategy == "uniform" else f"-{strategy}"),
            f"calls the arm's recall tool when its prompt lacks the answer, then {_STRATEGY_NOTES[strategy]}",
        )
        for strategy in STRATEGIES
    ]
    return plain + tools


def from_spec(argument: str | None) -> ScriptedModel:
    """`scripted` (uniform), `scripted:<strategy>`, `scripted:tools` or `scripted:tools-<strategy>`."""
    text = argument or "uniform"
    if text == TOOLS_PREFIX or text.startswith(TOOLS_PREFIX + "-"):
        return ScriptedModel(text.removeprefix(TOOLS_PREFIX).lstrip("-") or "uniform", use_tools=True)
    return ScriptedModel(text)


def recall_call(request: ModelRequest) -> dict | None:
    """The tool call the tool-using variant makes for this request, or None: the first offered tool of
    RECALL_TOOLS, with the question (the last user message) in its required parameters."""
    offered = {tool["function"]["name"]: tool["function"] for tool in request.tools or ()}
    name = next((n for n in RECALL_TOOLS if n in offered), None)
    if name is None:
        return None
    question = next(
        (str(m.get("content") or "") for m in reversed(request.messages) if m.get("role") == "user"), ""
    )
    parameters = offered[name].get("parameters", {})
    arguments = {}
    for field in parameters.get("required", ()):
        kind = parameters.get("properties", {}).get(field, {}).get("type")
        arguments[field] = [question] if kind == "array" else question
    call_id = f"recall-{request.seed % 10**8}"
    function = {"name": name, "arguments": json.dumps(arguments, ensure_ascii=False)}
    return {"id": call_id, "type": "function", "function": function}


def _already_called(request: ModelRequest) -> bool:
    """Whether this turn already called one of the offered tools (the model's own calls follow the last
    user message; a task's scripted tool events use other names)."""
    offered = {tool["function"]["name"] for tool in request.tools or ()}
    last_user = max((i for i, m in enumerate(request.messages) if m.get("role") == "user"), default=-1)
    return any(
        call.get("function", {}).get("name") in offered
        for m in request.messages[last_user + 1 :]
        for call in m.get("tool_calls") or ()
    )


class ScriptedModel:
    """Answers from what is in its prompt, by a fixed strategy (see the module docstring)."""

    def __init__(self, strategy: str = "uniform", *, use_tools: bool = False) -> None:
        if strategy not in STRATEGIES:
            choices = ", ".join([*STRATEGIES, TOOLS_PREFIX, *(f"{TOOLS_PREFIX}-{s}" for s in STRATEGIES[1:])])
            raise ValueError(f"model: unknown scripted strategy {strategy!r}; choose one of {choices}")
        self.strategy: Strategy = strategy  # type: ignore[assignment]
        self.calls_tools = use_tools  # arms with `tools: auto` offer their model tools to this model
        # it answers probes only: arms whose optional model step needs real text (retrieval's curator) use
        # their deterministic stand-in instead
        self.scripted = True
        plain = "scripted" if strategy == "uniform" else f"scripted:{strategy}"
        suffix = "" if strategy == "uniform" else f"-{strategy}"
        self.name = f"scripted:{TOOLS_PREFIX}{suffix}" if use_tools else plain

    def describe(self) -> dict:
        described = {"adapter": "scripted", "name": self.name, "strategy": self.strategy}
        return {**described, "calls_tools": True} if self.calls_tools else described

    def answer(self, request: ModelRequest) -> str:
        if not request.is_probe:
            return ACK_TEXT
        occurrences = _occurrences(_context_text(request.messages), tuple(request.candidates))
        if not occurrences:
            return ABSTAIN_TEXT
        return (
            choose(self.strategy, occurrences, request.candidates, request.seed, request.now) or ABSTAIN_TEXT
        )

    def complete(self, request: ModelRequest) -> ModelResponse:
        prompt_tokens = sum(_message_tokens(str(m.get("content") or "")) for m in request.messages)
        call = self._tool_call(request)
        if call is not None:
            completion = count_tokens(call["function"]["arguments"])
            return ModelResponse(
                text="", prompt_tokens=prompt_tokens, completion_tokens=completion, tool_calls=(call,)
            )
        text = self.answer(request)  # one of a few texts (the acknowledgement, abstention, a value): memoised
        return ModelResponse(text=text, prompt_tokens=prompt_tokens, completion_tokens=_message_tokens(text))

    def _tool_call(self, request: ModelRequest) -> dict | None:
        """The recall call to make first (tool-using variant, a probe whose answer is not in the prompt)."""
        if not (self.calls_tools and request.is_probe and request.tools) or _already_called(request):
            return None
        if _occurrences(_context_text(request.messages), tuple(request.candidates)):
            return None
        return recall_call(request)
