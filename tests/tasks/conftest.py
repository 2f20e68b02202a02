"""Fixtures for the task tests: the check that a task is a fair test, shared by the shipped-set and generator
tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tasks.scoring import find_mentions
from tasks.spec import Task


def _probe_values_written_before_and_not_asked(task: Task) -> None:
    """Every candidate value of a probe was written to memory earlier in the task — in a remember spec or
    in the output of one of the agent's tool calls (`tool_events`), which memory systems may capture —
    and the question itself does not contain it (so the scripted model can only answer from what its
    memory shows), except the stale values a false-premise question presupposes (the scripted model does
    not read the question). In a task with context compaction a value may also have been said only in an
    earlier user turn: what survives the cut of the conversation is what such a task measures."""
    written: list[str] = []
    compacts = task.auto_compaction is not None or any(
        turn.compaction for session in task.sessions for turn in session.turns
    )
    for session in task.sessions:
        for turn in session.turns:
            if turn.probe is not None:
                for value in turn.probe.candidates:
                    assert any(find_mentions(content, [value]) for content in written), (task.id, value)
                    premise = turn.probe.mechanism == "false-premise" and value in turn.probe.stale
                    assert premise or not find_mentions(turn.user, [value]), (task.id, value)
            written.extend(spec.content for spec in turn.remember)
            if compacts:
                written.append(turn.user)
            written.extend(f"{event.arguments} {event.output}" for event in turn.tool_events)


@pytest.fixture(scope="session")
def assert_probe_values_written_before_and_not_asked() -> Callable[[Task], None]:
    """`assert_probe_values_written_before_and_not_asked(task)`: fail unless every probe value was written
    earlier and is absent from its question. Session-scoped so that hypothesis tests may use it."""
    return _probe_values_written_before_and_not_asked
