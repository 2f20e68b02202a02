"""Pairs replayed one after the other, stopped by an error: every log is a prefix of its records, finished iff
it ends with `task_end`, the pairs before the error are finished, none after it, and a resume completes the
run."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runners.armconfig import ArmSpec
from runners.execute import replay_all
from runners.models.scripted import ScriptedModel
from runners.replay import PairJob
from tasks.generate import generate
from tasks.load import load_tasks
from tasks.logschema import is_finished, read_log
from tasks.modelapi import ModelRequest, ModelResponse
from tasks.spec import Task


@pytest.fixture(scope="module")
def tasks(write_tasks, tmp_path_factory: pytest.TempPathFactory) -> list[Task]:
    return load_tasks(write_tasks(tmp_path_factory.mktemp("tasks"), generate("mixed", 6, seed=4)))


class _FailingModel(ScriptedModel):
    """The scripted model, until its `fail_at`-th call (0-based), which raises."""

    def __init__(self, fail_at: int) -> None:
        super().__init__()
        self.calls, self.fail_at = 0, fail_at

    def complete(self, request: ModelRequest) -> ModelResponse:
        self.calls += 1
        if self.calls - 1 == self.fail_at:
            raise RuntimeError("the model went away")
        return super().complete(request)


def _jobs(tasks: list[Task], out: Path) -> list[PairJob]:
    arms = [ArmSpec("no-memory", "no-memory"), ArmSpec("amnesia", "amnesia")]
    return [
        PairJob(arm, task, seed=7, log_path=out / arm.name / f"{task.id.replace('/', '__')}.jsonl",
                workdir=out / "work" / task.id.replace("/", "__"), budget_tokens=2000)
        for task in tasks
        for arm in arms
    ]  # fmt: skip


@settings(max_examples=15, deadline=None)
@given(fail_at=st.integers(min_value=0, max_value=60))
def test_a_batch_stopped_by_an_error_leaves_prefixes_and_a_resume_completes_it(
    tasks: list[Task], fail_at: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    jobs = _jobs(tasks, tmp_path_factory.mktemp("run"))
    reference = _jobs(tasks, tmp_path_factory.mktemp("reference"))
    replay_all(ScriptedModel(), reference)
    with pytest.raises(RuntimeError, match="went away"):
        replay_all(_FailingModel(fail_at), jobs)
    finished = [is_finished(job.log_path) for job in jobs]
    stopped = finished.index(False)
    assert all(finished[:stopped]) and not any(finished[stopped:])  # pairs finish in order
    assert not any(job.log_path.exists() for job in jobs[stopped + 1 :])  # never started
    replay_all(ScriptedModel(), [job for job in jobs if not is_finished(job.log_path)])
    for job, expected in zip(jobs, reference, strict=True):
        ours, theirs = read_log(job.log_path), read_log(expected.log_path)
        assert [{k: v for k, v in r.items() if not k.startswith("wall")} for r in ours] == [
            {k: v for k, v in r.items() if not k.startswith("wall")} for r in theirs
        ]


def test_a_log_that_cannot_be_opened_stops_the_batch_at_its_pair(tasks: list[Task], tmp_path: Path) -> None:
    jobs = _jobs(tasks, tmp_path)
    jobs[3].log_path.mkdir(parents=True)  # a folder where the log should go
    with pytest.raises(IsADirectoryError):
        replay_all(ScriptedModel(), jobs)
    assert [is_finished(job.log_path) for job in jobs[:3]] == [True, True, True]
    assert not any(job.log_path.exists() for job in jobs[4:])
