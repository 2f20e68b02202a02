"""Tool events in tasks (issue 17): a turn's scripted tool calls (ok / error with output, open without one)
load into `ToolEventSpec`s, and a malformed one is refused with its line and field."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tasks.load import load_tasks, validate_path
from tasks.spec import ToolEventSpec

TASK = """\
id: t/tools
group: helpful
category: tool-workaround
description: A tool fails twice, then works.
sessions:
  - at: 0s
    turns:
      - user: "Install the dependencies."
        tool_events:
          - {name: shell, arguments: "pnpm install", status: error, output: "ETIMEDOUT"}
          - {name: shell, arguments: "pnpm i --registry=npmmirror.com", status: ok, output: "done"}
          - {name: shell, arguments: "tail -f build.log", status: open}
  - at: 1d
    turns:
      - user: "Which registry worked?"
        probe: {expect: [npmmirror]}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_tool_events_load_in_order_with_their_outcome(tmp_path):
    (task,) = load_tasks(write(tmp_path, TASK))
    events = task.sessions[0].turns[0].tool_events
    assert events[0] == ToolEventSpec("shell", "pnpm install", "error", "ETIMEDOUT")
    assert events[1].status == "ok" and events[1].output == "done"
    assert events[2] == ToolEventSpec("shell", "tail -f build.log", "open", "")
    assert task.sessions[1].turns[0].tool_events == ()


@pytest.mark.parametrize(
    ("old", "new", "field", "problem"),
    [
        ("status: error,", "status: failed,", "tool_events[0].status", "expected one of ok|error|open"),
        (
            "status: open}",
            'status: open, output: "x"}',
            "tool_events[2].output",
            "an open call never got a result",
        ),
        (', output: "done"}', "}", "tool_events[1].output", "a finished call (ok) needs its output"),
        (
            '{name: shell, arguments: "pnpm install",',
            '{arguments: "pnpm install",',
            "tool_events[0].name",
            "missing",
        ),
        ("status: open}", "status: open, exit: 1}", "tool_events[2].exit", "unknown field"),
    ],
)
def test_a_malformed_tool_event_is_refused_with_its_line_and_field(tmp_path, old, new, field, problem):
    assert old in TASK
    errors = validate_path(write(tmp_path, TASK.replace(old, new, 1)))
    assert len(errors) == 1, errors
    (error,) = errors
    assert error.field == f"sessions[0].turns[0].{field}" and problem in error.problem
    event = int(field.split("[")[1].split("]")[0])
    assert error.line == TASK.splitlines().index("        tool_events:") + 2 + event
