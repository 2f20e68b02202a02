"""The CI gate on constructed regressions: real runs of generated tasks where the candidate's `amnesia` arm is
made to forget everything (it is `no-memory` under the name), or to forget nothing (`full-memory` under the
name, or its ttl expiry switched off), or is missing, at full size and as a 30-task smoke run against the full
baseline. Each must fail; the unchanged reruns, full or 30 tasks, must pass and say what they could detect."""

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


def _run(run_args, tasks: Path, out: Path, arms: str, config: str | None = None, *more: str) -> Path:
    extra = list(more)
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


PASS = (
    "PASS: 32 paired comparisons (success_rate, stale_error_rate, poison_error_rate, false_forgetting_rate, "
    "context_tokens) with the baseline show no worsening beyond tolerance 0.02 at one-sided p < 0.05"
)


def test_the_unchanged_rerun_passes_and_says_what_it_could_detect(run_args, task_set, baseline, tmp_path):
    again = _run(run_args, task_set, tmp_path / "again", "full-memory,amnesia")
    result = _check(again, baseline)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "paired on 120 of 120 baseline tasks (candidate: 120 tasks)"
    assert [line.split(" (")[0] for line in lines[1:3]] == [
        "MDE arm=full-memory group=all",
        "MDE arm=amnesia group=all",
    ]
    assert "success_rate 4.3 pts (120 tasks)" in lines[1]
    assert lines[3:] == [PASS]


def test_an_unchanged_30_task_smoke_run_passes_on_the_30_tasks_it_shares(
    run_args, task_set, baseline, tmp_path
):
    smoke = _run(run_args, task_set, tmp_path / "smoke", "full-memory,amnesia", None, "--limit", "30")
    result = _check(smoke, baseline)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "paired on 30 of 120 baseline tasks (candidate: 30 tasks)"
    # The pass reads as what it is: on 30 tasks only a success-rate drop of about 16 points is detectable.
    assert "success_rate 16.5 pts (30 tasks)" in lines[1] and "n too small (4 tasks)" in lines[1]
    assert lines[-1] == PASS


def test_a_30_task_smoke_run_without_ttl_expiry_fails(run_args, task_set, baseline, tmp_path):
    """Forgetting by ttl switched off, 30 tasks against the full baseline: the tokens it keeps fail the gate;
    its stale errors (+25 pts on 4 of 16 tasks, one-sided p = 1/16) fail only past a --max-drop."""
    smoke = _run(run_args, task_set, tmp_path / "smoke", "full-memory,amnesia", None, "--limit", "30",
                 "--set", "amnesia.auto_expire=false")  # fmt: skip
    result = _check(smoke, baseline)
    assert result.exit_code == 1, result.output
    assert (
        "FAIL context_tokens arm=amnesia group=all: worse beyond tolerance 0.02 (one-sided p" in result.output
    )
    stale = _check(smoke, baseline, "--metric", "stale_error_rate")
    assert stale.exit_code == 0 and "NOTE stale_error_rate arm=amnesia group=all: worse beyond tolerance" in (
        stale.output
    )
    dropped = _check(smoke, baseline, "--metric", "stale_error_rate", "--max-drop", "0.2")
    assert dropped.exit_code == 1, dropped.output
    assert "FAIL stale_error_rate arm=amnesia group=all: worse by more than --max-drop 0.2" in dropped.output
    assert _check(smoke, baseline, "--metric", "stale_error_rate", "--max-drop", "0.3").exit_code == 0


def test_the_full_run_without_ttl_expiry_fails_on_stale_errors(run_args, task_set, baseline, tmp_path):
    candidate = _run(run_args, task_set, tmp_path / "keep", "full-memory,amnesia", None,
                     "--set", "amnesia.auto_expire=false")  # fmt: skip
    result = _check(candidate, baseline)
    assert result.exit_code == 1, result.output
    assert (
        "FAIL stale_error_rate arm=amnesia group=all: worse beyond tolerance 0.02 (one-sided p"
        in result.output
    )
    assert all("arm=amnesia" in line for line in result.output.splitlines() if line.startswith("FAIL"))


def test_the_issue_29_smoke_run_fails_on_its_stale_error_regression(run_args, tmp_path):
    """The case a reviewer found passing: the shipped tasks, a --limit 30 run with ttl expiry switched off
    checked against the full baseline. Its stale errors rise on every sampled task that changes (p = 1/2^k
    one-sided for k such tasks): the one-sided rule catches it where the 10-differing-tasks rule did not."""
    shipped = Path(__file__).resolve().parents[2] / "tasks"
    base = _run(run_args, shipped, tmp_path / "base", "amnesia")
    smoke = _run(run_args, shipped, tmp_path / "smoke", "amnesia", None, "--limit", "30",
                 "--set", "amnesia.auto_expire=false")  # fmt: skip
    result = _check(smoke, base, "--metric", "stale_error_rate")
    assert result.exit_code == 1, result.output
    assert result.output.startswith("paired on 30 of ")
    assert "FAIL stale_error_rate arm=amnesia group=all: worse beyond tolerance 0.02" in result.output


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


def test_the_gate_options_are_checked(task_set, baseline):
    for option, value, message in (("--alpha", "1.5", "--alpha: 1.5 is not between 0 and 1"),
                                   ("--max-drop", "-0.1", "--max-drop: -0.1 is negative")):  # fmt: skip
        result = _check(baseline, baseline, option, value)
        assert result.exit_code == 2 and message in result.output


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
