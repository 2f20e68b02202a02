"""A task's stated calendar (`start`): validated in one line, the replay clock starts there (the engine reads
weekdays from it) while logged sim_time stays an offset, and the generator's weekday phrases agree with it."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from tasks.generate import START, WEEKDAYS, generate
from tasks.load import load_tasks, validate_path

MONDAY_9 = datetime(2024, 1, 1, 9, tzinfo=timezone.utc).timestamp()
FREEZE = """\
id: t/freeze
group: harmful
category: expired-constraint
description: A freeze until Friday, written with a generous ttl, asked about three days later.
{start}sessions:
  - at: 0s
    turns:
      - user: "Staging is frozen until Friday."
        remember: {{content: "The staging database is frozen until Friday.", ttl: 30d, key: freeze}}
  - at: 3d
    turns:
      - user: "Can I run migrations on staging now?"
        probe: {{mechanism: lapsed-constraint, abstain: true, stale: [frozen]}}
"""


def _file(tmp_path: Path, start: str, name: str = "t.yaml") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / name
    path.write_text(FREEZE.format(start=f"start: {start}\n" if start else ""), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("start", "seconds"),
    [
        ("", 0.0),  # no start: 1970-01-01T00:00Z, a Thursday
        ("2024-01-01T09:00:00Z", MONDAY_9),
        ("'2024-01-01T09:00:00Z'", MONDAY_9),
        ("2024-01-01 09:00:00", MONDAY_9),  # no zone: UTC
        ("2024-01-01T17:00:00+08:00", MONDAY_9),
        ("2024-01-01", MONDAY_9 - 9 * 3600),
    ],
)
def test_a_stated_start_loads_as_unix_seconds(tmp_path: Path, start: str, seconds: float) -> None:
    (task,) = load_tasks(_file(tmp_path, start))
    assert task.start == seconds


@pytest.mark.parametrize(
    ("start", "problem"),
    [
        (
            "next monday",
            "expected a date or date-time like 2024-03-04 or 2024-03-04T09:00:00Z, got 'next monday'",
        ),
        ("7", "expected a date or date-time like 2024-03-04 or 2024-03-04T09:00:00Z, got 7"),
        ("1969-12-31", "expected a start between 1970-01-01 and 2999-12-31, got 1969-12-31"),
        ("[2024-01-01]", "expected a single value, got a list"),
    ],
)
def test_a_bad_start_is_one_error_naming_its_line_and_field(tmp_path: Path, start: str, problem: str) -> None:
    path = _file(tmp_path, start)
    ((line, field, found),) = [(e.line, e.field, e.problem) for e in validate_path(path)]
    assert (line, field, found) == (5, "start", problem)
    from amnesia_bench.cli import app

    result = CliRunner().invoke(app, ["validate", str(path)])
    assert result.exit_code == 2 and f"t.yaml:5: start: {problem}" in result.output


def _run(folder: Path, out: Path) -> list[dict]:
    from amnesia_bench.cli import app

    args = [
        "run",
        "--no-progress",
        "--no-report",
        "--tasks",
        str(folder),
        "--arms",
        "amnesia",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, [*args, "--set", "amnesia.expiry_from_text=true"])
    assert result.exit_code == 0, result.output
    (log,) = (out / "logs" / "amnesia").glob("*.jsonl")
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_the_replay_clock_starts_at_the_stated_start_and_logs_keep_offsets(tmp_path: Path) -> None:
    """'Until Friday' written on Monday still holds on Thursday; written on the default Thursday (no start),
    it ended at Friday's midnight, before the probe three days later. Logged sim_time is the same offset."""
    stated = _run(_file(tmp_path / "monday", "2024-01-01T09:00:00Z").parent, tmp_path / "run-monday")
    plain = _run(_file(tmp_path / "thursday", "").parent, tmp_path / "run-thursday")
    for records in (stated, plain):
        assert [r["sim_time"] for r in records if r["type"] == "session_start"] == [0.0, 3 * 86_400.0]
    (monday_write,) = [r for r in stated if r["type"] == "memory_write"]
    assert monday_write["expires_at"] == datetime(2024, 1, 6, tzinfo=timezone.utc).timestamp()
    probe = {
        name: next(r for r in records if r["type"] == "probe")
        for name, records in (("monday", stated), ("thursday", plain))
    }
    assert probe["monday"]["classification"] == "stale"  # the freeze is still shown on Thursday
    assert probe["thursday"]["classification"] == "correct"  # it ended with Friday 1970-01-02
    assert [r["task"]["start"] for r in stated if r["type"] == "task_start"] == [MONDAY_9]


def test_generated_weekday_phrases_are_the_stated_calendars(tmp_path: Path) -> None:
    assert START.weekday() == 0  # a Monday
    tasks = [t for t in generate("harmful", 60, seed=5) if t["category"] == "expired-constraint"]
    assert tasks and {t["start"] for t in tasks} == {"2024-01-01T09:00:00Z"}
    for task in tasks:
        (write,) = [turn["remember"] for s in task["sessions"] for turn in s["turns"] if "remember" in turn]
        named = [day for day in WEEKDAYS[task["lang"]] if day in write["content"]]
        ends = [day for day in range(7) if WEEKDAYS[task["lang"]][day] in named]
        assert len(named) == 1 and 2 <= ends[0] <= 4, write[
            "content"
        ]  # Wednesday..Friday of the start's week
    path = tmp_path / "gen.yaml"
    path.write_text(yaml.safe_dump(tasks, allow_unicode=True), encoding="utf-8")
    assert {task.start for task in load_tasks(path)} == {START.timestamp()}
