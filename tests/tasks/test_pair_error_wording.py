"""What stopped a pair is said from its `pair_error` record: a model error or an arm backend error (an
external memory server), in the run's closing line and where a report or the viewer meets its log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from amnesia.clock import SimulatedClock
from tasks.errors import FailedPair, PairsFailed, ReportInputError
from tasks.logschema import LogWriter, PairError, TaskStart, read_log

TASK = {"id": "t/1", "group": "helpful", "category": "c"}


def _failed_log(path: Path, **cause: str) -> Path:
    with LogWriter(path, arm="mcp-memory", task_id="t/1", clock=SimulatedClock()) as log:
        log.write(TaskStart(task=TASK))
        log.write(
            PairError(session_index=None, turn_index=None, error="server-memory: did not start", **cause)
        )
    return path


@pytest.mark.parametrize(
    ("cause", "words"),
    [({"cause": "arm"}, "an arm backend error"), ({"cause": "model"}, "a model error"), ({}, "an error")],
)
def test_an_unfinished_log_names_what_stopped_it(tmp_path, cause, words):
    path = _failed_log(tmp_path / "pair.jsonl", **cause)
    assert ("cause" in json.loads(path.read_text().splitlines()[-1])) == bool(cause)  # absent: not written
    with pytest.raises(ReportInputError) as raised:
        read_log(path)
    assert str(raised.value) == (
        f"{path}:2: unfinished pair: it stopped on {words}: server-memory: did not start "
        "(rerun with --resume)"
    )


def test_the_runs_closing_line_counts_each_cause():
    model = FailedPair("amnesia", "h/1", "a model error", "TimeoutError")
    arm = FailedPair("mcp-memory", "h/2", "an arm backend error", "server-memory: did not start")
    assert str(PairsFailed([arm, arm], 8)) == (
        "2 of 8 pairs failed on an arm backend error (rerun with --resume to retry only those); "
        "first: mcp-memory h/2: server-memory: did not start"
    )
    assert str(PairsFailed([model, arm, arm], 8)) == (
        "3 of 8 pairs failed (1 on a model error, 2 on an arm backend error; rerun with --resume to retry "
        "only those); first: amnesia h/1: TimeoutError"
    )
