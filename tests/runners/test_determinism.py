"""Same seed -> identical logs (apart from wall* fields), whatever the number of workers; seeds derive from
(run seed, arm, task id), never from run order."""

from __future__ import annotations

from pathlib import Path

from runners.replay import derive_seed
from tasks.generate import generate

ARMS = "no-memory,full-memory,amnesia"


def _mixed_set(write_tasks, small_set_tasks, folder: Path) -> Path:
    generated = [t for group in ("helpful", "harmful", "mixed") for t in generate(group, 6, seed=3)]
    write_tasks(folder, small_set_tasks, "small.yaml")
    return write_tasks(folder, generated, "generated.yaml")


def test_two_runs_and_one_vs_two_workers_give_identical_logs(
    write_tasks, run_ok, run_logs, small_set_tasks, tmp_path: Path
) -> None:
    tasks = _mixed_set(write_tasks, small_set_tasks, tmp_path / "tasks")
    run_ok(tasks, tmp_path / "a")
    run_ok(tasks, tmp_path / "b")
    run_ok(tasks, tmp_path / "c", "--workers", "2")
    first = run_logs(tmp_path / "a")
    assert len(first) == 3 * (len(small_set_tasks) + 18)
    assert first == run_logs(tmp_path / "b")
    assert first == run_logs(tmp_path / "c")


def test_a_pair_does_not_depend_on_which_other_tasks_run(
    write_tasks, run_ok, run_logs, small_set_tasks, tmp_path: Path
) -> None:
    tasks = _mixed_set(write_tasks, small_set_tasks, tmp_path / "tasks")
    run_ok(tasks, tmp_path / "all")
    run_ok(tasks, tmp_path / "harmful", "--group", "harmful")
    everything = run_logs(tmp_path / "all")
    subset = run_logs(tmp_path / "harmful")
    assert subset and all(everything[name] == records for name, records in subset.items())


def test_pair_seeds_come_from_the_run_seed_and_the_task_id(
    write_tasks, run_ok, run_logs, small_set_tasks, tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    run_ok(tasks, tmp_path / "s0")
    run_ok(tasks, tmp_path / "s1", "--seed", "1")
    zero, one = run_logs(tmp_path / "s0"), run_logs(tmp_path / "s1")
    assert zero.keys() == one.keys()
    for arm in ARMS.split(","):  # every arm meets the same randomness on a task (common random numbers)
        name = f"{arm}/harmful__verification-drink.jsonl"
        assert zero[name][0]["seed"] == derive_seed(0, "harmful/verification-drink")
        assert one[name][0]["seed"] == derive_seed(1, "harmful/verification-drink")


def test_derive_seed_is_stable_and_order_sensitive() -> None:
    assert derive_seed(0, "amnesia", "t") == derive_seed(0, "amnesia", "t")
    assert derive_seed(0, "amnesia", "t") != derive_seed(0, "t", "amnesia")
    assert 0 <= derive_seed(123, "x") < 2**63
