"""Pairs replayed one after the other. A failed model call stops only its pair: its log is a prefix of its
records ended by a `pair_error` record, every other pair finishes, and a resume completes the run. Other
errors (a log that cannot be opened, a model that cannot be set up) stop the batch at their pair."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runners.armconfig import ArmSpec
from runners.execute import replay_all
from runners.models.scripted import ScriptedModel
from runners.replay import PairJob
from tasks.errors import ModelConfigError
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


def _raw(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _without_wall(records: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if not k.startswith("wall")} for r in records]


@settings(max_examples=15, deadline=None)
@given(fail_at=st.integers(min_value=0, max_value=60))
def test_a_model_error_stops_only_its_pair_and_a_resume_completes_it(
    tasks: list[Task], fail_at: int, tmp_path_factory: pytest.TempPathFactory
) -> None:
    jobs = _jobs(tasks, tmp_path_factory.mktemp("run"))
    reference = _jobs(tasks, tmp_path_factory.mktemp("reference"))
    replay_all(ScriptedModel(), reference)
    model = _FailingModel(fail_at)
    replay_all(model, jobs)  # the error does not stop the batch
    unfinished = [index for index, job in enumerate(jobs) if not is_finished(job.log_path)]
    if model.calls <= fail_at:  # the batch needed fewer calls: nothing failed
        assert unfinished == []
    else:
        (failed,) = unfinished  # only the pair whose call failed
        ours, theirs = _raw(jobs[failed].log_path), _raw(reference[failed].log_path)  # as written
        assert ours[-1]["type"] == "pair_error" and ours[-1]["error"] == "RuntimeError: the model went away"
        prefix = _without_wall(ours[:-1])
        assert prefix == _without_wall(theirs[: len(prefix)])  # a prefix of the pair's records
    replay_all(ScriptedModel(), [job for job in jobs if not is_finished(job.log_path)])
    for job, expected in zip(jobs, reference, strict=True):
        assert _without_wall(read_log(job.log_path)) == _without_wall(read_log(expected.log_path))


def test_a_model_that_cannot_be_set_up_stops_the_batch(tasks: list[Task], tmp_path: Path) -> None:
    class Unconfigured(ScriptedModel):
        def complete(self, request: ModelRequest) -> ModelResponse:
            raise ModelConfigError("gguf:x: llama-cpp-python is not installed")

    jobs = _jobs(tasks, tmp_path)
    with pytest.raises(ModelConfigError):
        replay_all(Unconfigured(), jobs)
    assert not any(job.log_path.exists() for job in jobs[1:])


def test_a_log_that_cannot_be_opened_stops_the_batch_at_its_pair(tasks: list[Task], tmp_path: Path) -> None:
    jobs = _jobs(tasks, tmp_path)
    jobs[3].log_path.mkdir(parents=True)  # a folder where the log should go
    with pytest.raises(IsADirectoryError):
        replay_all(ScriptedModel(), jobs)
    assert [is_finished(job.log_path) for job in jobs[:3]] == [True, True, True]
    assert not any(job.log_path.exists() for job in jobs[4:])
