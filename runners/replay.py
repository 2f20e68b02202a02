"""Replay one task on one arm: a fresh arm, a simulated clock from the task's start (`Task.start`: 0 unless
the task states one), sessions at their offsets from it, one model call per user turn, every model-visible
byte logged (record layout: docs/ARCHITECTURE.md, "Session logs").

Seeds: the pair seed comes from (run seed, task id) through a stable hash, and each call's seed from (pair
seed, call index), so no result depends on run order or on the number of workers. The arm is deliberately left
out: every arm meets the same model randomness on a task (common random numbers), so paired differences
between arms measure memory alone and B equals C whenever nothing expires.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import shutil
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from amnesia.clock import SimulatedClock
from arms.base import ArmContext, ArmFailed, CompactionInfo, MemoryContext, arm_session
from runners.armconfig import ArmSpec
from runners.compaction import Conversation, history_tokens
from runners.evidence import EvidenceTracker
from runners.judging import judge_fields, judge_model
from runners.toolloop import ToolInvocation, ToolRound, run_tool_loop
from tasks.errors import BadInput, HarnessError
from tasks.exposure import exposed_values
from tasks.failures import failure_code
from tasks.logschema import (
    CompactionRecord,
    InjectionRecord,
    LogWriter,
    ModelCall,
    PairError,
    ProbeRecord,
    SessionEnd,
    SessionStart,
    TaskEnd,
    TaskStart,
    ToolEventRecord,
    TurnRecord,
)
from tasks.modelapi import Message, Model, ModelRequest, ModelResponse
from tasks.scoring import asserted_values, classify
from tasks.spec import NEVER, ProbeSpec, Task, ToolEventSpec, Turn

SYSTEM_TEXT = (
    "You are a helpful assistant. Answer briefly. When a memory block is present, it lists what you remember "
    "from earlier sessions, with how long ago each item was written. If you do not know the answer, say "
    '"I don\'t know."'
)


def derive_seed(*parts: object) -> int:
    """A stable 63-bit seed from its parts (never Python's salted hash())."""
    digest = hashlib.sha256("\x1f".join(str(part) for part in parts).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") >> 1


# The arms of a task are replayed one after the other (runners.runner) and meet the same turns, writes and
# (often) answers: what depends only on those is worked out once per task, not once per arm.
_turn_seed = lru_cache(maxsize=4096)(derive_seed)


@lru_cache(maxsize=4096)
def _asserted(text: str, values: tuple[str, ...]) -> frozenset[str]:
    return frozenset(asserted_values(text, values))


_classified = lru_cache(maxsize=4096)(classify)


def build_messages(
    block: str,
    history: list[Message],
    user_text: str,
    tool_messages: tuple[Message, ...] = (),
    extra: list[Message] | tuple[Message, ...] = (),
) -> list[Message]:
    """The prompt layout, identical for every arm: system (+ memory block), history, the arm's extra messages
    (`MemoryContext.messages`, e.g. a recall message), user text, then the turn's scripted tool calls with
    their results (`tool_messages`)."""
    system = SYSTEM_TEXT + ("\n\n" + block if block else "")
    return [
        {"role": "system", "content": system},
        *history,
        *extra,
        {"role": "user", "content": user_text},
        *tool_messages,
    ]


def tool_event_messages(events: tuple[ToolEventSpec, ...], call_id_prefix: str) -> tuple[Message, ...]:
    """The turn's finished tool calls as the agent's transcript has them: an assistant message with the
    call, then the tool's answer (`error: ...` for a failure). An `open` call never got a result and a
    chat API refuses an unanswered call, so it stays out of the prompt (the arm still sees it)."""
    messages: list[Message] = []
    for index, event in enumerate(events):
        if event.status == "open":
            continue
        call_id = f"{call_id_prefix}-{index}"
        arguments = json.dumps({"input": event.arguments}, ensure_ascii=False)
        call = {"id": call_id, "type": "function", "function": {"name": event.name, "arguments": arguments}}
        output = event.output if event.status == "ok" else f"error: {event.output}"
        # content "" rather than null: the API takes both, and chat templates join contents as strings
        messages.append({"role": "assistant", "content": "", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": output})
    return tuple(messages)


def task_to_dict(task: Task) -> dict[str, Any]:
    """`dataclasses.asdict(task)` (the task_start record's `task`), without its per-value deepcopy: every
    value of a task spec is immutable or a fresh container built here. The last task's dict is kept: the
    arms of a task are replayed one after the other (runners.runner), and the dict is only ever encoded."""
    global _LAST_TASK
    last = _LAST_TASK  # one read: pairs may run on threads
    if last is None or last[0] is not task:
        last = _LAST_TASK = (task, _plain(task))
    return last[1]


_LAST_TASK: tuple[Task, dict[str, Any]] | None = None


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}  # None: not a dataclass


def _plain(value: Any) -> Any:
    cls = type(value)
    try:
        names = _FIELD_NAMES[cls]
    except KeyError:
        fields = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else None
        names = _FIELD_NAMES[cls] = None if fields is None else tuple(f.name for f in fields)
    if names is not None:
        return {name: _plain(getattr(value, name)) for name in names}
    if cls is tuple or cls is list:
        return cls(_plain(element) for element in value)
    if cls is dict:
        return {_plain(key): _plain(element) for key, element in value.items()}
    if (
        cls is float and value == NEVER
    ):  # a `never` ttl: logs stay plain JSON (no Infinity), as the task file wrote it
        return "never"
    return value


@dataclass(frozen=True)
class PairJob:
    """Everything a worker needs to replay one (arm, task) pair."""

    arm: ArmSpec
    task: Task
    seed: int
    log_path: Path
    workdir: Path
    budget_tokens: int
    judge: str | None = None  # a model spec: the judge that classifies each probe answer beside the rules


class _FactTimes:
    """When each probe value was last written into memory, for the probe record's `fact_changed_at`."""

    def __init__(self) -> None:
        self._written_at: dict[str, float] = {}
        self._values: tuple[str, ...] = ()

    def watch(self, task: Task) -> None:
        self._values = tuple({v: None for p in task.probes for v in p.expect})

    def record(self, content: str, now: float) -> None:
        for value in _asserted(content, self._values):
            self._written_at[value] = now

    def changed_at(self, probe: ProbeSpec) -> float | None:
        times = [self._written_at[v] for v in probe.expect if v in self._written_at]
        return max(times) if times else None


class _SinceStart:
    """The replay clock read as seconds since the task's stated start: the logs' `sim_time`
    (docs/ARCHITECTURE.md) stays an offset from the task start, as the session offsets are, whatever calendar
    the task states."""

    def __init__(self, clock: SimulatedClock, start: float) -> None:
        self._clock, self._start = clock, start

    def now(self) -> float:
        return self._clock.now() - self._start


def replay_pair(job: PairJob, model: Model) -> tuple[int, int]:
    """Replay one pair into its log file (truncated first); its last record is `task_end` iff it completed.
    A failed model call (`ModelFailed`) or arm backend (`ArmFailed`) ends the pair with a `pair_error` record
    instead. Returns (model calls, probes)."""
    started = time.perf_counter()
    model = _CheckedModel(model)  # the arm's own calls go through it too
    task = job.task
    if job.workdir.exists():  # left over from an interrupted attempt: the pair restarts from scratch
        shutil.rmtree(job.workdir)
    clock = SimulatedClock(task.start)  # the task's calendar: arms and the engine read dates from it
    since_start = clock if task.start == 0.0 else _SinceStart(clock, task.start)  # logs keep offsets
    arm = job.arm.build()
    fact_times = _FactTimes()
    fact_times.watch(task)
    with (
        LogWriter(job.log_path, arm=job.arm.name, task_id=task.id, clock=since_start) as log,
        _FailedCall(log, arm) as failed_call,
    ):
        evidence = EvidenceTracker(log.write)
        ctx = ArmContext(
            task_id=task.id,
            seed=job.seed,
            clock=clock,
            log=evidence.log,
            workdir=job.workdir,
            budget_tokens=job.budget_tokens,
            model=model,
        )
        log.write(
            TaskStart(
                task=task_to_dict(task),
                arm_config=arm.describe(),
                seed=job.seed,
                budget_tokens=job.budget_tokens,
                model=model.describe(),
            )
        )
        probes = calls = 0
        arm.start_task(ctx)
        turn_ordinal = 0  # the per-call seed follows the turn, so every arm meets the same model randomness
        for session_index, session in enumerate(task.sessions):
            clock.set(max(task.start + session.at, clock.now()))
            arm.advance_clock(clock.now())
            info = arm_session(arm, session_index, session)
            log.write(
                SessionStart(
                    session_index=session_index,
                    session_id=info.session_id,
                    agent=session.agent,
                    at=session.at,
                )
            )
            arm.start_session(info)
            conversation = Conversation()
            for turn_index, turn in enumerate(session.turns):
                where = {"session_index": session_index, "turn_index": turn_index}
                failed_call.where = where
                due = compaction_due(task, turn, conversation)
                if due is not None:
                    _compact(log, arm, conversation, due, where, info.session_id, since_start.now())
                history = conversation.messages()
                log.write(TurnRecord(**where, user=turn.user))
                arm.observe_user_turn(turn.user)
                for forget in turn.forget:
                    arm.forget(forget)
                for remember in turn.remember:
                    with evidence.writing(remember):
                        arm.remember(remember)
                    fact_times.record(remember.content, since_start.now())
                for event in turn.tool_events:
                    log.write(ToolEventRecord(**where, **dataclasses.asdict(event)))
                    arm.observe_tool_event(event)
                    if event.status != "open":
                        fact_times.record(event.output, since_start.now())
                tool_messages = tool_event_messages(turn.tool_events, f"event-{session_index}-{turn_index}")
                context = arm.memory_context(turn.user, list(history))
                _log_injection(log, where, context, job.budget_tokens)
                messages = build_messages(
                    context.block,
                    history if context.history is None else context.history,
                    turn.user,
                    tool_messages,
                    context.messages,
                )
                request = ModelRequest(
                    messages=messages,
                    candidates=turn.probe.candidates if turn.probe else (),
                    is_probe=turn.probe is not None,
                    seed=_turn_seed(job.seed, turn_ordinal),
                    now=clock.now(),
                )
                turn_ordinal += 1
                tools = arm.tools
                if tools:
                    response, calls = _agent_managed_turn(log, where, model, request, arm, tools, calls)
                else:
                    call_started = time.perf_counter()
                    response = model.complete(request)
                    wall_ms = (time.perf_counter() - call_started) * 1000.0
                    _log_model_call(log, where, calls, model, ToolRound(messages, response, wall_ms))
                    calls += 1
                if turn.probe is not None:
                    probes += 1
                    classification, shared = _classified(response.text, turn.probe, turn.user)
                    matched = {kind: list(values) for kind, values in shared.items()}  # cache's: as-is
                    judged = (
                        judge_fields(
                            _CheckedModel(judge_model(job.judge)), turn.user, turn.probe, response.text
                        )
                        if job.judge is not None
                        else {}
                    )
                    log.write(
                        ProbeRecord(
                            **where,
                            expect=list(turn.probe.expect),
                            stale=list(turn.probe.stale),
                            poison=list(turn.probe.poison),
                            abstain=turn.probe.abstain,
                            answer=response.text,
                            classification=classification,
                            matched=matched,
                            fact_changed_at=fact_times.changed_at(turn.probe),
                            mechanism=turn.probe.mechanism,
                            evidence=list(turn.probe.evidence) or None,
                            evidence_memories=(
                                evidence.state_at_probe(turn.probe.evidence, context)
                                if turn.probe.evidence
                                else None
                            ),
                            gold_answer=turn.probe.answer,
                            not_asserting=list(turn.probe.not_asserting) or None,
                            exposed=exposed_values(
                                messages, turn.probe.expect, turn.probe.stale, turn.probe.poison
                            ),
                            failure=failure_code(turn.probe.mechanism, classification),
                            **judged,
                        )
                    )
                arm.observe_answer(turn.user, response.text, context)
                conversation.add_turn(
                    turn_index,
                    [
                        *context.messages,  # appended to the conversation, as a host would
                        {"role": "user", "content": turn.user},
                        *tool_messages,
                        {"role": "assistant", "content": response.text},
                    ],
                )
            arm.end_session(info)
            log.write(SessionEnd(session_index=session_index, session_id=info.session_id))
        arm.end_task()
        log.write(TaskEnd(probes=probes, model_calls=calls, wall_seconds=time.perf_counter() - started))
    return calls, probes


def compaction_due(task: Task, turn: Turn, conversation: Conversation) -> tuple[str, int] | None:
    """(trigger, keep_turns) of the compaction the host performs before `turn`, or None: the turn's own
    `compaction` event ("event"), else the task's `auto_compaction` when the history holds more than its
    `at_tokens` ("tokens"). At most one per turn."""
    if turn.compaction is not None:
        return "event", turn.compaction.keep_turns
    auto = task.auto_compaction
    if auto is not None and conversation.tokens() > auto.at_tokens:
        return "tokens", auto.keep_turns
    return None


def _compact(
    log: LogWriter,
    arm: Any,
    conversation: Conversation,
    due: tuple[str, int],
    where: dict[str, int],
    session_id: str,
    at: float,
) -> None:
    """Compact the conversation before the turn at `where`: the `compaction` record is written first (what
    the arm logs in its hooks follows it), the arm's start hook sees the history as it was, the older turns
    become one summary message, and the arm's end hook sees the summary. Nothing happens when no turn is
    left to drop (an automatic compaction already cut them)."""
    trigger, keep_turns = due
    cut = conversation.cut(keep_turns)
    if cut is None:
        return
    tokens_before = conversation.tokens()
    tokens_after = cut.tokens_after()
    log.write(
        CompactionRecord(
            **where,
            trigger=trigger,
            keep_turns=keep_turns,
            dropped_turns=list(cut.dropped_turns),
            dropped_messages=len(cut.dropped),
            dropped_tokens=history_tokens(cut.dropped),
            tokens_before=tokens_before,
            tokens_after=tokens_after,
            summary=cut.summary,
        )
    )
    info = CompactionInfo(
        session_id=session_id,
        at=at,
        trigger=trigger,
        dropped=cut.dropped,
        summary="",
        tokens_before=tokens_before,
        tokens_after=0,
        kept=cut.kept,
        turn_index=where["turn_index"],
    )
    arm.on_compaction_start(info)
    conversation.apply(cut)
    arm.on_compaction_end(dataclasses.replace(info, summary=cut.summary, tokens_after=tokens_after))


class ModelFailed(Exception):
    """A model call of a pair failed (`_complete`); the message is the error in one line."""


def _complete(model: Model, request: ModelRequest) -> ModelResponse:
    """`model.complete(request)`; any failure but bad input (a model that cannot be set up at all, which
    stops the run) becomes `ModelFailed`: a chat template that breaks, a call that fails after its retries."""
    try:
        return model.complete(request)
    except BadInput:
        raise
    except Exception as error:
        text = str(error).strip().splitlines()
        message = text[0] if text else ""
        raise ModelFailed(
            message if isinstance(error, HarnessError) else f"{type(error).__name__}: {message}"
        ) from error


class _CheckedModel:
    """The model with its calls made through `_complete`; every other attribute is the model's own
    (`name`, `describe`, `calls_tools`...)."""

    def __init__(self, model: Model) -> None:
        self.model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self.model, name)

    def complete(self, request: ModelRequest) -> ModelResponse:
        return _complete(self.model, request)


class _FailedCall:
    """Ends a pair at a failed model call (`ModelFailed`) or a failed arm backend (`ArmFailed`: an external
    memory server): writes its `pair_error` record, at `where` (the turn in hand), and lets the run go on. On
    any error the arm first releases what it holds (`close`, e.g. a server process). The log stays unfinished
    (no task_end) for --resume, and the run names the failed pairs at its end (runners.runner)."""

    def __init__(self, log: LogWriter, arm: Any) -> None:
        self.log = log
        self.arm = arm
        self.where: dict[str, int | None] = {"session_index": None, "turn_index": None}

    def __enter__(self) -> _FailedCall:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: object) -> bool:
        if error is None:
            return False
        close = getattr(self.arm, "close", None)
        if callable(close):  # on any error: a server process the arm started must not outlive the pair
            close()
        if not isinstance(error, (ModelFailed, ArmFailed)):
            return False
        cause = "model" if isinstance(error, ModelFailed) else "arm"
        self.log.write(PairError(**self.where, error=str(error), cause=cause))
        return True


def _log_model_call(
    log: LogWriter, where: dict[str, int], call_index: int, model: Model, call: ToolRound
) -> None:
    log.write(
        ModelCall(
            **where,
            call_index=call_index,
            messages=call.messages,
            response=call.response.text,
            prompt_tokens=call.response.prompt_tokens,
            completion_tokens=call.response.completion_tokens,
            model=model.name,
            cached=call.response.cached,
            tool_calls=list(call.response.tool_calls),
            wall_ms=call.wall_ms,
        )
    )


def _agent_managed_turn(
    log: LogWriter,
    where: dict[str, int],
    model: Model,
    request: ModelRequest,
    arm: Any,
    tools: list[dict],
    first_call: int,
) -> tuple[ModelResponse, int]:
    """An arm offering `tools` lets the model use them: the turn is a tool loop (runners.toolloop), each
    round one `model_call` record and each tool call one `tool_call` record; every round keeps the turn's
    seed. Returns (the answer, the next call index)."""
    next_call = first_call

    def on_call(call: ToolRound) -> None:
        nonlocal next_call
        _log_model_call(log, where, next_call, model, call)
        next_call += 1

    def on_tool(invocation: ToolInvocation) -> None:
        log.write(invocation.to_record(**where, call_index=next_call - 1))

    response = run_tool_loop(
        model,
        request,
        tools,
        arm.dispatch_tool,
        on_call=on_call,
        on_tool=on_tool,
        seed_for_round=lambda index: request.seed,
    )
    return response, next_call


def _log_injection(log: LogWriter, where: dict[str, int], context: MemoryContext, budget: int) -> None:
    log.write(
        InjectionRecord(
            **where,
            block=context.block,
            tokens=context.tokens,
            budget_tokens=budget,
            items=context.items,
            details=context.details,
            messages=context.messages or None,
        )
    )
