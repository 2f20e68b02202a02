"""The in-memory form of a benchmark task (see tasks/README.md for the YAML form).

Loading and validation live in `tasks.load`; these dataclasses are what the runner, the arms and the
reports share. Times are float seconds from the task's start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

Group = Literal["helpful", "harmful", "mixed"]
AgentRole = Literal["main", "sub", "team"]
SourceKind = Literal["user", "tool", "auto"]
ToolStatus = Literal["ok", "error", "open"]
Classification = Literal["correct", "stale", "poisoned", "abstained", "wrong"]
CLASSIFICATIONS: tuple[Classification, ...] = ("correct", "stale", "poisoned", "abstained", "wrong")

# What a probe tests (the `mechanism` field of a probe; tasks/README.md explains each). Reports break results
# down by it, so that a win or a loss can be traced to the one way memory helps or hurts that produced it.
MECHANISMS: dict[str, str] = {
    "still-valid": "a value written earlier is still true and needed; forgetting it is the failure",
    "changed-fact": "a value was replaced by a newer one; answering the old one is the failure",
    "lapsed-constraint": "a time-bound rule or plan ended (or was cancelled) and nothing replaced it",
    "untrusted-source": "a tool output or web page (source: auto) tries to override what the user said",
    "scratch-scope": "a sub-agent's session-scoped scratch value must not reach the main agent",
    "team-scope": "a team's shared note reaches its members only, and not after the team is disposed",
    "user-deleted": "the user asked to forget a memory; neither it nor anything derived from it comes back",
    "implicit-change": "a later turn makes an earlier memory false without saying so (no key, no hint)",
    "false-premise": "the question presupposes a stale value; a correct answer corrects the premise",
    "cascade": "a changed fact invalidates a dependent fact that was stored separately",
    "compaction-loss": "a value said earlier in the session was cut from the conversation by a context "
    "compaction (its summary does not carry it); only memory can still give it",
    "compaction-stale": "a context compaction's summary carries an old value or rule that a later turn, or "
    "the passing of time, made false; answering it is the failure",
}


# A remember ttl of `never` (tasks/README.md): the memory has no ttl and is not forgotten by time (an arm's
# ttl policy that overrides every writer, `fixed:<d>`, still replaces it).
NEVER = math.inf


@dataclass(frozen=True)
class RememberSpec:
    content: str
    ttl: float | None = None  # seconds; None = the arm's default; NEVER = no ttl at all (`ttl: never`)
    kind: str = "fact"
    pin: bool = False
    tags: tuple[str, ...] = ()
    scope: str | None = None  # None = the arm decides (workspace for main, session for sub, team for team)
    key: str | None = None  # the subject; arms that track supersession may use it
    source: SourceKind = "user"
    refs: tuple[str, ...] = ()  # ids of the source units it came from (an imported dataset's dialog ids)


@dataclass(frozen=True)
class ForgetSpec:
    tags: tuple[str, ...] = ()
    query: str | None = None
    key: str | None = None


@dataclass(frozen=True)
class ToolEventSpec:
    """A tool call the agent made during a turn (before its answer), with its outcome: `ok` and `error`
    calls carry their output; an `open` call never got a result (an unpaired call)."""

    name: str  # the tool, e.g. "shell"; consecutive calls of one name share a signature (seed 002)
    arguments: str = ""  # the call's arguments as the agent wrote them, e.g. "pnpm install"
    status: ToolStatus = "ok"
    output: str = ""  # what the tool answered (an error message for `error`; "" for `open`)


@dataclass(frozen=True)
class ProbeSpec:
    expect: tuple[str, ...] = ()
    stale: tuple[str, ...] = ()
    poison: tuple[str, ...] = ()
    abstain: bool = False
    # what the probe tests: one of MECHANISMS (hand-written and generated tasks) or an imported set's label
    # (LoCoMo's "temporal"); "" = not labelled
    mechanism: str = ""
    # the source units (remember `refs`) the answer needs; evidence retention is measured over them
    evidence: tuple[str, ...] = ()
    answer: str | None = None  # the gold answer as free text (imported datasets), for token F1
    # Phrases in which a mention of a value is not an assertion of it ("Heron was vetoed"): the scorer
    # ignores mentions inside them.
    not_asserting: tuple[str, ...] = ()

    @property
    def candidates(self) -> tuple[str, ...]:
        """expect ∪ stale ∪ poison, in that order, without duplicates."""
        seen: dict[str, None] = {}
        for value in (*self.expect, *self.stale, *self.poison):
            seen.setdefault(value, None)
        return tuple(seen)


# How many of the most recent turns a context compaction keeps verbatim when the task does not say
# (docs/harness.md#context-compaction): the turn in hand plus the one before it stay readable, as a host that
# summarises "everything but the last exchange" does.
DEFAULT_KEEP_TURNS = 1


@dataclass(frozen=True)
class CompactionSpec:
    """A context compaction the host performs before a turn (the turn's `compaction` event): the session's
    older turns are replaced by one summary message (runners.compaction)."""

    keep_turns: int = DEFAULT_KEEP_TURNS  # the most recent completed turns kept verbatim after the summary


@dataclass(frozen=True)
class AutoCompactionSpec:
    """The host's automatic compaction (the task's `auto_compaction`): before a turn, when the session's
    history holds more than `at_tokens` tokens, it is compacted as by a `compaction` event."""

    at_tokens: int  # amnesia.tokens.count_tokens over the history messages' text
    keep_turns: int = DEFAULT_KEEP_TURNS


@dataclass(frozen=True)
class Turn:
    user: str
    remember: tuple[RememberSpec, ...] = ()
    forget: tuple[ForgetSpec, ...] = ()
    probe: ProbeSpec | None = None
    tool_events: tuple[ToolEventSpec, ...] = ()  # the agent's tool calls in this turn, in order
    compaction: CompactionSpec | None = None  # the host compacts the conversation before this turn


@dataclass(frozen=True)
class Session:
    at: float  # seconds from task start
    agent: AgentRole = "main"  # "team": a team agent (seed §6.10), one member of team `team`
    turns: tuple[Turn, ...] = ()
    team: str | None = None  # the team of a team agent's session (set exactly when agent is "team")
    ends_team: bool = False  # the team is disposed when this session ends (its shared memories with it)


@dataclass(frozen=True)
class Task:
    id: str
    group: Group
    category: str
    description: str
    sessions: tuple[Session, ...]
    lang: str = "en"
    # The task's calendar: Unix seconds (UTC) of its start, where the replay clock starts (session offsets and
    # logged `sim_time` stay relative to it). 0 = 1970-01-01T00:00Z, a Thursday: tasks that state no `start`.
    start: float = 0.0
    # The host's automatic compaction of each session's conversation; None = only the turns' events.
    auto_compaction: AutoCompactionSpec | None = None
    # where an imported task came from: dataset, item, the ttl policy its writes were given...
    origin: dict[str, str] = field(default_factory=dict, hash=False)
    source_file: str = ""
    source_line: int = 0
    extra: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def probes(self) -> list[ProbeSpec]:
        return [turn.probe for session in self.sessions for turn in session.turns if turn.probe is not None]
