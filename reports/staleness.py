"""When is a probe's stale value out of date? Model-independent: decided from the task spec alone.

A task's *stale values* are the union of its probes' `stale` lists. For a value V the related statements are
the task's remember specs that assert V or one of its rivals (the `expect` values of the probes listing V as
stale) or share a `key` with a statement asserting V, and forget specs on such a key or whose query matches a
statement asserting V. V is **out of date at time t** once it has been asserted at or before t and the latest
related statement at or before t is a forget, does not assert V, or asserts V with a ttl that has run out.
Statements are timed at their session's `at`. Assertion uses `tasks.scoring.asserted_values`, so "no longer
lapsang" does not assert lapsang.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tasks.scoring import asserted_values


@dataclass(frozen=True)
class Statement:
    at: float
    order: int
    content: str  # remember content, or a forget's query
    key: str | None
    ttl: float | None
    is_forget: bool = False


@dataclass(frozen=True)
class StaleValue:
    value: str
    statements: tuple[Statement, ...]  # related statements in time order
    asserts: tuple[bool, ...]  # whether each related statement asserts the value
    _times: tuple[float, ...] = field(init=False, repr=False, compare=False)  # each statement's `at`
    _first_assert: float = field(init=False, repr=False, compare=False)  # position of the first assertion

    def __post_init__(self) -> None:
        object.__setattr__(self, "_times", tuple(s.at for s in self.statements))
        first = next((i for i, asserts in enumerate(self.asserts) if asserts), math.inf)
        object.__setattr__(self, "_first_assert", first)

    def out_of_date(self, t: float) -> bool:
        past = bisect.bisect_right(self._times, t)  # the statements at or before t: a prefix (time order)
        if self._first_assert >= past:  # not asserted yet
            return False
        latest = self.statements[past - 1]
        if not self.asserts[past - 1]:
            return True
        return latest.at + (math.inf if latest.ttl is None else latest.ttl) <= t


def _statements(task: dict[str, Any]) -> list[Statement]:
    found: list[Statement] = []
    for session in task.get("sessions", ()):
        for turn in session.get("turns", ()):
            for spec in turn.get("forget") or ():
                found.append(
                    Statement(session["at"], len(found), spec.get("query") or "", spec.get("key"), None, True)
                )
            for spec in turn.get("remember") or ():
                ttl = spec.get("ttl")  # "never" (a logged `never` ttl) expires no more than an absent one
                found.append(
                    Statement(
                        session["at"],
                        len(found),
                        spec["content"],
                        spec.get("key"),
                        ttl if ttl != "never" else None,
                    )
                )
    return found


Scan = Callable[[str, tuple[str, ...]], set[str]]  # (text, values) -> the values the text asserts


def stale_values(task: dict[str, Any], scan: Scan = asserted_values) -> list[StaleValue]:
    """Every stale value of the task's probes with the statements that decide when it is out of date.
    `scan`: `asserted_values`, or a function giving the same sets (a cache)."""

    def _asserts(statement: Statement, values: tuple[str, ...]) -> bool:
        return not statement.is_forget and bool(scan(statement.content, values))

    probes = [t["probe"] for s in task.get("sessions", ()) for t in s.get("turns", ()) if t.get("probe")]
    statements = _statements(task)
    result = []
    for value in dict.fromkeys(v for probe in probes for v in probe.get("stale", ())):
        rivals = [v for probe in probes if value in probe.get("stale", ()) for v in probe.get("expect", ())]
        asserting = [s for s in statements if _asserts(s, (value,))]
        keys = {s.key for s in asserting if s.key}

        def related(s: Statement, asserting=asserting, keys=keys, rivals=rivals, value=value) -> bool:
            if s.key is not None and s.key in keys:
                return True
            if s.is_forget:
                return bool(s.content) and any(
                    s.content.casefold() in a.content.casefold() for a in asserting
                )
            return _asserts(s, (value, *rivals))

        chosen = tuple(s for s in statements if related(s))
        chosen = tuple(sorted(chosen, key=lambda s: (s.at, s.order)))
        result.append(StaleValue(value, chosen, tuple(_asserts(s, (value,)) for s in chosen)))
    return result


class StaleChecker:
    """Which stale values a text asserts while they are out of date, over many (task, text, time) triples of
    a run: each task's stale values are worked out once, and each distinct (text, values) is scanned once
    (one memory block is shown at many calls, one item's content at each of its touches, and generated
    tasks share statements and values). A task is given as its spec (the task_start's `task`), known by its
    id."""

    def __init__(self) -> None:
        # task -> its stale values, their names, and the names out of date at each time asked about (the
        # same times come in every arm's pair of the task)
        self._values: dict[str, tuple[list[StaleValue], tuple[str, ...], dict[float, list[str]]]] = {}
        self._scans: dict[tuple[str, tuple[str, ...]], set[str]] = {}

    def _scan(self, text: str, values: tuple[str, ...]) -> set[str]:
        found = self._scans.get((text, values))
        if found is None:
            found = self._scans[(text, values)] = asserted_values(text, values)
        return found

    def _known(
        self, task: dict[str, Any]
    ) -> tuple[list[StaleValue], tuple[str, ...], dict[float, list[str]]]:
        """The task's stale values (`stale_values`), their names, and time -> the names out of date then
        (filled as times are asked about), worked out on first use."""
        found = self._values.get(task["id"])
        if found is None:
            values = stale_values(task, self._scan)
            found = self._values[task["id"]] = (values, tuple(v.value for v in values), {})
        return found

    def pair_counts(
        self, task: dict[str, Any], summary: dict[str, dict[str, list[Any]]]
    ) -> tuple[int, int, int]:
        """Of one (arm, task) pair, from its summary (`tasks.logschema.SUMMARY_COLUMNS`): the model calls
        whose injected block (their turn's; the last injection of the turn when there are several) asserts a
        stale value out of date at the call's time; the items whose every touch was an injection (kept alive
        only by being shown); and how many of those were out of date at one of those touches (their content
        being their last write's)."""
        values, names, due = self._known(task)  # due: time -> the values out of date then
        memory = summary["memory"]
        shown: dict[Any, bool] = {}  # touched item -> every touch so far was an injection
        for event, item, reason in zip(memory["event"], memory["item_id"], memory["reason"], strict=True):
            if event == "touch":
                shown[item] = shown.get(item, True) and reason == "inject"
        kept = [item for item, only in shown.items() if only]
        if not values:  # a task without stale values: nothing it shows is ever out of date
            return 0, len(kept), 0

        def asserts_out_of_date(text: str, t: float) -> bool:
            late = due.get(t)
            if late is None:
                late = due[t] = [v.value for v in values if v.out_of_date(t)]
            # the text is scanned only when something is out of date at t
            return bool(late) and not self._scan(text, names).isdisjoint(late)

        injections, calls = summary["injections"], summary["calls"]
        turns = zip(injections["session_index"], injections["turn_index"], strict=True)
        blocks = dict(zip(turns, injections["block"], strict=True))  # the last injection of a turn wins
        stale_calls = 0
        turns = zip(calls["session_index"], calls["turn_index"], strict=True)
        for turn, t in zip(turns, calls["sim_time"], strict=True):
            text = blocks.get(turn)
            if text and asserts_out_of_date(text, t):
                stale_calls += 1
        if not kept:
            return stale_calls, 0, 0
        content: dict[Any, str] = {}  # item -> its last write's content
        times: dict[Any, list[float]] = {item: [] for item in kept}  # kept item -> the times of its touches
        columns = ("event", "item_id", "content", "sim_time")
        for event, item, text, t in zip(*(memory[name] for name in columns), strict=True):
            if event == "write":
                content[item] = text
            elif event == "touch" and item in times:
                times[item].append(t)
        stale = 0
        for item, touched in times.items():
            text = content.get(item)
            stale += bool(text) and any(asserts_out_of_date(text, t) for t in touched)
        return stale_calls, len(kept), stale
