"""A killed run, resumed, ends with the logs of an uninterrupted run: no duplicate, no missing record."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from typer.testing import CliRunner

from amnesia_bench.cli import app
from tasks.generate import generate
from tasks.logschema import is_finished

ARMS = "no-memory,full-memory,amnesia"


def _args(tasks: Path, out: Path) -> list[str]:
    return ["run", "--no-progress", "--no-report", "--tasks", str(tasks), "--arms", ARMS, "--out", str(out)]


def _kill_mid_run(run_cli_killed_after, tasks: Path, out: Path) -> None:
    assert run_cli_killed_after(_args(tasks, out), records=500) == -signal.SIGKILL  # ~30 pairs in


def test_resume_after_a_kill_equals_an_uninterrupted_run(
    write_tasks, run_logs, run_cli_killed_after, tmp_path: Path
) -> None:
    generated = [t for group in ("helpful", "harmful", "mixed") for t in generate(group, 30, seed=5)]
    tasks = write_tasks(tmp_path / "tasks", generated)
    out = tmp_path / "killed"
    _kill_mid_run(run_cli_killed_after, tasks, out)
    logs = sorted((out / "logs").rglob("*.jsonl"))
    assert logs, "the run was killed before writing any log"
    # Make sure resume has repair work whatever moment the kill hit: a record cut in half, a missing task_end.
    cut, unended = logs[0], logs[1]
    text = cut.read_text(encoding="utf-8")
    cut.write_text(text[: len(text) // 2], encoding="utf-8")
    lines = unended.read_text(encoding="utf-8").splitlines(keepends=True)
    unended.write_text("".join(lines[:-1]), encoding="utf-8")
    assert not is_finished(cut) and not is_finished(unended)
    manifest_before = (out / "manifest.json").read_text()

    result = CliRunner().invoke(app, [*_args(tasks, out), "--resume"])
    assert result.exit_code == 0, result.output
    assert "skipped" in result.output
    assert (out / "manifest.json").read_text() == manifest_before

    reference = tmp_path / "reference"
    assert CliRunner().invoke(app, _args(tasks, reference)).exit_code == 0
    assert run_logs(out) == run_logs(reference)
    for log in (out / "logs").rglob("*.jsonl"):
        seqs = [json.loads(line)["seq"] for line in log.read_text().splitlines()]
        assert seqs == list(range(len(seqs)))


def test_resume_refuses_a_run_folder_made_with_other_settings(write_tasks, tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks", generate("harmful", 2, seed=1))
    out = tmp_path / "run"
    assert CliRunner().invoke(app, _args(tasks, out)).exit_code == 0
    result = CliRunner().invoke(app, [*_args(tasks, out), "--resume", "--seed", "7"])
    assert result.exit_code == 2
    assert "cannot resume: seed differs" in result.output


def test_resume_of_a_finished_run_replays_nothing(write_tasks, tmp_path: Path) -> None:
    tasks = write_tasks(tmp_path / "tasks", generate("helpful", 3, seed=1))
    out = tmp_path / "run"
    assert CliRunner().invoke(app, _args(tasks, out)).exit_code == 0
    before = {p: p.stat().st_mtime_ns for p in (out / "logs").rglob("*.jsonl")}
    result = CliRunner().invoke(app, [*_args(tasks, out), "--resume"])
    assert result.exit_code == 0 and "0 pairs run, 9 skipped" in result.output
    assert before == {p: p.stat().st_mtime_ns for p in (out / "logs").rglob("*.jsonl")}


def test_an_overwrite_killed_mid_run_keeps_no_log_of_the_run_it_replaces(
    write_tasks, run_logs, run_cli_killed_after, tmp_path: Path
) -> None:
    """--overwrite empties the logs it will write again (keeping their files) and deletes the others before
    the new manifest exists: after a kill, every finished log is the new run's, and --resume completes it."""
    tasks = write_tasks(tmp_path / "tasks", generate("harmful", 12, seed=3))
    reference = tmp_path / "reference"
    assert CliRunner().invoke(app, [*_args(tasks, reference), "--seed", "2"]).exit_code == 0
    out = tmp_path / "run"
    assert CliRunner().invoke(app, [*_args(tasks, out), "--seed", "1"]).exit_code == 0
    (out / "logs" / "retired-arm").mkdir()
    (out / "logs" / "retired-arm" / "old.jsonl").write_text("{}\n")
    overwrite = [*_args(tasks, out), "--seed", "2", "--overwrite"]
    assert run_cli_killed_after(overwrite, records=150) == -signal.SIGKILL
    assert not (out / "logs" / "retired-arm").exists()
    logs = sorted((out / "logs").rglob("*.jsonl"))
    finished = tmp_path / "finished"  # the killed run's finished logs alone (the torn one is unreadable)
    for log in filter(is_finished, logs):
        copy = finished / "logs" / log.relative_to(out / "logs")
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(log.read_bytes())
    kept = run_logs(finished)
    assert kept and len(kept) < len(logs)  # the kill hit mid-run
    expected = run_logs(reference)
    assert kept == {name: expected[name] for name in kept}  # no finished log of the seed-1 run is left
    assert CliRunner().invoke(app, [*_args(tasks, out), "--seed", "2", "--resume"]).exit_code == 0
    assert run_logs(out) == expected
