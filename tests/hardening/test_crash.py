"""Crash safety: the engine killed (SIGKILL) at random points loses nothing and leaves nothing half-done; the
runner killed at random points, resumed (and killed again), ends with the logs of an uninterrupted run."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from amnesia_bench.cli import app
from tasks.generate import generate
from tasks.logschema import is_finished

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}
KILLS = 12  # the hundreds-of-kills version: python benchmarks/crash_safety.py


def test_engine_killed_at_random_points_loses_nothing_and_leaves_nothing_half_done(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "crash_safety.py"), "--kills", str(KILLS), "--json"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    figures = json.loads(result.stdout)
    assert figures["problems"] == []
    assert figures["kills"] == KILLS
    # The kills hit a store that really was written, forgotten, swept and evicted from.
    for operation in ("remember", "remember-evicting", "forget", "sweep"):
        assert figures["acknowledged"].get(operation, 0) > 0, figures["acknowledged"]
    assert figures["writes_checked"] > 50 and figures["forgets_checked"] > 20


def _args(run_args, tasks: Path, out: Path, workers: int) -> list[str]:
    return run_args(tasks, out, "--workers", str(workers))


def _finished(out: Path) -> int:
    logs = out / "logs"
    return sum(is_finished(p) for p in logs.rglob("*.jsonl")) if logs.exists() else 0


def _run_and_kill(run_cli_then_kill, args: list[str], out: Path, more_finished: int) -> None:
    """Start the CLI and SIGKILL its whole process group once `more_finished` more pairs are done."""
    target = _finished(out) + more_finished
    run_cli_then_kill(args, lambda: _finished(out) >= target, timeout=120)


def test_runner_killed_and_resumed_repeatedly_equals_an_uninterrupted_run(
    write_tasks, run_args, run_logs, run_cli_then_kill, tmp_path: Path
) -> None:
    generated = [t for group in ("helpful", "harmful", "mixed") for t in generate(group, 8, seed=11)]
    tasks = write_tasks(tmp_path / "tasks", generated)
    pairs = 3 * len(generated)
    rng = random.Random(7)
    out = tmp_path / "killed"
    _run_and_kill(run_cli_then_kill, _args(run_args, tasks, out, workers=2), out, rng.randrange(1, 14))
    for _ in range(2):  # kill the resumes too, each at another random point
        _run_and_kill(
            run_cli_then_kill,
            [*_args(run_args, tasks, out, workers=2), "--resume"],
            out,
            rng.randrange(1, 14),
        )
    assert _finished(out) < pairs, "the run finished before a kill landed; nothing was tested"
    resumed = CliRunner().invoke(app, [*_args(run_args, tasks, out, workers=1), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    reference = tmp_path / "reference"
    assert CliRunner().invoke(app, _args(run_args, tasks, reference, workers=1)).exit_code == 0
    killed_logs, reference_logs = run_logs(out), run_logs(reference)
    assert len(reference_logs) == pairs
    assert killed_logs.keys() == reference_logs.keys()
    for name, records in reference_logs.items():
        assert killed_logs[name] == records, name
