"""Crash safety: the engine killed (SIGKILL) at random points loses nothing and leaves nothing half-done; the
runner killed at random points, resumed (and killed again), ends with the logs of an uninterrupted run.

Every kill point is drawn from a seed and reached by counting (operations, SQLite steps, log records), never
by a timer, so a loaded machine runs the same test as an idle one."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from amnesia_bench.cli import app
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
    assert sum(figures["in_flight_at_kill"].values()) > 0, "no kill landed inside an operation"
    # Every byte of the files was grepped for every forgotten memory after each kill (a find is a problem).
    for scans in ("forensic_after_reopen", "forensic_before_reopen_acknowledged"):
        assert figures[scans]["scans"] == KILLS and figures[scans]["forgotten_checked"] > 100, figures[scans]
        assert figures[scans]["forgotten_bytes_found"] == 0


def _args(run_args, tasks: Path, out: Path, workers: int) -> list[str]:
    return run_args(tasks, out, "--workers", str(workers))


def _finished(out: Path) -> int:
    logs = out / "logs"
    return sum(is_finished(p) for p in logs.rglob("*.jsonl")) if logs.exists() else 0


def test_runner_killed_and_resumed_repeatedly_equals_an_uninterrupted_run(
    write_generated, run_args, run_logs, run_cli_killed_after, tmp_path: Path
) -> None:
    tasks = write_generated(tmp_path / "tasks", per_group=8, seed=11)
    pairs = 3 * 3 * 8  # arms x groups x tasks per group
    rng = random.Random(7)
    out = tmp_path / "killed"
    # A process dies at its N-th record (N < 100), when neither worker has written more than N: a kill
    # finishes at most 2N / 13 pairs (a pair logs at least 13 records here): three kills cannot finish all 72.
    assert (
        run_cli_killed_after(_args(run_args, tasks, out, workers=2), rng.randrange(1, 100)) == -signal.SIGKILL
    )
    for _ in range(2):  # kill the resumes too, each at another random point
        resume = [*_args(run_args, tasks, out, workers=2), "--resume"]
        assert run_cli_killed_after(resume, rng.randrange(1, 100)) == -signal.SIGKILL
    assert _finished(out) < pairs
    resumed = CliRunner().invoke(app, [*_args(run_args, tasks, out, workers=1), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    reference = tmp_path / "reference"
    assert CliRunner().invoke(app, _args(run_args, tasks, reference, workers=1)).exit_code == 0
    killed_logs, reference_logs = run_logs(out), run_logs(reference)
    assert len(reference_logs) == pairs
    assert killed_logs.keys() == reference_logs.keys()
    for name, records in reference_logs.items():
        assert killed_logs[name] == records, name
