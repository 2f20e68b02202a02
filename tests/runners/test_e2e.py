"""End-to-end runs of small task sets through `amnesia-bench run` (typer's CliRunner)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app

ARMS = "no-memory,full-memory,amnesia"


def _run(*args: str) -> object:
    return CliRunner().invoke(app, ["run", "--no-progress", "--no-report", *args])


@pytest.fixture
def small_set(write_tasks, small_set_tasks, tmp_path: Path) -> Path:
    return write_tasks(tmp_path / "tasks", small_set_tasks)


def test_run_writes_manifest_and_one_complete_log_per_pair(
    read_log, small_set_tasks, small_set: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    result = _run("--tasks", str(small_set), "--arms", ARMS, "--out", str(out))
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["format"] == 1
    assert list(manifest["arms"]) == ARMS.split(",")
    assert manifest["model"]["adapter"] == "scripted"
    assert manifest["tasks"]["count"] == len(small_set_tasks)
    assert manifest["tasks"]["files"] == {"tasks.yaml": manifest["tasks"]["files"]["tasks.yaml"]}
    assert manifest["budget_tokens"] == 2000
    assert manifest["seed"] == 0
    for arm in ARMS.split(","):
        for task in small_set_tasks:
            records = read_log(out / "logs" / arm / (task["id"].replace("/", "__") + ".jsonl"))
            assert [r["seq"] for r in records] == list(range(len(records)))
            assert records[0]["type"] == "task_start" and records[-1]["type"] == "task_end"
            assert {r["arm"] for r in records} == {arm}
            assert {r["task_id"] for r in records} == {task["id"]}
            calls = [r for r in records if r["type"] == "model_call"]
            injections = [r for r in records if r["type"] == "injection"]
            assert len(calls) == len(injections) == records[-1]["model_calls"]
            for call, injection in zip(calls, injections, strict=True):
                system = call["messages"][0]["content"]
                assert (injection["block"] in system) and call["messages"][-1]["role"] == "user"
                assert injection["tokens"] <= injection["budget_tokens"]


def test_the_three_arms_behave_as_designed_on_a_fact_change(
    read_log, small_set: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    assert _run("--tasks", str(small_set), "--arms", ARMS, "--out", str(out)).exit_code == 0

    def at_probe(arm: str) -> tuple[dict, dict]:
        records = read_log(out / "logs" / arm / "harmful__verification-drink.jsonl")
        probe = next(r for r in records if r["type"] == "probe")
        injection = next(r for r in records if r["type"] == "injection" and r["session_index"] == 2)
        return probe, injection

    probe, injection = at_probe("no-memory")
    assert probe["classification"] == "abstained" and injection["block"] == ""
    probe, injection = at_probe("full-memory")  # both versions still injected: the model may pick either
    assert "lapsang" in injection["block"] and "oolong" in injection["block"]
    assert probe["classification"] in {"stale", "correct"}
    probe, injection = at_probe("amnesia")  # lapsang (ttl 1d) is gone by day 3
    assert "lapsang" not in injection["block"] and "oolong" in injection["block"]
    assert probe["classification"] == "correct"
    assert probe["fact_changed_at"] == 3600.0


def test_group_and_limit_select_tasks(small_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = _run("--tasks", str(small_set), "--arms", "no-memory", "--out", str(out), "--group", "harmful")
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (out / "logs" / "no-memory").iterdir()) == [
        "harmful__sub-scratch.jsonl",
        "harmful__verification-drink.jsonl",
    ]
    out2 = tmp_path / "run2"
    assert (
        _run("--tasks", str(small_set), "--arms", "no-memory", "--out", str(out2), "--limit", "1").exit_code
        == 0
    )
    assert len(list((out2 / "logs" / "no-memory").iterdir())) == 1


def test_arm_config_file_and_set_overrides_reach_the_manifest(small_set: Path, tmp_path: Path) -> None:
    config = tmp_path / "arms.yaml"
    config.write_text("amnesia-7d:\n  base: amnesia\n  options: {default_ttl: 7d, curve: linear}\n")
    out = tmp_path / "run"
    result = _run(
        "--tasks", str(small_set), "--arms", "amnesia-7d", "--out", str(out),
        "--arm-config", str(config), "--set", "amnesia-7d.k=4",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    described = json.loads((out / "manifest.json").read_text())["arms"]["amnesia-7d"]
    assert described["config"]["default_ttl"] == 7 * 86400
    assert described["config"]["default_curve"] == "linear"
    assert described["config"]["decay_k"] == 4
    assert (out / "logs" / "amnesia-7d").is_dir()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--arms", "nope"], "unknown arm 'nope'"),
        (["--arms", "amnesia", "--set", "amnesia.curve=zigzag"], "default_curve"),
        (["--arms", "amnesia", "--set", "amnesia.colour=red"], "unknown option 'colour'"),
        (["--model", "scripted:psychic"], "unknown scripted strategy"),
        (["--group", "happy"], "unknown group 'happy'"),
        (["--workers", "0"], "--workers"),
    ],
)
def test_bad_arguments_are_one_line_exit_2_and_write_nothing(
    small_set: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "run"
    result = _run("--tasks", str(small_set), "--out", str(out), *args)
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.output
    assert not out.exists()


def test_an_invalid_task_set_is_refused_before_anything_runs(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    tasks.mkdir()
    (tasks / "bad.yaml").write_text(
        "- id: harmful/x\n  group: harmful\n  category: c\n  description: d\n"
        "  sessions:\n    - at: soon\n      turns: [{user: hi}]\n"
    )
    out = tmp_path / "run"
    result = _run("--tasks", str(tasks), "--out", str(out))
    assert result.exit_code == 2
    assert "bad.yaml:6:" in result.output and "at" in result.output
    assert not out.exists()


def test_a_run_never_deletes_earlier_logs_unless_told_to_overwrite(small_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _run("--tasks", str(small_set), "--arms", "no-memory,amnesia", "--out", str(out)).exit_code == 0
    logs_before = {p: p.read_bytes() for p in (out / "logs").rglob("*.jsonl")}
    manifest_before = (out / "manifest.json").read_bytes()

    refused = _run("--tasks", str(small_set), "--arms", "no-memory", "--out", str(out))
    assert refused.exit_code == 2
    assert refused.output.splitlines() == [
        f"error: --out: {out} already holds a run (8 session logs); "
        "pass --resume to continue it or --overwrite to replace it"
    ]
    assert {p: p.read_bytes() for p in (out / "logs").rglob("*.jsonl")} == logs_before
    assert (out / "manifest.json").read_bytes() == manifest_before

    both = _run("--tasks", str(small_set), "--out", str(out), "--resume", "--overwrite")
    assert both.exit_code == 2 and "contradict" in both.output

    replaced = _run("--tasks", str(small_set), "--arms", "no-memory", "--out", str(out), "--overwrite")
    assert replaced.exit_code == 0, replaced.output
    assert sorted(p.name for p in (out / "logs").iterdir()) == ["no-memory"]


def test_a_run_folder_without_logs_is_reused(small_set: Path, tmp_path: Path) -> None:
    """A run killed before its first log (only the manifest written) has nothing to lose."""
    out = tmp_path / "run"
    assert _run("--tasks", str(small_set), "--arms", "no-memory", "--out", str(out)).exit_code == 0
    for log in (out / "logs").rglob("*.jsonl"):
        log.unlink()
    assert _run("--tasks", str(small_set), "--arms", "amnesia", "--out", str(out)).exit_code == 0
    assert sorted(p.name for p in (out / "logs").iterdir()) == ["amnesia"]


def test_a_folder_that_is_not_a_run_folder_is_never_cleared(small_set: Path, tmp_path: Path) -> None:
    out = tmp_path / "precious"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    result = _run("--tasks", str(small_set), "--arms", "no-memory", "--out", str(out))
    assert result.exit_code == 2 and "holds no manifest.json" in result.output
    assert (out / "notes.txt").read_text() == "keep me"


def test_the_default_task_set_outside_the_repository_says_where_to_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["run", "--no-progress"])
    assert result.exit_code == 2
    assert "tasks: path: no such file or folder" in result.output
    assert "run from the repository root, or pass --tasks PATH" in result.output
    assert not (tmp_path / "runs").exists()
