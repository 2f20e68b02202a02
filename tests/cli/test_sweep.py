"""Sweeps: a YAML grid becomes one ordinary run folder per point (equal to the same `run` by hand), runnable
point by point or sharded, with one report across the points."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from amnesia_bench.cli import app

ARMS = "full-memory,amnesia"


@pytest.fixture
def sweep_file(small_set_tasks, write_tasks, tmp_path: Path) -> Path:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    spec = {
        "tasks": str(tasks),
        "arms": ARMS.split(","),
        "grid": {"amnesia.default_curve": ["flat", "ebbinghaus"]},
        "seeds": [0, 3],
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_each_point_is_the_run_its_settings_describe(sweep_file, run_ok, run_logs, tmp_path: Path) -> None:
    plan = _cli("sweep", "plan", str(sweep_file)).splitlines()
    assert [line.split()[0] for line in plan] == ["p000", "p001", "p002", "p003"]
    assert plan[3].split()[1:] == ["seed", "3", "scripted", 'amnesia.default_curve="ebbinghaus"']
    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress", "--point", "3")
    assert [p.name for p in (out / "points").iterdir()] == ["p003"]  # point by point
    by_hand = tmp_path / "by-hand"
    tasks = tmp_path / "tasks"
    run_ok(tasks, by_hand, "--seed", "3", "--set", "amnesia.default_curve=ebbinghaus", arms=ARMS)
    assert run_logs(out / "points" / "p003") == run_logs(by_hand)


def test_a_sharded_sweep_equals_the_whole_sweep_and_reports_every_point(
    sweep_file, run_logs, tmp_path: Path
) -> None:
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    _cli("sweep", "run", str(sweep_file), "--out", str(whole), "--no-progress")
    for index in range(2):
        _cli("sweep", "run", str(sweep_file), "--out", str(sharded), "--no-progress", "--shard", f"{index}/2")
    for point in ("p000", "p001", "p002", "p003"):
        assert run_logs(sharded / "points" / point) == run_logs(whole / "points" / point)
    _cli("sweep", "report", str(sharded), "--resamples", "100")
    table = (sharded / "report" / "sweep.md").read_text(encoding="utf-8")
    rows = [line for line in table.splitlines() if line.startswith("| p0")]
    assert len(rows) == 8  # 4 points x 2 arms
    assert "Not reported" not in table
    assert {row.split("|")[4].strip() for row in rows} == {"flat", "ebbinghaus"}
    assert "![Stale errors vs false forgetting across the points](tradeoff.png)" in table
    assert all((sharded / "report" / f"tradeoff.{kind}").stat().st_size > 0 for kind in ("png", "svg"))


def test_the_tradeoff_figure_shows_the_tables_numbers(sweep_file, tmp_path: Path) -> None:
    import pandas as pd

    from reports.sweep import point_summaries, read_plan
    from reports.tradeoff import tradeoff_points

    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress", "--point", "0", "--point", "2")
    _cli("sweep", "report", str(out), "--resamples", "100")
    summaries, unfinished = point_summaries(read_plan(out), out, resamples=100)
    assert list(summaries) == ["p000", "p002"] and unfinished == ["p001", "p003"]
    points = tradeoff_points(summaries).set_index(["label", "arm"])
    table = pd.read_csv(out / "report" / "sweep.csv").set_index(["point", "arm"])
    assert list(points.index) == list(table.index)  # one marker per finished point and arm
    for rate in ("stale_error_rate", "false_forgetting_rate"):  # (all groups = helpful for the latter)
        for suffix in ("", "_lo", "_hi"):
            assert points[rate + suffix].tolist() == pytest.approx(table[rate + suffix].tolist(), nan_ok=True)


def test_an_unfinished_point_is_named_in_the_report(sweep_file, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress", "--point", "p000")
    _cli("sweep", "report", str(out), "--resamples", "100")
    assert "Not reported (run missing or unfinished): p001, p002, p003." in (
        out / "report" / "sweep.md"
    ).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seeds": []}, "seeds: expected a non-empty list"),
        ({"grid": {"retrieval.k": [1]}}, "grid.retrieval.k: expected arm.option with an arm from `arms`"),
        ({"colour": "red"}, "colour: unknown field"),
        ({"seeds": [1, 1]}, "seeds: a value is listed twice"),
    ],
)
def test_a_bad_sweep_file_is_one_line_naming_the_field(sweep_file, change, message) -> None:
    spec = {**yaml.safe_load(sweep_file.read_text(encoding="utf-8")), **change}
    sweep_file.write_text(yaml.safe_dump(spec), encoding="utf-8")
    result = CliRunner().invoke(app, ["sweep", "plan", str(sweep_file)])
    assert result.exit_code == 2
    assert result.output == f"error: {sweep_file}: {message}" + result.output.split(message, 1)[1]
    assert result.output.count("\n") == 1
