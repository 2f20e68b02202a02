"""Ctrl-C during a run: the workers stop after the pair in hand, the run says how far it got and exits 130,
every finished pair's log is complete, and `--resume` ends with the logs of an uninterrupted run. The
interrupt is sent by the process that writes a chosen log record (tests/kill_after_records.py), never by a
timer."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from tasks.logschema import is_finished

ARMS = "no-memory,full-memory,amnesia"


def _args(tasks: Path, out: Path, *extra: str) -> list[str]:
    return ["run", "--no-report", "--tasks", str(tasks), "--arms", ARMS, "--out", str(out), *extra]


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_stops_the_run_and_resume_finishes_it(
    workers, write_generated, run_logs, run_cli_interrupted_after, tmp_path: Path
) -> None:
    tasks = write_generated(tmp_path / "tasks", per_group=8, seed=5)
    pairs = 3 * 3 * 8  # arms x groups x tasks per group
    reference = tmp_path / "reference"
    assert CliRunner().invoke(app, [*_args(tasks, reference), "--no-progress"]).exit_code == 0
    expected = run_logs(reference)

    out = tmp_path / "interrupted"
    # the progress bar stays on: the interrupt must not leave a traceback of it (or of a worker) behind
    interrupted = run_cli_interrupted_after([*_args(tasks, out), "--workers", str(workers)], records=40)
    assert interrupted.returncode == 130, interrupted.stderr[-2000:]
    assert "Traceback" not in interrupted.stderr
    last = interrupted.stderr.rstrip().splitlines()[-1]
    said = re.fullmatch(rf"interrupted: (\d+) of {pairs} pairs finished; rerun with --resume", last)
    assert said, last
    logs = sorted((out / "logs").rglob("*.jsonl"))
    finished = [path for path in logs if is_finished(path)]
    assert int(said[1]) == len(finished) < pairs
    # the main process stops inside its pair; a worker finishes the pair in hand and starts no other
    assert len(logs) - len(finished) == (1 if workers == 1 else 0)
    partial = run_logs(out)
    for path in finished:  # a finished pair's log is the whole log, as an uninterrupted run writes it
        name = str(path.relative_to(out / "logs"))
        assert partial[name] == expected[name]

    resumed = CliRunner().invoke(app, [*_args(tasks, out, "--resume"), "--no-progress"])
    assert resumed.exit_code == 0, resumed.output
    assert f"{pairs - len(finished)} pairs run, {len(finished)} skipped" in resumed.output
    assert run_logs(out) == expected
