"""Plugin arms: a class in a file outside the repository (`--arms FILE.py:Class`), an importable module
(`package.module:Class`) or an installed package's entry point (group `amnesia_bench.arms`) runs like a
built-in arm: the docs' example as written, its options checked by name and type, its logs the same in worker
processes, and every mistake one line with exit code 2."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from arms import registry

ROOT = Path(__file__).resolve().parents[2]


def docs_example() -> str:
    """The arm of docs/harness.md's "Add an arm in one file, anywhere", as a reader would copy it."""
    text = (ROOT / "docs" / "harness.md").read_text(encoding="utf-8")
    section = text.split("## Add an arm in one file, anywhere", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


@pytest.fixture
def plugin_file(tmp_path: Path) -> Path:
    path = tmp_path / "elsewhere" / "recent_ttl.py"  # outside the repository
    path.parent.mkdir()
    path.write_text(docs_example(), encoding="utf-8")
    return path


def _run(args: list[str]):
    return CliRunner().invoke(app, args)


def test_the_docs_example_runs_from_a_file_outside_the_repository_and_forgets_on_time(
    plugin_file, small_set_tasks, write_tasks, run_args, run_logs, read_log, tmp_path
):
    assert len(docs_example().strip().splitlines()) <= 40  # "about 30 lines"
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    arms = f"{plugin_file}:RecentTTLArm,no-memory"
    one = _run(run_args(tasks, tmp_path / "one", "--set", "recent-ttl.ttl_days=0.5", arms=arms))
    assert one.exit_code == 0, one.output
    logs = sorted((tmp_path / "one" / "logs" / "recent-ttl").glob("*.jsonl"))
    assert len(logs) == len(small_set_tasks)
    records = [record for log in logs for record in read_log(log)]
    writes = [r for r in records if r["type"] == "memory_write"]
    forgets = [r for r in records if r["type"] == "memory_forget"]
    assert writes and all(r["ttl"] == 0.5 * 86400 for r in writes)  # --set reached the plugin
    assert forgets and {r["reason"] for r in forgets} == {"expired"}
    assert all("content" not in r for r in forgets)  # the kit logs a hash, never the content
    # spawned worker processes load the same file by its absolute path: the same logs
    two = _run(
        run_args(tasks, tmp_path / "two", "--set", "recent-ttl.ttl_days=0.5", "--workers", "2", arms=arms)
    )
    assert two.exit_code == 0, two.output
    assert run_logs(tmp_path / "two") == run_logs(tmp_path / "one")


class NotAnArm:
    """has none of the protocol's methods"""


@pytest.mark.parametrize(
    ("arms", "extra", "fragment"),
    [
        ("{dir}/missing.py:RecentTTLArm", [], "no such file"),
        ("{file}:Nope", [], "has no class 'Nope'"),
        (f"{__name__}:NotAnArm", [], "not an arm (no describe)"),
        ("no_such_package.module:Arm", [], "cannot import 'no_such_package.module'"),
        (
            "{file}:RecentTTLArm",
            ["--set", "recent-ttl.keep_all=true"],
            "unknown option 'keep_all'; known: keep",
        ),
        (
            "{file}:RecentTTLArm",
            ["--set", "recent-ttl.keep=many"],
            "option keep must be an integer, got 'many'",
        ),
        ("{file}:RecentTTLArm", ["--set", "recent-ttl.ttl_days=true"], "option ttl_days must be a number"),
    ],
)
def test_a_bad_plugin_or_option_is_one_line_and_exit_2_before_anything_runs(
    plugin_file, small_set_tasks, write_tasks, run_args, tmp_path, arms, extra, fragment
):
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    out = tmp_path / "never"
    reference = arms.format(dir=plugin_file.parent, file=plugin_file)
    result = _run(run_args(tasks, out, *extra, arms=reference))
    assert result.exit_code == 2, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and fragment in lines[0], result.output
    assert not out.exists()


def test_an_installed_packages_arm_is_listed_with_its_package_and_runs_by_name(
    plugin_file, small_set_tasks, write_tasks, run_args, tmp_path, monkeypatch
):
    """A distribution on sys.path whose entry points list `recent-ttl-plugin = recent_ttl:RecentTTLArm`."""
    site = plugin_file.parent
    info = site / "recent_ttl_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: recent-ttl-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(
        "[amnesia_bench.arms]\nrecent-ttl-plugin = recent_ttl:RecentTTLArm\n"
    )
    monkeypatch.syspath_prepend(str(site))
    registry.installed_plugins.cache_clear()
    try:
        listed = _run(["list", "arms"])
        assert listed.exit_code == 0, listed.output
        at = listed.output.index("recent-ttl-plugin")
        entry = listed.output[at : listed.output.index("\n", listed.output.index("plugin:", at))]
        assert "the newest memories" in entry and "recent_ttl:RecentTTLArm" in entry
        assert "recent-ttl-plugin" in entry.split("package")[-1]
        tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
        ran = _run(run_args(tasks, tmp_path / "run", arms="recent-ttl-plugin"))
        assert ran.exit_code == 0, ran.output
        assert (tmp_path / "run" / "logs" / "recent-ttl-plugin").is_dir()
    finally:
        registry.installed_plugins.cache_clear()
        sys.modules.pop("recent_ttl", None)
