"""Sweeps: a YAML grid becomes one ordinary run folder per point (equal to the same `run` by hand), runnable
point by point or sharded; an arm no grid option touches runs once per seed and model; the report pools each
configuration's seeds and pairs its arms against a reference arm, with one report across the points."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from amnesia_bench.cli import app

ARMS = "full-memory,amnesia"
CONFIGURATIONS = {"c000": "flat", "c001": "ebbinghaus"}


@pytest.fixture
def sweep_file(small_set_tasks, write_tasks, tmp_path: Path) -> Path:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    spec = {
        "tasks": str(tasks),
        "arms": ARMS.split(","),
        "grid": {"amnesia.default_curve": list(CONFIGURATIONS.values())},
        "seeds": [0, 3],
    }
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return path


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def _logs(out: Path, arm: str) -> list[Path]:
    return sorted((out / "points").glob(f"p*/logs/{arm}/*.jsonl"))


def test_each_point_is_the_run_its_settings_describe(sweep_file, run_ok, run_logs, tmp_path: Path) -> None:
    plan = _cli("sweep", "plan", str(sweep_file)).splitlines()
    assert [line.split()[:2] for line in plan] == [["p000", "c000"], ["p001", "c001"], ["p002", "c000"],
                                                   ["p003", "c001"]]  # fmt: skip
    assert plan[3].split()[2:] == ["seed", "3", "scripted", 'amnesia.default_curve="ebbinghaus"', "(shares",
                                   "full-memory", "with", "p002)"]  # fmt: skip
    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress", "--point", "3")
    assert [p.name for p in (out / "points").iterdir()] == ["p003"]  # point by point
    assert not any(path.is_symlink() for path in _logs(out, "full-memory"))  # its holder not run: replayed
    by_hand = tmp_path / "by-hand"
    tasks = tmp_path / "tasks"
    run_ok(tasks, by_hand, "--seed", "3", "--set", "amnesia.default_curve=ebbinghaus", arms=ARMS)
    assert run_logs(out / "points" / "p003") == run_logs(by_hand)


def test_a_shared_arm_runs_once_per_seed_and_its_linked_logs_are_a_plain_runs(
    sweep_file, run_ok, run_logs, tmp_path: Path
) -> None:
    out = tmp_path / "sweep"
    output = _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress")
    assert "p001: 4 pairs run, 4 skipped (4 linked from p000)" in output
    shared, own = _logs(out, "full-memory"), _logs(out, "amnesia")
    assert len(shared) == len(own) == 4 * 4  # every point folder is whole: 4 points x 4 tasks
    replayed = [path for path in shared if not path.is_symlink()]
    assert {path.parts[-4] for path in replayed} == {"p000", "p002"}  # once per seed, at its holder
    assert len(replayed) == 2 * 4 and not any(path.is_symlink() for path in own)
    by_hand = tmp_path / "by-hand"
    run_ok(tmp_path / "tasks", by_hand, "--set", "amnesia.default_curve=ebbinghaus", arms=ARMS)  # p001
    assert run_logs(out / "points" / "p001") == run_logs(by_hand)
    again = _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress")  # resumes: nothing
    assert again.count(": 0 pairs run, 8 skipped") == 4


def test_a_point_never_writes_through_a_link_to_a_log_no_longer_finished(
    sweep_file, run_logs, tmp_path: Path
) -> None:
    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress")
    expected = run_logs(out / "points" / "p001")
    origin = sorted((out / "points" / "p000" / "logs" / "full-memory").glob("*.jsonl"))[0]
    origin.write_text("", encoding="utf-8")  # the holder's pair unfinished again (as by `run --overwrite`)
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress", "--point", "1")
    assert origin.read_text(encoding="utf-8") == ""  # the holder's file untouched
    replayed = out / "points" / "p001" / "logs" / "full-memory" / origin.name
    assert not replayed.is_symlink() and run_logs(out / "points" / "p001") == expected


def test_the_report_pools_each_configurations_seeds_and_pairs_it_against_the_shared_arm(
    sweep_file, tmp_path: Path
) -> None:
    from reports.build import compute_tables
    from reports.sweep import ALL_POINTS, configurations, measure, read_plan, tradeoff_summaries
    from reports.tradeoff import tradeoff_points

    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress")
    _cli("sweep", "report", str(out), "--resamples", "100")
    table = pd.read_csv(out / "report" / "sweep.csv", keep_default_na=False)
    # the shared arm once, each configuration's own arm once; seeds pooled: 2 seeds x 4 tasks
    assert list(zip(table["configuration"], table["arm"], strict=True)) == [
        ("all points", "full-memory"), ("c000", "amnesia"), ("c001", "amnesia")]  # fmt: skip
    assert table["shared"].tolist() == [True, False, False]
    assert table["amnesia.default_curve"].tolist() == ["all points", "flat", "ebbinghaus"]
    assert table["seeds"].tolist() == [2, 2, 2]
    assert table["tasks"].tolist() == [4, 4, 4] and table["task_runs"].tolist() == [8, 8, 8]
    paired = pd.read_csv(out / "report" / "sweep_paired.csv")
    text = (out / "report" / "sweep.md").read_text(encoding="utf-8")
    assert "## Paired against `full-memory`" in text
    for configuration, points in (("c000", ["p000", "p002"]), ("c001", ["p001", "p003"])):
        # the same numbers as `report` on the configuration's run folders (seeds pooled)
        tables = compute_tables([out / "points" / point for point in points], resamples=100)
        summary = tables.summary.set_index(["arm", "group"])
        mine = table[table["configuration"] == configuration].iloc[0]
        for rate in ("success_rate", "stale_error_rate"):
            expected = summary.loc[("amnesia", "all"), [rate, f"{rate}_lo", f"{rate}_hi"]]
            assert [mine[rate], mine[f"{rate}_lo"], mine[f"{rate}_hi"]] == pytest.approx(list(expected))
        groups = tables.paired_groups.set_index(["arm", "reference", "group", "metric"])
        expected = groups.loc[("amnesia", "full-memory", "all", "success_rate")]
        mine_paired = paired[paired["configuration"] == configuration].set_index("metric")
        row = mine_paired.loc["success_rate"]
        assert (row["arm"], row["reference"]) == ("amnesia", "full-memory")
        for column in ("diff", "diff_lo", "diff_hi", "p_value", "tasks", "tasks_differ", "significant"):
            assert row[column] == pytest.approx(expected[column], nan_ok=True)
        assert f"| amnesia − full-memory | {configuration} | success_rate | " in text
    assert set(paired["metric"]) == {
        "success_rate",
        "stale_error_rate",
        "false_forgetting_rate",
        "context_tokens",
    }
    assert set(paired[paired["metric"] == "false_forgetting_rate"]["group"]) == {"helpful"}
    # the trade-off figure: the shared arm once, every marker the table's numbers
    measured = [measure(c, out, "full-memory", resamples=100) for c in configurations(read_plan(out), out)]
    points = tradeoff_points(tradeoff_summaries(measured, ["full-memory"])).set_index(["label", "arm"])
    assert list(points.index) == [("c000", "amnesia"), (ALL_POINTS, "full-memory"), ("c001", "amnesia")]
    by_key = table.set_index(["configuration", "arm"])
    for rate in ("stale_error_rate", "false_forgetting_rate"):  # (all groups = helpful for the latter)
        for suffix in ("", "_lo", "_hi"):
            shown = [float(by_key.loc[key, rate + suffix]) for key in points.index]
            assert points[rate + suffix].tolist() == pytest.approx(shown, nan_ok=True)


def test_another_reference_arm_and_an_unknown_one(sweep_file, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress", "--point", "0", "--point", "2")
    _cli("sweep", "report", str(out), "--resamples", "100", "--reference", "amnesia")
    paired = pd.read_csv(out / "report" / "sweep_paired.csv")
    assert set(zip(paired["arm"], paired["reference"], paired["configuration"], strict=True)) == {
        ("full-memory", "amnesia", "c000")}  # fmt: skip
    result = CliRunner().invoke(app, ["sweep", "report", str(out), "--reference", "retrieval"])
    assert result.exit_code == 2
    assert (
        result.output
        == "error: --reference: arm 'retrieval' is not in the sweep (arms: full-memory, amnesia)\n"
    )


def test_a_sharded_sweep_equals_the_whole_sweep_and_reports_every_point(
    sweep_file, run_logs, tmp_path: Path
) -> None:
    whole, sharded = tmp_path / "whole", tmp_path / "sharded"
    _cli("sweep", "run", str(sweep_file), "--out", str(whole), "--no-progress")
    for index in range(2):
        _cli("sweep", "run", str(sweep_file), "--out", str(sharded), "--no-progress", "--shard", f"{index}/2")
    for point in ("p000", "p001", "p002", "p003"):
        assert run_logs(sharded / "points" / point) == run_logs(whole / "points" / point)
    assert len([path for path in _logs(sharded, "full-memory") if not path.is_symlink()]) == 2 * 4
    _cli("sweep", "report", str(sharded), "--resamples", "100")
    table = (sharded / "report" / "sweep.md").read_text(encoding="utf-8")
    rows = [line for line in table.splitlines() if line.startswith(("| c0", "| all points"))]
    assert len(rows) == 3  # the shared arm once + 2 configurations x 1 own arm
    assert "Not reported" not in table
    assert [row.split("|")[3].strip() for row in rows] == ["all points", "flat", "ebbinghaus"]
    assert "![Stale errors vs false forgetting across the configurations](tradeoff.png)" in table
    assert all((sharded / "report" / f"tradeoff.{kind}").stat().st_size > 0 for kind in ("png", "svg"))


def test_an_unfinished_point_is_named_in_the_report(sweep_file, tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress", "--point", "p000")
    _cli("sweep", "report", str(out), "--resamples", "100")
    assert "Not reported (run missing or unfinished): p001, p002, p003." in (
        out / "report" / "sweep.md"
    ).read_text(encoding="utf-8")


def test_run_settings_in_the_grid_share_nothing_across_their_values(
    sweep_file, run_ok, run_logs, tmp_path
) -> None:
    spec = yaml.safe_load(sweep_file.read_text(encoding="utf-8"))
    spec.update(seeds=[0], grid={"amnesia.default_curve": ["flat"], "budget": [60, 2000]})
    sweep_file.write_text(yaml.safe_dump(spec), encoding="utf-8")
    plan = _cli("sweep", "plan", str(sweep_file)).splitlines()
    assert plan == ['p000  c000  seed 0  scripted  --budget 60 amnesia.default_curve="flat"',
                    'p001  c001  seed 0  scripted  --budget 2000 amnesia.default_curve="flat"']  # fmt: skip
    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress", "--point", "0")
    by_hand = tmp_path / "by-hand"
    run_ok(tmp_path / "tasks", by_hand, "--budget", "60", "--set", "amnesia.default_curve=flat", arms=ARMS)
    assert run_logs(out / "points" / "p000") == run_logs(by_hand)


def test_on_an_imported_dataset_each_budget_shares_its_own_runs_and_reports_evidence_retention(
    write_locomo, tmp_path: Path
) -> None:
    from reports.evidence import evidence_table
    from reports.logread import load_runs
    from tasks.importers.common import parse_ttl_policy
    from tasks.importers.locomo import import_locomo

    tasks = tmp_path / "tasks"
    import_locomo(write_locomo(tmp_path / "in"), tasks, parse_ttl_policy("none"))
    spec = {"tasks": str(tasks), "arms": ["full-memory", "amnesia"],
            "grid": {"amnesia.ttl_policy": ["fixed:1d", "fixed:365d"], "budget": [60, 2000]}}  # fmt: skip
    sweep_file = tmp_path / "sweep.yaml"
    sweep_file.write_text(yaml.safe_dump(spec), encoding="utf-8")
    out = tmp_path / "sweep"
    _cli("sweep", "run", str(sweep_file), "--out", str(out), "--no-progress")
    holders = {path.parts[-4] for path in _logs(out, "full-memory") if not path.is_symlink()}
    assert holders == {"p000", "p001"}  # once per budget (the points of the first ttl policy)
    _cli("sweep", "report", str(out), "--resamples", "100")
    table = pd.read_csv(out / "report" / "sweep.csv", keep_default_na=False)
    shared = "all points"
    assert list(zip(table["arm"], table["budget"], table["amnesia.ttl_policy"], strict=True)) == [
        ("full-memory", 60, shared), ("amnesia", 60, "fixed:1d"), ("full-memory", 2000, shared),
        ("amnesia", 2000, "fixed:1d"), ("amnesia", 60, "fixed:365d"), ("amnesia", 2000, "fixed:365d"),
    ]  # fmt: skip
    by_point = {("amnesia", "fixed:365d", 2000): "p003", ("full-memory", "all points", 60): "p000"}
    for (arm, policy, budget), point in by_point.items():
        row = table[
            (table["arm"] == arm) & (table["amnesia.ttl_policy"] == policy) & (table["budget"] == budget)
        ]
        evidence = evidence_table(load_runs([out / "points" / point]), resamples=100)
        expected = evidence[(evidence["arm"] == arm) & (evidence["mechanism"] == "all")].iloc[0]
        for state in ("injected", "stored", "forgotten"):
            assert float(row[f"evidence_{state}"].iloc[0]) == pytest.approx(expected[state])
    assert "| evidence injected | stored, not injected | forgotten | block tokens |" in (
        out / "report" / "sweep.md"
    ).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("name", "points", "shared"),
    [
        ("budget-sweep", 15, ["full-memory", "retrieval", "claims"]),
        ("relevance-none", 3, ["retrieval", "full-memory"]),
        ("relevance-ttl", 6, []),
    ],
)
def test_the_shipped_locomo_sweeps_parse(name: str, points: int, shared: list[str]) -> None:
    from amnesia_bench.sweep import load_sweep

    sweep = load_sweep(Path(__file__).resolve().parents[2] / "docs" / "results-locomo" / f"{name}.yaml")
    assert len(sweep.points) == points and sweep.shared_arms == shared


def test_a_run_refuses_to_share_the_logs_of_another_design(small_set_tasks, write_tasks, tmp_path) -> None:
    from amnesia_bench.api import run_options
    from runners.runner import run
    from tasks.errors import RunError

    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    first = run_options(tasks, ["full-memory"], out=tmp_path / "first", seed=0)
    run(first)
    other = dataclasses.replace(
        run_options(tasks, ["full-memory"], out=tmp_path / "other", seed=1),
        shared_logs=(("full-memory", tmp_path / "first"),),
    )
    with pytest.raises(RunError, match="cannot share the logs of arm 'full-memory': seed differs"):
        run(other)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"seeds": []}, "seeds: expected a non-empty list"),
        ({"grid": {"retrieval.k": [1]}}, "grid.retrieval.k: expected arm.option with an arm from `arms`"),
        ({"grid": {"colour": [1]}}, "grid.colour: expected arm.option or a run setting (budget, tasks)"),
        ({"grid": {"budget": [500, -1]}}, "grid.budget: expected a number of tokens, got -1"),
        ({"grid": {"budget": [500, 500]}}, "grid.budget: a value is listed twice"),
        ({"grid": {"tasks": ["a", "b"]}}, "grid.tasks: tasks is given at the top level too"),
        ({"arm_config": 3}, "arm_config: expected an arm-config file, got 3"),
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
