"""How `amnesia-bench` starts and ends: importing the CLI leaves out what only some commands need (the
version look-up, the response cache), `--version` still names the installed distribution, and the console
script (`main` in a process of its own) exits with the command's code, and writes a report (its log reader
and figure workers forked, the collector off while it imports and frozen around the forks and at exit) byte
for byte as `build_report` drawing everything in one process does; a report run in this process leaves the
collector as it found it."""

from __future__ import annotations

import filecmp
import gc
import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

from typer.testing import CliRunner

from amnesia_bench.cli import app
from reports.build import build_report

ROOT = Path(__file__).resolve().parents[2]
CONSOLE = "from amnesia_bench.cli import main; main()"  # what the `amnesia-bench` script runs


def _python(code: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`python -c CODE ARGS` in `cwd`, this repository's packages first on the path."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=300,
        check=False,
    )


def _files(folder: Path) -> list[Path]:
    return sorted(p.relative_to(folder) for p in folder.rglob("*") if p.is_file())


def test_importing_the_cli_looks_up_no_version_and_opens_no_response_cache(tmp_path: Path) -> None:
    code = (
        "import sys, amnesia_bench.cli; "
        "print(sorted(m for m in ('importlib.metadata', 'runners.models.cache') if m in sys.modules))"
    )
    assert _python(code, cwd=tmp_path).stdout == "[]\n"


def test_version_names_the_installed_distribution() -> None:
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output == f"amnesia-bench {version('dsh-memory-forget')}\n"


def test_the_console_script_exits_with_the_commands_code(tmp_path: Path) -> None:
    missing = _python(CONSOLE, "validate", str(tmp_path / "missing"), cwd=tmp_path)
    assert missing.returncode == 2
    assert missing.stdout == ""
    assert missing.stderr.startswith(f"error: {tmp_path / 'missing'}: ")


def test_the_console_script_writes_the_report_build_report_writes(
    small_set_tasks, write_tasks, run_ok, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    run_ok(write_tasks(tmp_path / "tasks", small_set_tasks), run)
    expected = build_report(run, out=tmp_path / "alone", resamples=200, workers=0)
    out = tmp_path / "console"
    report = ["report", str(run), "--out", str(out), "--resamples", "200", "--no-progress", "--figures"]
    result = _python(CONSOLE, *report, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-2000:]
    assert (result.stdout, result.stderr) == (f"report written to {out}\n", "")
    names = _files(expected)
    assert _files(out) == names and any(p.suffix == ".svg" for p in names)
    _, mismatch, errors = filecmp.cmpfiles(expected, out, [str(p) for p in names], shallow=False)
    assert mismatch == [] and errors == []
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".report-")] == []  # no staging left


def test_a_report_leaves_the_collector_as_it_found_it(
    small_set_tasks, write_tasks, run_ok, tmp_path: Path
) -> None:
    """`report` turns the collector off and freezes objects while it imports and forks; a report run inside
    a longer process (here pytest's) must leave it enabled or disabled as it was, and nothing frozen."""
    run = tmp_path / "run"
    run_ok(write_tasks(tmp_path / "tasks", small_set_tasks), run)
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            out = tmp_path / f"report-{enabled}"
            result = CliRunner().invoke(app, ["report", str(run), "--out", str(out), "--no-progress"])
            assert result.exit_code == 0, result.output
            assert (gc.isenabled(), gc.get_freeze_count()) == (enabled, 0)
    finally:
        (gc.enable if was else gc.disable)()
