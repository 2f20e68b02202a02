"""`generate --horizon` and `--mechanisms` (issue 31): Memora-like densities of memory mutations per probe,
reported in the manifest; deterministic per seed; the mix restricted to the mechanisms asked for; the sets
stay valid, answerable and no ttl oracle."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from amnesia.config import Config
from amnesia.durations import parse_duration
from amnesia_bench import cli
from tasks.fairness import TimeRule, oracle_problem, value_fates
from tasks.generate import HORIZONS, generate, horizon_density, task_mutations
from tasks.load import GROUPS, load_tasks, validate_path


def _set(horizon: str | None, n: int = 6, seed: int = 11, **options) -> list[dict]:
    return [task for group in GROUPS for task in generate(group, n, seed, horizon=horizon, **options)]


@pytest.mark.parametrize("horizon", list(HORIZONS))
def test_each_horizon_reaches_its_density_and_span(horizon: str) -> None:
    span_days, target = HORIZONS[horizon]
    tasks = _set(horizon)
    density = horizon_density(tasks)
    assert abs(density["mutations_per_probe"] - target) <= 0.1 * target, density
    for task in tasks:  # every task is stretched to the span
        assert max(parse_duration(session["at"]) for session in task["sessions"]) >= span_days * 86_400
    assert density["mutations_per_probe"] > horizon_density(_set(None))["mutations_per_probe"]


def test_without_a_horizon_the_tasks_are_unchanged_and_horizons_are_deterministic() -> None:
    assert _set(None) == [task for group in GROUPS for task in generate(group, 6, 11)]
    assert _set("quarter") == _set("quarter")
    assert _set("quarter", seed=12) != _set("quarter")
    # task i does not depend on n
    assert generate("mixed", 5, 3, horizon="month")[:2] == generate("mixed", 2, 3, horizon="month")


def test_mutations_count_forgets_keyed_rewrites_and_probe_value_changes() -> None:
    sessions = [
        {"at": 0, "turns": [{"user": "a", "remember": {"content": "Room is Aurora.", "key": "room"}}]},
        {"at": 1, "turns": [{"user": "b", "remember": {"content": "Room is Juniper.", "key": "room"}}]},
        {"at": 2, "turns": [{"user": "c", "remember": {"content": "Desk is Cedar."}}]},  # first write
        {"at": 3, "turns": [{"user": "d", "remember": {"content": "Desk is Willow."}}]},  # unkeyed change
        {"at": 4, "turns": [{"user": "e", "forget": {"key": "room"}}]},
        {"at": 5, "turns": [{"user": "f?", "probe": {"expect": ["Willow"], "stale": ["Cedar"]}}]},
    ]
    assert task_mutations(sessions) == 3


def test_mechanisms_restrict_every_probe_including_the_horizons_own() -> None:
    wanted = ["implicit-change", "false-premise"]
    tasks = _set("month", mechanisms=wanted)
    assert tasks and {task["group"] for task in tasks} == {"harmful"}  # no helpful scenario tests them
    mechanisms = {
        turn["probe"]["mechanism"]
        for task in tasks
        for s in task["sessions"]
        for turn in s["turns"]
        if "probe" in turn
    }
    assert mechanisms == set(wanted)
    # the restricted mix of a group that has scenarios of the mechanism
    helpful = generate("helpful", 8, 1, mechanisms=["still-valid"])
    assert len(helpful) == 8 and not generate("helpful", 8, 1, mechanisms=["cascade"])


@pytest.mark.parametrize(("horizon", "n"), [("week", 4), ("quarter", 1)])
def test_horizon_sets_validate_are_answerable_and_no_oracle(
    horizon: str, n: int, tmp_path: Path, assert_probe_values_written_before_and_not_asked
) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump(_set(horizon, n=n), allow_unicode=True, sort_keys=False), encoding="utf-8")
    assert validate_path(path) == []
    tasks = load_tasks(path)
    for task in tasks:
        assert_probe_values_written_before_and_not_asked(task)
    for config in (Config(), Config(default_curve="flat", renew_on_inject="none")):
        assert oracle_problem(value_fates(tasks, TimeRule(config))) is None


def test_cli_reports_the_density_and_refuses_bad_options(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "gen"
    args = ["generate", "--group", "all", "--n", "4", "--seed", "2", "--horizon", "week", "--out", str(out)]
    result = runner.invoke(cli.app, args)
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "MANIFEST.json").read_text(encoding="utf-8"))
    assert manifest["horizon"] == "week" and manifest["mechanisms"] is None
    assert manifest["density"]["mutations_per_probe"] == pytest.approx(3.0, abs=0.3)
    for bad, message in (
        (["--horizon", "year"], "error: --horizon: expected one of week|month|quarter, got 'year'"),
        (["--mechanisms", "stale"], "error: --mechanisms: expected names from "),
        (["--group", "helpful", "--mechanisms", "cascade"], "error: --mechanisms: no generated scenario"),
    ):
        args = ["generate", "--group", "all", "--n", "2", "--out", str(tmp_path / "bad"), *bad]
        result = runner.invoke(cli.app, args)
        assert result.exit_code == 2 and result.output.startswith(message), result.output
        assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "bad").exists()


@pytest.mark.parametrize("mechanism", ["implicit-change", "false-premise", "cascade", "user-deleted"])
def test_each_issue_31_mechanism_is_generated_on_request_valid_and_answerable(
    mechanism: str, tmp_path: Path, assert_probe_values_written_before_and_not_asked
) -> None:
    tasks = generate("harmful", 4, 2, mechanisms=[mechanism])
    probes = [
        turn["probe"] for task in tasks for s in task["sessions"] for turn in s["turns"] if "probe" in turn
    ]
    assert len(tasks) == 4 and {probe["mechanism"] for probe in probes} == {mechanism}
    assert mechanism not in {p["mechanism"] for t in generate("harmful", 12, 2) for s in t["sessions"]
                             for turn in s["turns"] if (p := turn.get("probe"))}  # fmt: skip
    path = tmp_path / "set.yaml"
    path.write_text(yaml.safe_dump(tasks, allow_unicode=True, sort_keys=False), encoding="utf-8")
    assert validate_path(path) == []
    for task in load_tasks(path):
        assert_probe_values_written_before_and_not_asked(task)
