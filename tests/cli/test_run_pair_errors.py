"""A model error on one pair, end to end through `amnesia-bench run`: the pair's log ends with its
`pair_error` record, every other pair finishes, the run names the failed pairs in one line and exits 1
without a report, and `--resume` replays only the failed pairs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import runners.runner
from amnesia_bench.cli import app
from runners.models.scripted import ScriptedModel
from tasks.logschema import is_finished
from tasks.modelapi import ModelRequest, ModelResponse

FAILING_TASK = "harmful/verification-drink"


class FailsOnOneTask(ScriptedModel):
    """The scripted model, but its calls for one task (recognised by its user messages, `markers`) raise while
    `failing` is set; it notes the last user message of every call it gets."""

    def __init__(self, markers: set[str]) -> None:
        super().__init__()
        self.markers, self.failing, self.seen = markers, True, []

    def complete(self, request: ModelRequest) -> ModelResponse:
        last_user = next(m["content"] for m in reversed(request.messages) if m["role"] == "user")
        self.seen.append(last_user)
        if self.failing and last_user in self.markers:
            raise TypeError('can only concatenate str (not "NoneType") to str')
        return super().complete(request)


@pytest.fixture
def failing_model(monkeypatch, drink_task) -> FailsOnOneTask:
    model = FailsOnOneTask({turn["user"] for session in drink_task["sessions"] for turn in session["turns"]})
    monkeypatch.setattr(runners.runner, "resolve_model", lambda spec: model)
    return model


def test_a_failed_pair_is_logged_the_run_goes_on_and_resume_retries_only_it(
    failing_model: FailsOnOneTask, small_set_tasks, write_tasks, tmp_path: Path
) -> None:
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks)
    out = tmp_path / "run"
    args = ["run", "--no-progress", "--tasks", str(tasks), "--arms", "no-memory,amnesia", "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert errors == [
        "error: 2 of 8 pairs failed on a model error (rerun with --resume to retry only those); first: "
        f'no-memory {FAILING_TASK}: TypeError: can only concatenate str (not "NoneType") to str'
    ]
    logs = sorted((out / "logs").rglob("*.jsonl"))
    assert len(logs) == 8
    failed = [log for log in logs if not is_finished(log)]
    assert [log.parent.name for log in failed] == ["amnesia", "no-memory"]
    assert all(log.name == FAILING_TASK.replace("/", "__") + ".jsonl" for log in failed)
    for log in failed:
        last = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
        assert last["type"] == "pair_error" and last["error"].startswith("TypeError: can only concatenate")
        assert last["cause"] == "model"
        assert (last["session_index"], last["turn_index"]) == (0, 0)
    assert not (out / "report").exists()  # no report of a run with failed pairs

    failing_model.failing, failing_model.seen = False, []
    resumed = CliRunner().invoke(app, [*args, "--resume", "--no-report"])
    assert resumed.exit_code == 0, resumed.output
    assert "2 pairs run, 6 skipped" in resumed.output
    assert set(failing_model.seen) == failing_model.markers  # only the failed pairs were replayed
    assert all(is_finished(log) for log in logs)
