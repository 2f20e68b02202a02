"""`run --seeds/--epochs`: one run folder per (seed, epoch), pooled by `report` as repeated measures of each
task; a balanced, seeded `--limit`."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from amnesia_bench.cli import app
from runners.runner import pair_seed, select_tasks
from tasks.load import load_tasks

runner = CliRunner()


def _pair_seeds(run: Path) -> dict[str, int]:
    seeds = {}
    for log in sorted((run / "logs").rglob("*.jsonl")):
        first = json.loads(log.read_text(encoding="utf-8").splitlines()[0])
        seeds[f"{first['arm']}/{first['task_id']}"] = first["seed"]
    return seeds


def test_seeds_and_epochs_run_into_one_folder_each_and_report_together(
    small_set_tasks, write_tasks, run_args, run_logs, tmp_path
):
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    out = tmp_path / "runs"
    args = [a for a in run_args(tasks, out, "--seeds", "0,1", "--epochs", "2") if a != "--no-report"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    folders = sorted(p.name for p in out.iterdir() if (p / "manifest.json").exists())
    assert folders == ["seed-0-epoch-0", "seed-0-epoch-1", "seed-1-epoch-0", "seed-1-epoch-1"]
    manifests = {name: json.loads((out / name / "manifest.json").read_text()) for name in folders}
    assert [(m["seed"], m["epoch"]) for m in manifests.values()] == [(0, 0), (0, 1), (1, 0), (1, 1)]
    seeds = [_pair_seeds(out / name) for name in folders]
    assert all(set(a.values()).isdisjoint(b.values()) for i, a in enumerate(seeds) for b in seeds[i + 1 :])
    # Epoch 0 of seed 0 is exactly a plain run with --seed 0.
    plain = tmp_path / "plain"
    assert runner.invoke(app, run_args(tasks, plain, "--seed", "0")).exit_code == 0
    assert run_logs(out / "seed-0-epoch-0") == run_logs(plain)
    summary = pd.read_csv(out / "report" / "summary.csv").set_index(["arm", "group"])
    assert summary.loc[("amnesia", "all"), "tasks"] == len(small_set_tasks)  # distinct tasks
    assert summary.loc[("amnesia", "all"), "task_runs"] == 4 * len(small_set_tasks)  # 2 seeds x 2 epochs
    paired = pd.read_csv(out / "report" / "paired.csv")
    assert paired["tasks"].max() == len(small_set_tasks)  # clustered by task, not by (run, task)


def test_report_refuses_the_same_seed_twice(small_set_tasks, write_tasks, run_args, tmp_path):
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    first, second = tmp_path / "a", tmp_path / "b"
    for out in (first, second):
        assert runner.invoke(app, run_args(tasks, out, "--seed", "3", arms="no-memory")).exit_code == 0
    result = runner.invoke(app, ["report", str(first), str(second)])
    assert result.exit_code == 2
    assert "duplicate of" in result.output and "seed 3, epoch 0" in result.output
    again = runner.invoke(app, run_args(tasks, tmp_path / "c", "--seeds", "1,1", arms="no-memory"))
    assert again.exit_code == 2 and "--seeds: seed 1 given twice" in again.output


def test_a_limit_is_a_balanced_sample_across_groups(small_set_tasks, write_tasks, tmp_path):
    tasks = load_tasks(write_tasks(tmp_path / "tasks", small_set_tasks))
    groups = {t.group for t in tasks}
    picked = select_tasks(tasks, (), len(groups), seed=0)
    assert {t.group for t in picked} == groups  # the first N files were harmful, harmful, ...
    assert select_tasks(tasks, (), 2, seed=5) == select_tasks(tasks, (), 2, seed=5)
    assert [t for t in tasks if t in picked] == picked  # the task set's order is kept


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("xyz")), min_size=1, max_size=30),
       st.integers(0, 30), st.integers(0, 5))  # fmt: skip
def test_a_limit_sample_is_balanced_for_any_task_set(cells, limit, seed):
    from tasks.spec import Task

    tasks = [
        Task(id=f"t{i}", group=g, category=c, description="", sessions=()) for i, (g, c) in enumerate(cells)
    ]
    picked = select_tasks(tasks, (), limit, seed)
    assert len(picked) == min(limit, len(tasks))
    count = {g: sum(t.group == g for t in picked) for g in {t.group for t in tasks}}
    available = {g: sum(t.group == g for t in tasks) for g in count}
    # No group gets two more than another unless that other group has run out.
    for n in count.values():
        for h, m in count.items():
            assert n <= m + 1 or m == available[h]


def test_the_pair_seed_of_epoch_zero_is_the_plain_seed():
    assert pair_seed(7, "harmful/drink") == pair_seed(7, "harmful/drink", 0)
    assert pair_seed(7, "harmful/drink", 1) != pair_seed(7, "harmful/drink", 0)


def test_a_model_panel_is_reported_per_model_and_overall(small_set_tasks, write_tasks, run_args, tmp_path):
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    runs = []
    for model in ("scripted", "scripted/newest"):
        out = tmp_path / model.replace("/", "-")
        assert runner.invoke(app, run_args(tasks, out, "--model", model)).exit_code == 0
        runs.append(str(out))
    result = runner.invoke(app, ["report", *runs, "--out", str(tmp_path / "panel"), "--resamples", "200"])
    assert result.exit_code == 0, result.output
    models = pd.read_csv(tmp_path / "panel" / "models.csv")
    assert set(models["model"]) == {"scripted/uniform", "scripted:newest"}
    assert "## Results by model" in (tmp_path / "panel" / "report.md").read_text(encoding="utf-8")
    paired = pd.read_csv(tmp_path / "panel" / "paired.csv")
    assert {"group", "category", "mechanism", "model"} <= set(paired["by"])
