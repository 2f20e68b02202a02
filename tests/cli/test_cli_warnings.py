"""Warnings where a user would be misled: an option that can change no outcome on the selected tasks, and a
report of a run whose --limit left whole groups out."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from runners.armconfig import ineffective_options, resolve_arm_specs
from tasks.load import load_tasks

WARNING = (
    "warning: amnesia.default_ttl=7d changes no outcome here: every one of the 2 writes in the selected "
    "tasks has its own ttl or a pin, and default_ttl applies only to writes without one"
)


def _invoke(args: list[str]) -> tuple[int, list[str]]:
    result = CliRunner().invoke(app, args)
    return result.exit_code, result.output.splitlines()


def test_a_default_ttl_that_no_write_uses_is_warned_about_once(
    drink_task, run_args, write_tasks, tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks", [drink_task])  # both writes carry a ttl
    code, lines = _invoke(run_args(tasks, tmp_path / "run", "--set", "amnesia.default_ttl=7d"))
    assert code == 0
    assert [line for line in lines if line.startswith("warning:")] == [WARNING]


def test_no_warning_when_a_write_takes_the_default_ttl(
    drink_task, run_args, write_tasks, tmp_path: Path
) -> None:
    drink = copy.deepcopy(drink_task)
    del drink["sessions"][1]["turns"][0]["remember"]["ttl"]  # this write now lives by the default ttl
    tasks = write_tasks(tmp_path / "tasks", [drink])
    code, lines = _invoke(run_args(tasks, tmp_path / "run", "--set", "amnesia.default_ttl=7d"))
    assert code == 0 and not [line for line in lines if line.startswith("warning:")]


@pytest.mark.parametrize(
    ("arms", "assignments", "warned"),
    [
        (["amnesia"], ["amnesia.ttl=2d"], ["amnesia.ttl"]),  # the alias too
        (["amnesia"], ["amnesia.default_curve=flat"], []),  # bites: every write decays on it
        (["amnesia-hard-ttl"], [], []),  # a variant's own settings are not the user's doing
        (["agent-managed"], ["agent-managed.default_ttl=7d"], []),  # the model may write without a ttl
        (
            ["amnesia", "full-memory"],
            ["amnesia.ttl=2d", "full-memory.default_ttl=1d"],
            ["amnesia.ttl", "full-memory.default_ttl"],
        ),
    ],
)
def test_only_explicit_default_ttls_of_arms_that_apply_task_writes_are_flagged(
    drink_task,
    preference_task,
    write_tasks,
    tmp_path: Path,
    arms: list[str],
    assignments: list[str],
    warned: list[str],
) -> None:
    tasks = load_tasks(write_tasks(tmp_path / "tasks", [drink_task, preference_task]))
    lines = ineffective_options(resolve_arm_specs(arms, None, assignments), tasks)
    assert [line.split("=")[0] for line in lines] == warned


def test_a_report_says_which_groups_the_limit_left_out(small_set_tasks, write_tasks, tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)  # harmful, helpful, harmful, mixed
    out = tmp_path / "run"
    code, _ = _invoke(["run", "--no-progress", "--tasks", str(tasks), "--limit", "1", "--out", str(out)])
    assert code == 0
    assert json.loads((out / "manifest.json").read_text())["groups_left_out_by_limit"] == ["helpful", "mixed"]
    report = (out / "report" / "report.md").read_text(encoding="utf-8")
    assert (
        "**Missing groups:** `--limit 1` left out every task of group(s) helpful, mixed; the tables cover "
        "harmful only, and group `all` pools only those."
    ) in report


def test_groups_chosen_with_group_are_not_reported_missing(
    small_set_tasks, write_tasks, tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    out = tmp_path / "run"
    args = [
        "run",
        "--no-progress",
        "--tasks",
        str(tasks),
        "--group",
        "harmful",
        "--limit",
        "5",
        "--out",
        str(out),
    ]
    assert _invoke(args)[0] == 0
    assert json.loads((out / "manifest.json").read_text())["groups_left_out_by_limit"] == []
    assert "Missing groups" not in (out / "report" / "report.md").read_text(encoding="utf-8")
