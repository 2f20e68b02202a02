"""Session logs: the typed record schema, its writer and its reader — the one definition of the log format.

A run folder holds one JSONL file per (arm, task) pair, one record per event, appended in order through a
buffer that is flushed when the pair ends. A crash leaves a prefix of the records (possibly ending in a torn
line), never a reordered or padded file, so a pair is finished iff its last record is `task_end`: an
unfinished pair is redone from scratch by `--resume`.

Every record carries the envelope `v` (format version), `seq` (0, 1, 2... within the file), `type`, `arm`,
`task_id`, `sim_time` (simulated seconds from the task start), then the fields of its record class below in
declaration order, then `wall_time`. Wall-clock values live only under `wall*` keys so a determinism diff
can drop them. The writer (`LogWriter`) takes the record classes; the reader (`read_log`) checks every line
against the same classes, so the two cannot drift. `docs/ARCHITECTURE.md` carries `schema_markdown()`'s
table (a test checks it).

Versions: format 1 is the only format written so far; `READABLE_VERSIONS` lists what the reader accepts.
A field a version-1 log may lack is declared with a default, and the reader fills it in.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import operator
import os
import re
import stat
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, NamedTuple, TextIO

from amnesia.clock import Clock
from tasks.errors import ReportInputError
from tasks.exposure import TurnPrompts
from tasks.failures import failure_code

LOG_FORMAT_VERSION = 1
READABLE_VERSIONS = (1,)
MANIFEST_FORMAT = 1
ENVELOPE_FIELDS = ("v", "seq", "type", "arm", "task_id", "sim_time")


def omit_default(default: Any = None) -> Any:
    """A field that is written only when it differs from `default` (e.g. `purpose` on arm-internal calls)."""
    return dataclasses.field(default=default, metadata={"omit_default": True})


# Not frozen: a frozen dataclass sets each field through object.__setattr__, which made building the
# ~40 records of a pair cost about as much as encoding them. The writer encodes a record when it is
# written, so a record changed afterwards changes no log.
@dataclass(kw_only=True)
class Record:
    """Base of the record classes; `TYPE` is the value of the line's `type` key."""

    TYPE: ClassVar[str] = ""
    DOC: ClassVar[str] = ""  # one line for the schema table

    def fields(self) -> dict[str, Any]:
        """The record's own fields in declaration order (optional fields at their default left out)."""
        values = self.__dict__.copy()  # the dataclass __init__ sets every field, in declaration order
        for name, default in _layout(type(self)).omitted:
            if values[name] == default:
                del values[name]
        return values


def shared_value() -> Any:
    """A field holding one object that many records carry and nothing changes once it is written (the
    `task` of `task_start`: the same dict for every arm of a task), so the writer encodes it once per object
    rather than once per record. It must be the record's first field: its JSON opens the line's fields."""
    return dataclasses.field(metadata={"shared": True})


class _Layout(NamedTuple):
    """How `Record.fields` and the writer read a class, computed once per class (the writer is a hot path)."""

    omitted: tuple[tuple[str, Any], ...]  # (name, default) of the fields left out at their default
    type_json: str  # the JSON of the line's `type` value
    shared: str | None  # the `shared_value` field, if any (always the first)


_LAYOUTS: dict[type, _Layout] = {}


def _layout(cls: type) -> _Layout:
    layout = _LAYOUTS.get(cls)
    if layout is None:
        specs = dataclasses.fields(cls)
        names = tuple(f.name for f in specs)
        clash = set(names) & {*ENVELOPE_FIELDS, "wall_time"}
        if clash:  # the writer puts the envelope around the fields: a field may not reuse its names
            raise TypeError(f"{cls.__name__}: field {sorted(clash)[0]!r} is an envelope key")
        omitted = tuple((f.name, f.default) for f in specs if f.metadata.get("omit_default"))
        shared = [f.name for f in specs if f.metadata.get("shared")]
        if shared[1:] or shared[:1] not in ([], [names[0]]):
            raise TypeError(f"{cls.__name__}: only the first field may be a shared_value, not {shared}")
        layout = _LAYOUTS[cls] = _Layout(omitted, _encode_line(cls.TYPE), shared[0] if shared else None)
    return layout


@dataclass(kw_only=True)
class TaskStart(Record):
    TYPE: ClassVar[str] = "task_start"
    DOC: ClassVar[str] = "first record of a pair"
    # the full task as a dict (id, group, category, sessions, specs; ttls in seconds)
    task: dict[str, Any] = shared_value()  # noqa: RUF009
    arm_config: dict[str, Any] = dataclasses.field(default_factory=dict)  # the arm's describe()
    seed: int | None = None  # the pair seed (derived from the run seed, arm and task)
    budget_tokens: int | None = None  # hard cap on the memory block's tokens
    model: dict[str, Any] = dataclasses.field(default_factory=dict)  # the model's describe()


@dataclass(kw_only=True)
class SessionStart(Record):
    TYPE: ClassVar[str] = "session_start"
    DOC: ClassVar[str] = "a session begins (the clock has moved to `at`)"
    session_index: int  # 0-based position in the task
    session_id: str  # e.g. "s2"
    agent: str  # "main", "sub" or "team" (the task's role; an arm without teams saw a team agent as "sub")
    at: float  # simulated seconds from the task start


@dataclass(kw_only=True)
class CutRecord(Record):
    """Base of the two records of a cut in a session's conversation: the host's `compaction` (the runner's
    history) and an arm's `fold` (the arm's own view of it, seed 003). Not a record type itself."""

    session_index: int
    turn_index: int  # the turn the cut comes before (a fold at a session's end: the number of its turns)
    # compaction: "event" (the turn's `compaction`) or "tokens" (the task's `auto_compaction`);
    # fold: "threshold" (the arm's own measure), "host" (after the host's compaction) or "session-end"
    trigger: str


@dataclass(kw_only=True)
class CompactionRecord(CutRecord):
    TYPE: ClassVar[str] = "compaction"
    DOC: ClassVar[str] = (
        "the host compacted the session's conversation before a turn: the dropped turns became one summary "
        "message (docs/harness.md#context-compaction)"
    )
    keep_turns: int  # the most recent completed turns kept verbatim
    dropped_turns: list[int]  # the session's turn indices whose messages were replaced, oldest first
    dropped_messages: int  # the history messages replaced (an earlier summary included)
    dropped_tokens: int  # their tokens (amnesia.tokens.count_tokens)
    tokens_before: int  # the history's tokens before the compaction
    tokens_after: int  # the history's tokens after it (the summary included)
    summary: str  # the summary message's text, verbatim


@dataclass(kw_only=True)
class FoldRecord(CutRecord):
    TYPE: ClassVar[str] = "fold"
    DOC: ClassVar[str] = (
        "an arm folded turns out of its own view of the conversation, framed as seed 003 frames it: a "
        "`start` record, then an `end` record on every path (with the line that now stands for the turns, "
        "or why nothing changed)"
    )
    phase: str  # "start" (compaction/start) or "end" (compaction/end)
    fold_id: str  # the fold's id, the same on its start and end (clue-folding: the clue's id)
    turns: list[int]  # the session's turn indices folded, oldest first
    tokens: int  # their tokens (amnesia.tokens.count_tokens)
    summary: str = ""  # end: the line that stands for the turns in the arm's view now; "" at the start
    skipped: str | None = omit_default()  # end: why the fold left the view as it was (the store failed...)


@dataclass(kw_only=True)
class TurnRecord(Record):
    TYPE: ClassVar[str] = "turn"
    DOC: ClassVar[str] = "a user turn"
    session_index: int
    turn_index: int
    user: str  # the user's text, verbatim


@dataclass(kw_only=True)
class MemoryWrite(Record):
    TYPE: ClassVar[str] = "memory_write"
    DOC: ClassVar[str] = "an arm stored a memory (null where the arm has no such notion)"
    item_id: str
    content: str
    kind: str | None = None
    ttl: float | None = None  # seconds; null = no expiry
    pinned: bool | None = None
    scope: str | None = None  # workspace | session
    owner_id: str | None = None  # the session that owns a session-scoped memory
    key: str | None = None  # the subject, for arms that track supersession
    source: str | None = None  # user | tool | auto
    curve: str | None = None  # decay curve (amnesia arms)
    strength: float | None = None
    tokens: int | None = None
    expires_at: float | None = None  # simulated seconds


@dataclass(kw_only=True)
class MemoryTouch(Record):
    TYPE: ClassVar[str] = "memory_touch"
    DOC: ClassVar[str] = "a memory was renewed or read"
    item_id: str
    strength: float | None = None  # the new base strength
    reason: str  # inject | recall | answer


@dataclass(kw_only=True)
class MemoryForget(Record):
    TYPE: ClassVar[str] = "memory_forget"
    DOC: ClassVar[str] = "a memory was deleted; only its hash is kept"
    item_id: str
    reason: str  # expired | stale | evicted | manual | budget | agent-disposed | superseded
    content_hash: str | None = None  # sha256 of the content


@dataclass(kw_only=True)
class MemoryRefused(Record):
    TYPE: ClassVar[str] = "memory_refused"
    DOC: ClassVar[str] = "a write was refused (secret, quarantine...); no content is logged"
    reason: str
    rule: str | None = None  # the detector or rule that fired


@dataclass(kw_only=True)
class InjectionRecord(Record):
    TYPE: ClassVar[str] = "injection"
    DOC: ClassVar[str] = "the memory placed in the prompt for a turn: the block and any extra messages"
    session_index: int
    turn_index: int
    block: str  # the exact text the model sees
    tokens: int
    budget_tokens: int | None = None
    items: list[dict[str, Any]]  # [{id, tokens}] in block order
    details: dict[str, Any] | None = None  # arm-specific explanation (ranks, decisions)
    # extra user messages placed right before the user turn (seed 002's recall message), verbatim
    messages: list[dict[str, Any]] | None = omit_default()  # noqa: RUF009


@dataclass(kw_only=True)
class ModelCall(Record):
    TYPE: ClassVar[str] = "model_call"
    DOC: ClassVar[str] = "one model call with the verbatim messages; arm-internal calls have null indices"
    session_index: int | None
    turn_index: int | None
    call_index: int | None
    purpose: str | None = omit_default()  # arm-internal calls only, e.g. "claims:extract"
    messages: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    response: str = ""
    prompt_tokens: int
    completion_tokens: int
    model: str | None = None
    cached: bool = False
    tool_calls: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    wall_ms: float | None = None


@dataclass(kw_only=True)
class ToolCall(Record):
    TYPE: ClassVar[str] = "tool_call"
    DOC: ClassVar[str] = "a tool call the model made in agent-managed mode, with the result given back"
    session_index: int
    turn_index: int
    call_index: int  # the model call that asked for it
    round_index: int
    tool_call_id: str
    name: str
    arguments: str  # JSON text
    result: str  # JSON text


@dataclass(kw_only=True)
class ArmCall(Record):
    TYPE: ClassVar[str] = "arm_call"
    DOC: ClassVar[str] = (
        "a request an arm sent to its external memory server (mcp-memory) or store worker (langgraph-store),"
        " with the answer"
    )
    server: str  # which connection, e.g. "server-memory" or "amnesia s2 sub-agent"
    method: str  # initialize | tools/call | resources/read | store (langgraph-store's worker)
    name: str  # the tool, the resource URI, the server command (initialize), or put|search|delete|sweep|now
    arguments: dict[str, Any] = dataclasses.field(default_factory=dict)
    result: str = ""  # the answer's text on one line, cut to 300 characters (or the error)
    error: bool = False  # the server marked it an error, or it failed (timeout, server gone)
    wall_ms: float | None = None


@dataclass(kw_only=True)
class ToolEventRecord(Record):
    TYPE: ClassVar[str] = "tool_event"
    DOC: ClassVar[str] = "a scripted tool call of the task's agent (tasks' `tool_events`), shown to the arm"
    session_index: int
    turn_index: int
    name: str  # the tool
    arguments: str = ""
    status: str  # ok | error | open (never answered)
    output: str = ""


@dataclass(kw_only=True)
class ProbeRecord(Record):
    TYPE: ClassVar[str] = "probe"
    DOC: ClassVar[str] = "a scored question"
    session_index: int
    turn_index: int
    expect: list[str]
    stale: list[str]
    poison: list[str]
    abstain: bool
    answer: str
    classification: str  # correct | stale | poisoned | abstained | wrong
    matched: dict[str, list[str]] = dataclasses.field(default_factory=dict)  # values found, per list
    fact_changed_at: float | None = None  # sim time the expected fact was last written
    mechanism: str = omit_default("")  # what the probe tests (MECHANISMS, or an imported set's label)
    # the source units the answer needs (imported sets); None (never a shared list) when it names none
    evidence: list[str] | None = omit_default()  # noqa: RUF009
    # of the task's writes carrying that evidence: {memories, injected, stored, forgotten, not_stored}
    evidence_memories: dict[str, int] | None = omit_default()  # noqa: RUF009
    gold_answer: str | None = omit_default()  # the dataset's free-text answer, for token F1
    # the probe's not_asserting phrases (None when it has none): `rescore` needs them to score as the run did
    not_asserting: list[str] | None = omit_default()  # noqa: RUF009
    # {expect, stale, poison} -> the probe's values its prompt held (`tasks.exposure`, model-free); absent in
    # logs written before it was logged: their summary works it out from the turn's first model_call
    exposed: dict[str, list[str]] | None = omit_default()  # noqa: RUF009
    # a model judge's verdict beside the rules' (`run --judge`, `rescore --judge`; tasks.judge): one of the
    # five classifications or "unparsed", the judge model's name and its reply as given
    judge: str | None = omit_default()
    judge_model: str | None = omit_default()
    judge_response: str | None = omit_default()
    # the failure code (`tasks.failures.failure_code` of mechanism and classification; None when correct);
    # the reader fills it in for a probe line written before it was logged
    failure: str | None = omit_default()


@dataclass(kw_only=True)
class SessionEnd(Record):
    TYPE: ClassVar[str] = "session_end"
    DOC: ClassVar[str] = "a session ended (sub-agent scratch is disposed here)"
    session_index: int
    session_id: str


@dataclass(kw_only=True)
class PairError(Record):
    TYPE: ClassVar[str] = "pair_error"
    DOC: ClassVar[str] = (
        "a model call or an arm's backend (its memory server) failed, `cause` says which: the pair stops "
        "here, unfinished (`--resume` replays it)"
    )
    session_index: int | None  # the turn it failed in (or after); null before the first turn
    turn_index: int | None
    error: str  # the error, one line
    # what failed: "model" (a model call) or "arm" (the arm's backend: an external memory server or store
    # worker); absent in logs written before it was recorded
    cause: str | None = omit_default()


# How a run, a report and the viewer name what stopped a pair, by its pair_error's `cause`.
PAIR_ERROR_CAUSES = {"model": "a model error", "arm": "an arm backend error"}


def pair_error_cause(record: Mapping[str, Any]) -> str:
    """What stopped a pair, in words, from its `pair_error` record: "a model error", "an arm backend error",
    or "an error" when the record does not say (logs written before `cause` was recorded)."""
    return PAIR_ERROR_CAUSES.get(str(record.get("cause")), "an error")


@dataclass(kw_only=True)
class TaskEnd(Record):
    TYPE: ClassVar[str] = "task_end"
    DOC: ClassVar[str] = "last record: the pair is finished; `summary`: what a report reads from the pair"
    probes: int
    model_calls: int
    wall_seconds: float | None = None
    # what a report reads from the pair (`PairSummary`), added by `LogWriter`; absent in older logs
    summary: dict[str, Any] | None = omit_default()  # noqa: RUF009


RECORD_TYPES: dict[str, type[Record]] = {
    cls.TYPE: cls
    for cls in (
        TaskStart,
        SessionStart,
        CompactionRecord,
        FoldRecord,
        TurnRecord,
        MemoryWrite,
        MemoryTouch,
        MemoryForget,
        MemoryRefused,
        InjectionRecord,
        ModelCall,
        ToolCall,
        ArmCall,
        ToolEventRecord,
        ProbeRecord,
        SessionEnd,
        PairError,
        TaskEnd,
    )
}
MEMORY_TYPES = (MemoryWrite.TYPE, MemoryTouch.TYPE, MemoryForget.TYPE, MemoryRefused.TYPE)


@functools.cache  # asked once per log line; the schema does not change while a process runs
def required_fields(record_type: str) -> tuple[str, ...]:
    """The fields a line of this type must carry (those without a default)."""
    cls = RECORD_TYPES[record_type]
    return tuple(f.name for f in dataclasses.fields(cls) if not _has_default(f))


def log_filename(task_id: str) -> str:
    """The log file name of a task (ids may contain "/", file names may not)."""
    return task_id.replace("/", "__") + ".jsonl"


SUMMARY_VERSION = 2  # a summary of another version is ignored and worked out again from the records
# The columns of a summary's record families, in the order the report's frames hold them (each family's
# rows: one per model call, injection, probe, memory event). The values are those of the records, except:
# `block` (the record's block followed by its extra messages' text: all it injected), `item_ids` (the injected
# items' ids, from `items`), `event` (the memory record type without "memory_"), the probes' `exposed` (the
# record's, else worked out from its turn's first prompt: `TurnPrompts.exposure`, None when unknown)
# and the probes' `tool_calls` (tool calls the model made in the probe's turn). No wall-clock value: a pair's
# summary is the same in every run of it.
SUMMARY_COLUMNS: dict[str, tuple[str, ...]] = {
    "calls": ("sim_time", "session_index", "turn_index", "call_index", "prompt_tokens", "completion_tokens",
              "cached"),
    "injections": ("sim_time", "session_index", "turn_index", "block", "tokens", "budget_tokens", "item_ids"),
    "probes": ("sim_time", "session_index", "turn_index", "expect", "stale", "poison", "abstain", "answer",
               "classification", "fact_changed_at", "mechanism", "evidence_memories", "gold_answer",
               "exposed", "tool_calls"),
    "memory": ("sim_time", "event", "item_id", "content", "key", "source", "ttl", "pinned", "curve",
               "strength", "reason", "expires_at"),
}  # fmt: skip
_MEMORY_FIELDS = SUMMARY_COLUMNS["memory"][2:]  # read with .get: each memory record type has some of them
# The columns copied from the record as they are, in the columns' order (a record always has them).
_CALL_VALUES = operator.itemgetter(*SUMMARY_COLUMNS["calls"][1:6])
_INJECTION_VALUES = operator.itemgetter(*SUMMARY_COLUMNS["injections"][1:5])


def injected_text(block: str, messages: list[dict[str, Any]] | None) -> str:
    """All an injection put into the prompt: its block, then the content of each extra message."""
    parts = [block] if block else []
    parts.extend(str(m.get("content") or "") for m in messages or ())
    return "\n\n".join(parts)


class PairSummary:
    """What a report reads from one (arm, task) pair, built record by record: `LogWriter` feeds it every
    record it writes and stores `finish()` in the pair's `task_end` (`summary`); for a log without one the
    reader feeds it the records read back (`summarize`). One function for both, so they cannot differ.

    `add` takes a record's type, its `sim_time` and its fields (a written record's `fields()`, or a line
    read by `read_log`, whose envelope keys are ignored). Lists and dicts are copied: the summary is encoded
    when the pair ends, after the arm may have reused them. Each family keeps one row per record (a tuple
    in its columns' order) and `finish` turns the rows into columns: a row is built in one step, where
    appending to a dozen columns took a dozen."""

    def __init__(self) -> None:
        self._rows: dict[str, list[tuple[Any, ...]]] = {family: [] for family in SUMMARY_COLUMNS}
        self._tools: dict[tuple[int, int], int] = {}  # (session, turn) -> tool calls the model made
        self._prompts = TurnPrompts()  # the exposure of a probe record written without its own
        self._horizon: float | None = None
        self._add: dict[str, Callable[[float, Any], None]] = {
            ModelCall.TYPE: self._call,
            InjectionRecord.TYPE: self._injection,
            ProbeRecord.TYPE: self._probe,
            ToolCall.TYPE: self._tool_call,
            **{kind: functools.partial(self._memory, kind.removeprefix("memory_")) for kind in MEMORY_TYPES},
        }

    def add(self, kind: str, sim_time: float, fields: dict[str, Any]) -> None:
        """Take one record into the summary."""
        if self._horizon is None or sim_time > self._horizon:
            self._horizon = sim_time
        add = self._add.get(kind)
        if add is not None:
            add(sim_time, fields)

    def finish(self) -> dict[str, Any]:
        """The summary of the records added so far: {v, horizon (the latest sim_time), tool_calls (how many
        the model made), calls, injections, probes, memory (family -> column -> values, SUMMARY_COLUMNS)}."""
        families = {}
        for family, names in SUMMARY_COLUMNS.items():
            rows = self._rows[family]
            if family == "probes":  # the last column: the tool calls of the probe's turn, known only now
                rows = [(*row, self._tools.get(row[1:3], 0)) for row in rows]
            columns = zip(*rows, strict=True) if rows else ((),) * len(names)
            families[family] = {name: list(values) for name, values in zip(names, columns, strict=True)}
        return {"v": SUMMARY_VERSION, "horizon": self._horizon, "tool_calls": sum(self._tools.values()),
                **families}  # fmt: skip

    def _call(self, sim_time: float, fields: dict[str, Any]) -> None:
        self._prompts.see_call(fields)
        self._rows["calls"].append((sim_time, *_CALL_VALUES(fields), bool(fields.get("cached", False))))

    def _injection(self, sim_time: float, fields: dict[str, Any]) -> None:
        session_index, turn_index, block, tokens = _INJECTION_VALUES(fields)
        self._rows["injections"].append((
            sim_time, session_index, turn_index, injected_text(block, fields.get("messages")), tokens,
            fields.get("budget_tokens"), [item["id"] for item in fields["items"]],
        ))  # fmt: skip

    def _probe(self, sim_time: float, fields: dict[str, Any]) -> None:
        found, exposed = fields.get("evidence_memories"), self._prompts.exposure(fields)
        self._rows["probes"].append((
            sim_time, fields["session_index"], fields["turn_index"], list(fields["expect"]),
            list(fields["stale"]), list(fields["poison"]), bool(fields["abstain"]), fields["answer"],
            fields["classification"], fields.get("fact_changed_at"), fields.get("mechanism") or "",
            dict(found) if found is not None else None, fields.get("gold_answer"),
            {kind: list(values) for kind, values in exposed.items()} if exposed is not None else None,
        ))  # fmt: skip

    def _tool_call(self, sim_time: float, fields: dict[str, Any]) -> None:
        turn = (fields["session_index"], fields["turn_index"])
        self._tools[turn] = self._tools.get(turn, 0) + 1

    def _memory(self, event: str, sim_time: float, fields: dict[str, Any]) -> None:
        self._rows["memory"].append((sim_time, event, *map(fields.get, _MEMORY_FIELDS)))


def summarize(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The `PairSummary` of a pair's records as `read_log` returns them."""
    summary = PairSummary()
    for record in records:
        summary.add(record["type"], record["sim_time"], record)
    return summary.finish()


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def _line_encoder() -> Callable[[Any], str]:
    """`_ENCODER.encode` for log lines, without its per-call cost: `JSONEncoder.encode` builds a new C
    encoder (and a circular-reference table) on every call, which took half the time of encoding a small
    record. Same text: same separators, same string escaping, same float repr. A record holds no cycles
    (it is built from a task and an arm's answers), so the circular check has nothing to find."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # a Python without the C accelerator
        return _ENCODER.encode
    encode = make(None, _ENCODER.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    return lambda line: "".join(encode(line, 0))


_encode_line = _line_encoder()


def _number(value: Any) -> str:
    """The JSON of an envelope number as `_encode_line` writes it (a finite float is its repr)."""
    if type(value) is float and value - value == 0.0:  # finite: inf - inf and nan - nan are nan
        return float.__repr__(value)
    return _encode_line(value)


def _micros_json(micros: int) -> str:
    """The JSON of the wall-clock time `micros` (microseconds since the epoch) in seconds, the text
    `_number` gives that float, built from the integer: a float's repr (the shortest text that reads back)
    cost about twice as much as the rest of writing a small record. From 2004 to 2106 (2**30 to 2**32 s)
    a double's spacing is under half a microsecond, so the six-digit decimal reads back as a float whose
    repr is that decimal without its trailing zeros; outside those years the float's own repr is written."""
    if not _SPELLED_MICROS[0] <= micros < _SPELLED_MICROS[1]:
        return float.__repr__(micros / 1e6)
    digits = str(micros)
    return f"{digits[:-6]}.{digits[-6:].rstrip('0') or '0'}"


_SPELLED_MICROS = (2**30 * 10**6, 2**32 * 10**6)  # the clock values `_micros_json` spells out digit by digit

_UNSET = object()  # no value yet
# Per `shared_value` field name: the last value written there and its JSON (one entry: the arms of a task
# are replayed one after the other, runners.runner). A tuple is read and replaced whole: pairs may run on
# threads.
_SHARED_JSON: dict[str, tuple[object, str]] = {}


def _encode_fields(values: dict[str, Any], shared: str | None) -> str:
    """`_encode_line(values)`, with the value of the `shared` field (the first; None: there is none) encoded
    only when it is another object than the last one written there (`shared_value`)."""
    if shared is None:
        return _encode_line(values)
    value = values.pop(shared)
    last = _SHARED_JSON.get(shared)
    if last is None or last[0] is not value:
        last = _SHARED_JSON[shared] = (value, _encode_line(value))
    rest = _encode_line(values)
    return f"{{{_encode_line(shared)}:{last[1]}{',' if len(rest) > 2 else ''}{rest[1:]}"


_BUFFER_BYTES = 1 << 16


def _open_log(path: Path) -> TextIO:
    """The log file at `path`, opened for a pair's records: truncated, its folder made when missing (the
    pairs of an arm share one: made once, rather than asked after for every pair)."""
    try:
        return open(path, "w", encoding="utf-8", buffering=_BUFFER_BYTES)
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        return open(path, "w", encoding="utf-8", buffering=_BUFFER_BYTES)


class LogWriter:
    """Appends records for one (arm, task) pair. Opening truncates: a pair is always logged from scratch."""

    def __init__(self, path: Path, *, arm: str, task_id: str, clock: Clock) -> None:
        self.path = path
        self._arm = arm
        self._task_id = task_id
        self._clock = clock
        self._seq = 0
        self._summary = PairSummary()  # stored in the pair's task_end
        self._names = f',"arm":{_encode_line(arm)},"task_id":{_encode_line(task_id)}'  # on every line
        # Per record class: the line's text from `type` to `sim_time`'s key, and the class's layout.
        self._heads: dict[type, tuple[str, _Layout]] = {}
        # The last sim_time and its JSON: a simulated clock hands back the same float object until it moves,
        # and the same object has the same JSON (a float's repr costs as much as encoding a small record).
        self._now: object = _UNSET
        self._now_json = ""
        self._file = _open_log(path)

    def write(self, record: Record) -> None:
        """Append one record (envelope + fields + wall_time); the file gets it in order, by `close` at the
        latest (no flush per record: the finished-iff-`task_end` rule needs only the order)."""
        # The line is the JSON of {envelope, fields, wall_time} in that order: only the fields need the
        # encoder; the envelope's values are written around them as the encoder would write them.
        now = self._clock.now()
        if now is not self._now:
            self._now, self._now_json = now, _number(now)
        cls = type(record)
        known = self._heads.get(cls)
        if known is None:
            layout = _layout(cls)
            known = self._heads[cls] = (f',"type":{layout.type_json}{self._names},"sim_time":', layout)
        head, layout = known
        values = record.fields()
        self._summary.add(cls.TYPE, now, values)
        if cls is TaskEnd:  # the summary of every record, this one included (the last field)
            values["summary"] = self._summary.finish()
        fields = _encode_fields(values, layout.shared)
        self._file.write(
            f'{{"v":{LOG_FORMAT_VERSION},"seq":{self._seq}{head}{self._now_json}'
            f"{',' if len(fields) > 2 else ''}{fields[1:-1]}"
            f',"wall_time":{_micros_json(time.time_ns() // 1000)}}}\n'
        )
        self._seq += 1

    def close(self) -> None:
        """Close the file (the pair is finished only if `task_end` was written)."""
        self._file.close()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def last_record(path: Path) -> dict[str, Any] | None:
    """The last record of a log (finished or not), read from its end; None when there is none to read."""
    if not path.exists():
        return None
    with path.open("rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        chunk = 65536
        while True:  # back from the end until the last line is whole (a task_end summary can be megabytes)
            start = max(0, size - chunk)
            handle.seek(start)
            lines = handle.read().splitlines()
            if start == 0 or len(lines) > 1:
                break
            chunk *= 4
    if not lines:
        return None
    try:
        record = json.loads(lines[-1])
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    return record if isinstance(record, dict) else None


def is_finished(path: Path) -> bool:
    """A pair is finished iff its log's last record is `task_end`."""
    record = last_record(path)
    return record is not None and record.get("type") == TaskEnd.TYPE


def read_log(path: Path) -> list[dict[str, Any]]:
    """The records of one finished pair, each checked against the schema; raises `ReportInputError` naming
    `file:line` and the field on the first bad line. Optional fields a line lacks are filled with defaults."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise ReportInputError(f"{path}: invalid UTF-8: {error}") from None
    if not text:
        raise ReportInputError(f"{path}: empty log")
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    else:
        raise ReportInputError(f"{path}:{len(lines)}: truncated record (no newline at end of file)")
    records = []
    for number, line in enumerate(lines, start=1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ReportInputError(f"{path}:{number}: corrupt record: {error.msg}") from None
        if not isinstance(record, dict):
            raise ReportInputError(f"{path}:{number}: record is not a JSON object")
        records.append(_checked(record, path, number))
    if records[0]["type"] != TaskStart.TYPE:
        raise ReportInputError(f"{path}:1: type: first record must be task_start, got {records[0]['type']!r}")
    last = records[-1]
    if last["type"] == PairError.TYPE:
        raise ReportInputError(
            f"{path}:{len(records)}: unfinished pair: it stopped on {pair_error_cause(last)}: "
            f"{last['error']} (rerun with --resume)"
        )
    if last["type"] != TaskEnd.TYPE:
        raise ReportInputError(f"{path}:{len(records)}: unfinished pair: last record is not task_end")
    return records


def read_pair(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The `task_start` and `task_end` records of one finished pair, the latter with its `summary` (what a
    report needs from the pair, `PairSummary`). A log whose `task_end` carries a summary of this version is
    read at its first and last lines only (the last found from the end of the file); any other log (older
    logs, damaged ones) is read whole by `read_log`, with its errors, and summarised from its records."""
    ends = _read_ends(path)
    if ends is not None:
        return ends
    records = read_log(path)
    return records[0], {**records[-1], "summary": summarize(records)}


_TAIL_BYTES = 1 << 16  # a log shorter than this is read whole (`_short_log`), a longer one in windows

# orjson gives `json.loads`'s values for every line it accepts but one kind: an integer beyond its 64-bit
# range (below -2**63 or above 2**64 - 1), which it turns into a float where json keeps the int. Such an
# integer has 20 digits or more, or is negative with 19 or more (leading zeros are not JSON), and follows no
# number character. The cheap test first: with every digit and "-" made "0", the line holds no 20 zeros in a
# row (a line that does, say with a long number in a string or a float's decimals, is tested exactly).
_ZEROED = bytes.maketrans(b"123456789-", b"0000000000")
_BIG_INT = re.compile(rb"(?<![\w.+-])(?:[0-9]{20}|-[0-9]{19})")


def _loads(line: bytes) -> Any:
    """`json.loads(line)`, the value decoded by orjson (twice as fast: a report decodes both ends of every
    log) when it is sure to be json's, else by json itself: a line orjson rejects (NaN, 1e400, a lone
    surrogate, a UTF-8 BOM, bad JSON: json decides, and raises its own error) or that may hold an integer
    beyond 64 bits."""
    if b"00000000000000000000" in line.translate(_ZEROED) and _BIG_INT.search(line):
        return json.loads(line)
    import orjson  # here, not at the top: it imports datetime, uuid and zoneinfo, which `run` does not need

    try:
        return orjson.loads(line)
    except orjson.JSONDecodeError:
        return json.loads(line)


def _short_log(path: Path) -> bytes | None:
    """The bytes of the log at `path` when it is a file shorter than `_TAIL_BYTES`, read in one call (no
    file object: opening one cost more than reading a log); None for any other."""
    handle = os.open(path, os.O_RDONLY)
    try:
        status = os.fstat(handle)
        if not stat.S_ISREG(status.st_mode) or status.st_size >= _TAIL_BYTES:
            return None
        data = os.read(handle, status.st_size + 1)
    finally:
        os.close(handle)
    return data if len(data) == status.st_size else None  # a short read: read it the other way


def _ends(data: bytes) -> tuple[bytes, bytes]:
    """The first line of a log's bytes and its last line, as `_long_ends` reads them from its file (with
    their newline if they have one; the last line is empty when there is only one)."""
    first = data[: data.find(b"\n") + 1] or data
    cut = data.rfind(b"\n", len(first), len(data) - 1)
    return first, data[cut + 1 if cut >= 0 else len(first) :]


def _long_ends(path: Path) -> tuple[bytes, bytes]:
    """The first line of the log at `path` and its last line, found from its end backwards in windows."""
    with path.open("rb") as handle:
        first = handle.readline()
        end = handle.seek(0, 2)
        start, tail = end, b""
        while start > len(first):  # widen the window until it holds the last line's start
            start = max(len(first), start - max(_TAIL_BYTES, len(tail)))
            handle.seek(start)
            tail = handle.read(end - start)
            cut = tail.rfind(b"\n", 0, len(tail) - 1)
            if cut >= 0:
                return first, tail[cut + 1 :]
    return first, tail


def _read_ends(path: Path) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """First and last records when they are a task_start and a task_end with a current summary, each
    checked like any line; None when anything is off (the caller then reads the whole log)."""
    data = _short_log(path)
    first, tail = _long_ends(path) if data is None else _ends(data)
    if not first.endswith(b"\n") or not tail.endswith(b"\n"):
        return None
    try:
        head, last = _loads(first), _loads(tail)
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None
    if not (isinstance(head, dict) and isinstance(last, dict)) or type(last.get("seq")) is not int:
        return None
    summary = last.get("summary")
    if head.get("type") != TaskStart.TYPE or last.get("type") != TaskEnd.TYPE:
        return None
    if not isinstance(summary, dict) or summary.get("v") != SUMMARY_VERSION:
        return None
    try:
        return _checked(head, path, 1), _checked(last, path, last["seq"] + 1)
    except ReportInputError:
        return None


@functools.cache  # asked once per log line: the per-type work is done once per process
def _reading(kind: str | None) -> tuple[tuple[str, ...], tuple[dataclasses.Field[Any], ...]]:
    """For a line of type `kind`: the keys it must carry (envelope, then the fields without a default), and
    the fields the reader fills in when they are absent (defaults, except `omit_default` ones)."""
    if kind not in RECORD_TYPES:
        return ENVELOPE_FIELDS, ()
    fields = dataclasses.fields(RECORD_TYPES[kind])
    filled = tuple(f for f in fields if _has_default(f) and not f.metadata.get("omit_default"))
    return (*ENVELOPE_FIELDS, *required_fields(kind)), filled


def _checked(record: dict[str, Any], path: Path, number: int) -> dict[str, Any]:
    kind = record.get("type")
    required, filled = _reading(kind if isinstance(kind, str) else None)
    for name in required:
        if name not in record:
            raise ReportInputError(f"{path}:{number}: {name}: missing in {kind or 'record'} record")
    if record["v"] not in READABLE_VERSIONS:
        raise ReportInputError(f"{path}:{number}: v: unknown log format {record['v']!r}")
    if record["seq"] != number - 1:
        raise ReportInputError(f"{path}:{number}: seq: expected {number - 1}, got {record['seq']!r}")
    for field in filled:
        if field.name not in record:
            record[field.name] = _default_of(field)
    if kind == ProbeRecord.TYPE and "failure" not in record:  # a log written before the field: derive it
        failure = failure_code(record.get("mechanism"), record["classification"])
        if failure is not None:  # as the writer does: absent when correct
            record["failure"] = failure
    return record


def _has_default(field: dataclasses.Field[Any]) -> bool:
    return field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING


def _default_of(field: dataclasses.Field[Any]) -> Any:
    if field.default is not dataclasses.MISSING:
        return field.default
    return field.default_factory()  # type: ignore[misc]


def parse_record(record: dict[str, Any]) -> Record:
    """The typed record for a line read by `read_log` (envelope keys dropped)."""
    cls = RECORD_TYPES[record["type"]]
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in record.items() if k in names})


def schema_markdown() -> str:
    """The record table of docs/ARCHITECTURE.md, generated from the classes above."""
    rows = ["| type | fields | what |", "|---|---|---|"]
    for cls in RECORD_TYPES.values():
        names = []
        for field in dataclasses.fields(cls):
            optional = (
                field.default is not dataclasses.MISSING or field.default_factory is not dataclasses.MISSING
            )
            names.append(f"`{field.name}`" + ("?" if optional else ""))
        rows.append(f"| `{cls.TYPE}` | {', '.join(names)} | {cls.DOC} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(schema_markdown())
