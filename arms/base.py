"""The arm protocol: one small interface that every memory policy follows (no memory, full memory, Amnesia,
retrieval, clue folding, claims, MemoryBank...). The runner drives an arm through a task; the arm never sees
the task file, the probes or the scoring, only what an agent's memory system would see.

Call order for one task (the runner guarantees it):

    start_task(ctx)
    for each session:
        advance_clock(now)            # the simulated clock has just moved to the session's start
        start_session(session)
        for each turn:
            [compaction]                      # when the task's `compaction` event or the token threshold
                                              # falls before this turn (runners.replay):
                on_compaction_start(info)     #   the older turns are still in the history; info.summary = ""
                ... the runner replaces them with one summary message ...
                on_compaction_end(info)       #   info.summary and info.tokens_after filled in
            observe_user_turn(text)           # every user turn, before anything else
            apply forget specs  -> forget(spec)
            apply remember specs -> remember(spec)
            observe_tool_event(event)         # each of the turn's scripted tool calls (tasks' tool_events)
            context = memory_context(text, history)   # what reaches the prompt, within ctx.budget_tokens
            ... model call (a tool loop when `tools` is non-empty: dispatch_tool(name, arguments)) ...
            observe_answer(text, answer, context)
        end_session(session)
    end_task()

Memory events (writes, forgets with their reason, touches) are written by the arm through `ctx.log`; the
runner logs everything else (turns, injections, model calls, probes).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

from amnesia.clock import SimulatedClock
from tasks.errors import ArmConfigError
from tasks.spec import AgentRole, ForgetSpec, RememberSpec, Session, ToolEventSpec

if TYPE_CHECKING:
    from tasks.fairness import TimeRule
    from tasks.logschema import Record
    from tasks.modelapi import Message, Model

LogFn = Callable[["Record"], None]  # appends one typed record (tasks.logschema) to the session log
# When an arm offers its model tools: `auto` = when the model calls tools (`scripted:tools`, see
# runners/models/scripted.py), `on` = always (e.g. a real model with function calling), `off` = never.
TOOL_MODES = ("auto", "on", "off")


def check_tool_mode(arm: str, value: Any) -> str:
    """The validated `tools` option of an arm (one of TOOL_MODES)."""
    if value not in TOOL_MODES:
        raise ArmConfigError(f"{arm}: option tools must be one of {', '.join(TOOL_MODES)}, got {value!r}")
    return str(value)


class ArmFailed(Exception):
    """An arm's backend failed (an external memory server did not start, lacks a tool, timed out): the pair
    stops with a `pair_error` record, as at a failed model call, and the run goes on. The message is one
    line."""


@dataclass
class ArmContext:
    """What an arm gets for one (arm, task) pair."""

    task_id: str
    seed: int  # derived from the run seed and the task id: use it for any randomness (random.Random(seed))
    clock: SimulatedClock  # shared with the runner; arms read it, only the runner moves it
    log: LogFn  # log(record): appends one typed record (tasks.logschema) to the session log
    workdir: Path  # private scratch folder for this (arm, task), e.g. a SQLite file; created by the arm
    budget_tokens: int  # hard cap on the memory block's tokens
    model: Model | None = None  # for arms with an optional LLM path (extraction, summarising)


@dataclass(frozen=True)
class SessionInfo:
    index: int  # 0-based position in the task
    session_id: str  # unique within the task, e.g. "s2"
    agent: AgentRole  # "main", "sub" or "team"; a sub-agent's session-scoped memories end with it
    at: float  # simulated seconds from the task start
    team: str | None = None  # a team agent's team (agent "team" only), whose members share its memories
    ends_team: bool = False  # the team is disposed when this session ends


def arm_session(arm: object, index: int, session: Session) -> SessionInfo:
    """Session `index` as `arm` sees it. An arm that does not know teams (`TEAMS` False) sees a team agent's
    session as a sub-agent's: its writes stay in its own session and end with it, so nothing a team agent
    writes reaches another agent there (no teammate, but no other team or the main agent either), as the
    seed's default of no sharing between agents wants (tasks/README.md, "Team agents")."""
    if session.agent == "team" and not getattr(arm, "TEAMS", False):
        return SessionInfo(index, f"s{index}", "sub", session.at)
    return SessionInfo(index, f"s{index}", session.agent, session.at, session.team, session.ends_team)


@dataclass(frozen=True)
class CompactionInfo:
    """One context compaction as the host performs it: the runner replaces the session's older history
    messages with one summary message (docs/harness.md#context-compaction). The same event is passed to
    `on_compaction_start` (before the replacement: `summary` is "" and `tokens_after` 0) and to
    `on_compaction_end` (after it, both filled in)."""

    session_id: str
    """The session whose conversation is compacted (`SessionInfo.session_id`)."""
    at: float
    """Simulated seconds from the task start at which the compaction happens."""
    trigger: str
    """Why it happens: "event" = the task's `compaction` event, "tokens" = the automatic one (the history
    passed the task's `auto_compaction: {at_tokens: N}`)."""
    dropped: tuple[Message, ...]
    """The history messages being replaced, oldest first, verbatim."""
    summary: str
    """The text of the one message that replaces them; "" in the start hook."""
    tokens_before: int
    """The history's tokens (amnesia.tokens.count_tokens of every message's text) before the compaction."""
    tokens_after: int
    """The history's tokens after it (summary included); 0 in the start hook."""
    kept: tuple[Message, ...] = ()
    """The most recent history messages kept verbatim after the summary, oldest first."""
    turn_index: int = 0
    """The index of the turn the compaction comes before (0-based within the session)."""


@dataclass
class MemoryContext:
    """What an arm puts in front of the model for one call."""

    block: str = ""  # the exact memory text placed in the prompt ("" = nothing injected)
    tokens: int = 0  # amnesia.tokens.count_tokens of the block and of every extra message's content
    items: list[dict[str, Any]] = field(
        default_factory=list
    )  # [{"id":..., "tokens":..., ...}] injected items
    # Arms that rewrite the conversation (clue folding) return the history to use instead of the runner's.
    history: list[Message] | None = None
    # Extra user messages the runner places right before the user turn and keeps in the session's history, as
    # a host appends a message to the conversation (seed 002's `<recalled-memory>` recall, which leaves the
    # system prompt alone). Their text counts in `tokens` and is logged with the injection record.
    messages: list[Message] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)  # arm-specific, logged with the injection record


@runtime_checkable
class Arm(Protocol):
    name: str

    def describe(self) -> dict[str, Any]:
        """The arm's resolved configuration, JSON-able, for the manifest and the task_start record."""
        ...

    def start_task(self, ctx: ArmContext) -> None: ...

    def advance_clock(self, now: float) -> None: ...

    def start_session(self, session: SessionInfo) -> None: ...

    def observe_user_turn(self, text: str) -> None: ...

    def observe_tool_event(self, event: ToolEventSpec) -> None: ...

    def remember(self, spec: RememberSpec) -> None: ...

    def forget(self, spec: ForgetSpec) -> None: ...

    def memory_context(self, user_text: str, history: list[Message]) -> MemoryContext: ...

    def observe_answer(self, user_text: str, answer: str, context: MemoryContext) -> None: ...

    def on_compaction_start(self, info: CompactionInfo) -> None:
        """The host is about to compact the conversation: `info.dropped` is still in the history."""
        ...

    def on_compaction_end(self, info: CompactionInfo) -> None:
        """The host compacted the conversation: `info.summary` now stands where `info.dropped` was."""
        ...

    def end_session(self, session: SessionInfo) -> None: ...

    def end_task(self) -> None: ...


class ArmBase:
    """Convenience base: no-op hooks, so an arm implements only what it needs."""

    name = "base"
    SEED: ClassVar[str] = ""  # the design it reproduces (a seed document number, a paper); "" = a baseline
    OPTIONS: ClassVar[type | None] = None  # the frozen dataclass of its options; None = it takes none
    # True for arms whose model does the writing (the task's remember/forget specs are not applied).
    MODEL_MANAGED: ClassVar[bool] = False
    # True for arms that drive a program outside this package (an MCP server, another memory system): they
    # run when asked by name, never under `--arms all`, which must run on every machine that installs this.
    EXTERNAL: ClassVar[bool] = False
    # True for arms that implement the seed's team scope (§6.10); the others see a team agent as a sub-agent
    # (`arm_session`).
    TEAMS: ClassVar[bool] = False

    def __init__(self, **options: Any) -> None:
        self.options = options
        self.ctx: ArmContext | None = None
        self.tool_mode = "off"  # arms with model tools set it from their `tools` option (TOOL_MODES)

    def model_tools(self) -> list[dict[str, Any]]:
        """The arm's model tools (OpenAI function definitions), offered or not according to `tool_mode`."""
        return []

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The tools offered to the model on this call; non-empty turns each user turn into a tool loop
        (runners.toolloop) whose calls go to `dispatch_tool`."""
        if self.tool_mode == "off":
            return []
        model = self.ctx.model if self.ctx is not None else None
        if self.tool_mode == "auto" and not getattr(model, "calls_tools", False):
            return []
        return self.model_tools()

    def dispatch_tool(self, name: str, arguments: str) -> str:
        """Run one tool call of the model; returns the JSON text handed back to it."""
        return json.dumps({"error": f"unknown tool {name!r}"})

    @classmethod
    def option_defaults(cls) -> dict[str, Any]:
        """Every option the arm takes (`--set arm.option=value`), with its default."""
        if cls.OPTIONS is None:
            return {}
        return {f.name: f.default for f in dataclasses.fields(cls.OPTIONS)}

    def describe(self) -> dict[str, Any]:
        return {"arm": self.name, "options": dict(self.options)}

    def time_rule(self) -> TimeRule | None:
        """How the arm forgets by the writer's ttl (`tasks.fairness`), or None: it does not (the default)."""
        return None

    def start_task(self, ctx: ArmContext) -> None:
        self.ctx = ctx

    def advance_clock(self, now: float) -> None:
        return None

    def start_session(self, session: SessionInfo) -> None:
        return None

    def observe_user_turn(self, text: str) -> None:
        return None

    def observe_tool_event(self, event: ToolEventSpec) -> None:
        return None

    def remember(self, spec: RememberSpec) -> None:
        return None

    def forget(self, spec: ForgetSpec) -> None:
        return None

    def memory_context(self, user_text: str, history: list[Message]) -> MemoryContext:
        return MemoryContext()

    def observe_answer(self, user_text: str, answer: str, context: MemoryContext) -> None:
        return None

    def on_compaction_start(self, info: CompactionInfo) -> None:
        """No-op: an arm that does something before the host compacts (a flush, a framing) overrides it."""
        return None

    def on_compaction_end(self, info: CompactionInfo) -> None:
        """No-op: an arm that does something after the host compacted overrides it."""
        return None

    def end_session(self, session: SessionInfo) -> None:
        return None

    def end_task(self) -> None:
        return None

    def close(self) -> None:
        """Release what the arm holds outside this process (a server process) when its pair stops early, at a
        failed model call or backend (`ArmFailed`); a pair that completes releases it in `end_task`."""
        return None


def time_rule_of(arm: Arm) -> TimeRule | None:
    """The arm's time rule (`ArmBase.time_rule`). None for an arm not built on ArmBase, and for one whose
    model does the writing (the task's writes, which the fairness check follows, are not applied there)."""
    if not isinstance(arm, ArmBase) or arm.MODEL_MANAGED:
        return None
    return arm.time_rule()
