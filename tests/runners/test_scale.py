"""Scaling a run out never changes a log: calls in flight (`--max-connections`), shards (`--shard i/N`) and a
Dask cluster (`--executor dask=ADDRESS`) give the logs of a plain `--workers 1` run, wall-clock keys aside."""

from __future__ import annotations

from pathlib import Path

import pytest

from runners.execute import Executor, parse_shard, shard_of
from tasks.errors import RunError


@pytest.fixture
def small_set(small_set_tasks, write_tasks, tmp_path: Path) -> Path:
    return write_tasks(tmp_path / "tasks", small_set_tasks)


def test_the_union_of_shards_is_the_unsharded_run(small_set, run_ok, run_logs, tmp_path: Path) -> None:
    run_ok(small_set, tmp_path / "whole")
    sharded = tmp_path / "sharded"
    for index in range(3):  # as a batch array would: every shard into the same folder, with --resume
        run_ok(small_set, sharded, "--shard", f"{index}/3", "--resume")
    assert run_logs(sharded) == run_logs(tmp_path / "whole")
    one_shard = tmp_path / "one"
    run_ok(small_set, one_shard, "--shard", "1/3")
    assert 0 < len(run_logs(one_shard)) < len(run_logs(sharded))


def test_shards_split_every_pair_exactly_once_by_a_stable_hash() -> None:
    pairs = [(arm, f"task-{n}") for arm in ("no-memory", "amnesia") for n in range(200)]
    shards = [shard_of(arm, task, 4) for arm, task in pairs]
    assert set(shards) == {0, 1, 2, 3}
    assert shard_of("amnesia", "harmful/verification-drink", 4) == 3  # pinned: the same on every machine


@pytest.mark.parametrize("text", ["3/3", "-1/2", "1", "a/b", "1/0"])
def test_a_bad_shard_is_one_line_naming_the_flag(text: str) -> None:
    with pytest.raises(RunError, match="--shard"):
        parse_shard(text)


@pytest.mark.parametrize("text", ["threads", "processes=x", "dask=", ""])
def test_a_bad_executor_is_one_line_naming_the_flag(text: str) -> None:
    with pytest.raises(RunError, match="--executor"):
        Executor.parse(text)


def test_calls_in_flight_leave_the_logs_as_a_sequential_run_has_them(
    small_set, run_ok, run_logs, openai_stub, stub_reply, monkeypatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("AMNESIA_NO_CACHE", "1")
    model = ["--model", "openai:stub-model", "--base-url", openai_stub.base_url]
    run_ok(small_set, tmp_path / "one", *model, "--max-connections", "1")
    assert openai_stub.peak_in_flight == 1
    # The first answer is slow, so the other pairs' first calls are sent while it is pending.
    openai_stub.script(stub_reply(delay=1.0))
    run_ok(small_set, tmp_path / "many", *model, "--max-connections", "8")
    assert openai_stub.peak_in_flight > 1
    assert run_logs(tmp_path / "many") == run_logs(tmp_path / "one")


def test_a_dask_cluster_run_equals_a_one_worker_run(small_set, run_ok, run_logs, tmp_path: Path) -> None:
    from dask.distributed import LocalCluster

    run_ok(small_set, tmp_path / "plain")
    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster:
        run_ok(small_set, tmp_path / "dask", "--executor", f"dask={cluster.scheduler_address}")
    assert run_logs(tmp_path / "dask") == run_logs(tmp_path / "plain")
