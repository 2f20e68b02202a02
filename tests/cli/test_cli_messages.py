"""What the CLI says where a user would be misled or lose work: runs of two configurations given to `report`,
a second `rescore`, `cache clear` without a confirmation, a missing `--baseline`, the help text, an arm
option error, and the README's recipe for a CI baseline."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench import cli_cache
from amnesia_bench.cli import app
from runners.models import envopts
from runners.models.cache import ResponseCache
from tasks.modelapi import ModelResponse

SMALL_SET = Path(__file__).resolve().parents[1] / "data" / "small_set.yaml"
README = Path(__file__).resolve().parents[2] / "README.md"


def _invoke(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), input=input)
    return result.exit_code, result.output


def test_report_on_two_configurations_points_to_compare(small_run, tmp_path: Path) -> None:
    a = small_run(tmp_path / "a")
    b = small_run(tmp_path / "b", "--set", "amnesia.default_curve=flat")
    code, output = _invoke("report", str(a), str(b), "--out", str(tmp_path / "r"))
    assert code == 2
    assert output.splitlines() == [
        f"error: {b}/manifest.json: arms.amnesia: configured otherwise than in {a}; "
        f"to compare two configurations use `amnesia-bench compare {a} {b}`"
    ]
    assert not (tmp_path / "r").exists()


def test_rescore_replaces_an_earlier_rescore_only_with_force(small_run, tmp_path: Path) -> None:
    run = small_run(tmp_path / "run")
    code, output = _invoke("rescore", str(run))
    assert code == 0 and "replaced" not in output, output
    marker = run / "rescored" / "notes.txt"
    marker.write_text("kept")
    code, output = _invoke("rescore", str(run))
    assert code == 2
    assert output.splitlines() == [
        f"error: {run / 'rescored'}: already exists (an earlier rescore?); "
        "pass --force to replace it, or --out NEW"
    ]
    assert marker.read_text() == "kept"
    code, output = _invoke("rescore", str(run), "--force")
    assert code == 0 and output.rstrip().endswith("(replaced the earlier one)"), output
    assert not marker.exists() and (run / "rescored" / "manifest.json").is_file()


@pytest.fixture
def cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """A private cache file holding three answers of one model."""
    path = tmp_path / "responses.sqlite3"
    monkeypatch.setenv(envopts.CACHE_PATH, str(path))
    store = ResponseCache(path)
    for key in "abc":
        store.put(key, "openai:m", ModelResponse(text=key, prompt_tokens=1, completion_tokens=1), {})
    return path


def test_cache_clear_without_a_terminal_needs_yes(cache: Path) -> None:
    code, output = _invoke("cache", "clear")
    assert code == 2
    assert output.splitlines() == [
        f"error: cache clear: would delete 3 responses from {cache}; "
        "pass --yes to confirm (no terminal to ask)"
    ]
    assert len(ResponseCache(cache)) == 3
    code, output = _invoke("cache", "clear", "--yes")
    assert code == 0 and f"{cache}: 3 responses deleted" in output
    assert len(ResponseCache(cache)) == 0


def test_cache_clear_on_a_terminal_asks_first(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cli_cache, "_interactive", lambda: True)
    code, output = _invoke("cache", "clear", "--model", "openai:m", input="n\n")
    assert code == 0 and f"Delete 3 responses of openai:m from {cache}?" in output
    assert "nothing deleted" in output and len(ResponseCache(cache)) == 3
    code, output = _invoke("cache", "clear", input="y\n")
    assert code == 0 and "3 responses deleted" in output and len(ResponseCache(cache)) == 0


def test_check_with_a_missing_baseline_says_no_such_file(small_run, tmp_path: Path) -> None:
    run = small_run(tmp_path / "run")
    missing = tmp_path / "ci" / "baseline_per_task.csv"
    code, output = _invoke("check", str(run), "--baseline", str(missing))
    assert code == 2
    assert output.splitlines() == [f"error: {missing}: no such file or folder"]


def test_help_shows_brackets_and_no_bool_metavar() -> None:
    code, output = _invoke("run", "--help")
    assert code == 0
    flat = " ".join(output.split())
    assert "the [dask] extra" in flat
    assert "--resume / --no-resume" in flat and "--task-id ID" in flat
    commands = [["run"], ["report"], ["check"], ["compare"], ["rescore"], ["view"], ["cache", "clear"]]
    commands += [["sweep", "run"], ["import", "longmemeval"], ["validate"]]
    for command in commands:
        code, output = _invoke(*command, "--help")
        assert code == 0, command
        assert "<bool>" not in output and "<list[str]>" not in output, command  # flags; options' metavars


def test_python_m_runs_the_cli() -> None:
    """`python -m amnesia_bench.cli` is the console script (it used to import the module and exit 0)."""
    result = subprocess.run(
        [sys.executable, "-m", "amnesia_bench.cli", "--version"],
        cwd=README.parent, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert result.returncode == 0 and result.stdout.startswith("amnesia-bench "), result.stderr


def test_an_arm_option_error_names_the_arm_once(tmp_path: Path) -> None:
    code, output = _invoke(
        "run", "--no-progress", "--tasks", str(SMALL_SET), "--arms", "amnesia",
        "--out", str(tmp_path / "run"), "--set", "amnesia.default_ttl=soon",
    )  # fmt: skip
    assert code == 2
    assert output.splitlines() == [
        "error: amnesia: default_ttl: expected a duration like 15s, 2h30m, 7d or 1w, got 'soon'"
    ]


def test_the_readme_ci_baseline_recipe_makes_the_baseline_its_check_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The README's recipe, run as written in a checkout's root (the shipped task set, linked in), then its
    CI step's `check` against that baseline: the same code passes."""
    text = README.read_text(encoding="utf-8")
    recipe = re.search(r"^(amnesia-bench run --out runs/baseline && .+)$", text, re.MULTILINE)
    check = re.search(r"- run: amnesia-bench (check runs/ci --baseline \S+ .+)$", text, re.MULTILINE)
    assert recipe and check, "README no longer shows the CI baseline recipe"
    (tmp_path / "tasks").symlink_to(README.parent / "tasks")
    monkeypatch.chdir(tmp_path)
    run_baseline, make_folder, copy = (part.split() for part in recipe[1].split(" && "))
    assert run_baseline[:1] == ["amnesia-bench"] and make_folder[:2] == ["mkdir", "-p"] and copy[0] == "cp"
    code, output = _invoke(*run_baseline[1:], "--no-progress")
    assert code == 0, output
    Path(make_folder[2]).mkdir(parents=True)
    Path(copy[2]).write_bytes(Path(copy[1]).read_bytes())
    assert _invoke("run", "--out", "runs/ci", "--no-progress", "--no-report")[0] == 0
    code, output = _invoke(*check[1].split())
    assert code == 0 and output.splitlines()[-1].startswith("PASS"), output
