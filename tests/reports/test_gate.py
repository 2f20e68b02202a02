"""The CI gate on constructed regressions: real runs of generated tasks where the candidate's `amnesia` arm is
made to forget everything (it is `no-memory` under the name), or to forget nothing (`full-memory` under the
name), or is missing. Each must fail; the unchanged rerun must pass."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from tasks.generate import generate, write_generated

runner = CliRunner()
TASKS_PER_GROUP = 40


@pytest.fixture(scope="module")
def task_set(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("gate") / "tasks"
    tasks = [t for group in ("helpful", "harmful", "mixed") for t in generate(group, TASKS_PER_GROUP, 3)]
    write_generated(tasks, folder)
    return folder


def _run(run_args, tasks: Path, out: Path, arms: str, config: str | None = None) -> Path:
    extra = []
    if config is not None:
        path = out.parent / f"{out.name}.yaml"
        path.write_text(config, encoding="utf-8")
        extra = ["--arm-config", str(path)]
    result = runner.invoke(app, run_args(tasks, out, *extra, arms=arms))
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def baseline(run_args, task_set, tmp_path_factory) -> Path:
    return _run(run_args, task_set, tmp_path_factory.mktemp("base") / "run", "full-memory,amnesia")


def _check(candidate: Path, baseline: Path, *extra: str):
    return runner.invoke(
        app, ["check", str(candidate), "--baseline", str(baseline), "--resamples", "300", *extra]
    )


def test_the_unchanged_rerun_passes_with_one_line(run_args, task_set, baseline, tmp_path):
    again = _run(run_args, task_set, tmp_path / "again", "full-memory,amnesia")
    result = _check(again, baseline)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "PASS: 32 paired comparisons (success_rate, stale_error_rate, poison_error_rate, "
        "false_forgetting_rate, context_tokens) with the baseline show no significant worsening beyond "
        "tolerance 0.02"
    ]


def test_an_arm_made_to_forget_everything_fails_on_success(run_args, task_set, baseline, tmp_path):
    candidate = _run(
        run_args, task_set, tmp_path / "forgetful", "full-memory,amnesia", "amnesia: {base: no-memory}\n"
    )
    result = _check(candidate, baseline)
    assert result.exit_code == 1, result.output
    fails = [line for line in result.output.splitlines() if line.startswith("FAIL")]
    assert any(line.startswith("FAIL success_rate arm=amnesia group=all: worse") for line in fails), fails
    assert any(line.startswith("FAIL false_forgetting_rate arm=amnesia group=helpful") for line in fails), (
        fails
    )
    assert all("arm=amnesia" in line for line in fails)
    assert "significantly lower (worse)" in result.output
    # Only the metric asked for is gated, and it still fails.
    only = _check(candidate, baseline, "--metric", "success_rate")
    assert only.exit_code == 1 and "FAIL success_rate arm=amnesia" in only.output


def test_an_arm_made_to_forget_nothing_fails_on_stale_errors(run_args, task_set, baseline, tmp_path):
    candidate = _run(
        run_args, task_set, tmp_path / "hoarder", "full-memory,amnesia", "amnesia: {base: full-memory}\n"
    )
    result = _check(candidate, baseline)
    assert result.exit_code == 1, result.output
    assert "FAIL stale_error_rate arm=amnesia group=all: worse beyond tolerance" in result.output
    assert "significantly higher (worse)" in result.output


def test_a_missing_arm_fails(run_args, task_set, baseline, tmp_path):
    candidate = _run(run_args, task_set, tmp_path / "one-arm", "full-memory")
    result = _check(candidate, baseline)
    assert result.exit_code == 1, result.output
    assert "FAIL arm=amnesia: in the baseline, missing from the candidate" in result.output


def test_a_missing_group_fails(run_args, task_set, baseline, tmp_path):
    candidate = _run(run_args, task_set, tmp_path / "no-mixed", "full-memory,amnesia")
    result = runner.invoke(app, ["check", str(candidate), "--baseline", str(baseline), "--resamples", "100"])
    assert result.exit_code == 0
    folder = candidate / "logs" / "amnesia"
    for log in folder.glob("*mixed__*.jsonl"):
        log.unlink()
    for log in (candidate / "logs" / "full-memory").glob("*mixed__*.jsonl"):
        log.unlink()
    result = _check(candidate, baseline)
    assert result.exit_code == 1, result.output
    assert "FAIL arm=amnesia group=mixed: in the baseline, missing from the candidate" in result.output
