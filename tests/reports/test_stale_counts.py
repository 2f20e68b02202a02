"""A pair's stale counts as the log reader works them out (`StaleChecker.pair_counts`: one checker for a
whole load, its caches of stale values, times and scans, the short way for tasks without stale values) are
the counts of their definition, worked out the plain way for each pair: the calls whose turn's last injected
block asserts a stale value out of date at the call, the items touched only by injections, and those of
them whose last written content asserts a value out of date at one of their touches."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reports.staleness import StaleChecker, stale_values
from runners.replay import task_to_dict
from tasks.generate import generate
from tasks.load import load_tasks
from tasks.scoring import asserted_values


@pytest.fixture(scope="module")
def logged_tasks(small_set_tasks, write_tasks, tmp_path_factory) -> list[dict[str, Any]]:
    """The hand-written and some generated tasks as a task_start logs them."""
    generated = [task for group in ("helpful", "harmful", "mixed") for task in generate(group, 4, seed=9)]
    folder = write_tasks(tmp_path_factory.mktemp("tasks"), [*small_set_tasks, *generated])
    return [task_to_dict(task) for task in load_tasks(folder)]


def _plain_counts(task: dict[str, Any], summary: dict[str, dict[str, list[Any]]]) -> tuple[int, int, int]:
    """The three counts by their definition, nothing cached or skipped."""
    values = stale_values(task)
    names = tuple(value.value for value in values)

    def stale_then(text: str | None, t: float) -> bool:
        late = {value.value for value in values if value.out_of_date(t)}
        return bool(text) and bool(late & asserted_values(text, names))

    injections, calls, memory = summary["injections"], summary["calls"], summary["memory"]
    blocks = {}
    for session, turn, block in zip(
        *(injections[n] for n in ("session_index", "turn_index", "block")), strict=True
    ):
        blocks[(session, turn)] = block  # the turn's last injection
    calls_stale = sum(
        stale_then(blocks.get((session, turn)), t)
        for session, turn, t in zip(
            *(calls[n] for n in ("session_index", "turn_index", "sim_time")), strict=True
        )
    )
    written: dict[str, str] = {}
    touches: dict[str, list[tuple[str, float]]] = {}
    for event, item, content, reason, t in zip(
        *(memory[n] for n in ("event", "item_id", "content", "reason", "sim_time")), strict=True
    ):
        if event == "write":
            written[item] = content
        elif event == "touch":
            touches.setdefault(item, []).append((reason, t))
    kept = [item for item, found in touches.items() if all(reason == "inject" for reason, _ in found)]
    stale = sum(any(stale_then(written.get(item), t) for _, t in touches[item]) for item in kept)
    return calls_stale, len(kept), stale


def _texts(task: dict[str, Any]) -> list[str]:
    """Texts that may assert the task's values: its statements, sentences naming its probes' values (some
    negated), and blocks of several of them."""
    turns = [turn for session in task["sessions"] for turn in session["turns"]]
    said = [spec["content"] for turn in turns for spec in turn.get("remember") or ()]
    values = [
        v for turn in turns if turn.get("probe") for v in (*turn["probe"]["stale"], *turn["probe"]["expect"])
    ]
    sentences = [f"It is {value}." for value in values] + [f"It is no longer {value}." for value in values]
    return said + sentences + ["", "Nothing to see."]


def _times(task: dict[str, Any]) -> list[float]:
    """Times around those at which the task's values go out of date: its sessions' times, its ttls' ends."""
    found = {0.0, 10.0**9}
    for session in task["sessions"]:
        for turn in session["turns"]:
            for spec in turn.get("remember") or ():
                ends = [session["at"]] + ([session["at"] + spec["ttl"]] if spec.get("ttl") else [])
                found.update(t + d for t in ends for d in (-1.0, 0.0, 1.0))
    return sorted(found)


@st.composite
def pairs(draw: st.DrawFn, tasks: list[dict[str, Any]]) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """A few (task, summary) pairs, several of one task (the arms of a run), with calls and injections on a
    few turns and memory records of a few items."""
    found = []
    for _ in range(draw(st.integers(1, 6))):
        task = draw(st.sampled_from(tasks))
        texts, times = st.sampled_from(_texts(task)), st.sampled_from(_times(task))
        turn = st.tuples(st.integers(0, 2), st.integers(0, 1))
        injected = draw(st.lists(st.tuples(turn, st.lists(texts, max_size=3).map("\n".join)), max_size=5))
        called = draw(st.lists(st.tuples(turn, times), max_size=6))
        records = draw(
            st.lists(
                st.tuples(
                    st.sampled_from(["write", "touch", "touch", "forget"]),
                    st.sampled_from(["m-1", "m-2", "m-3"]),
                    texts,
                    st.sampled_from(["inject", "inject", "inject", "recall", "answer"]),
                    times,
                ),
                max_size=12,
            )
        )
        summary = {
            "injections": {
                "session_index": [t[0] for t, _ in injected],
                "turn_index": [t[1] for t, _ in injected],
                "block": [block for _, block in injected],
            },
            "calls": {
                "session_index": [t[0] for t, _ in called],
                "turn_index": [t[1] for t, _ in called],
                "sim_time": [time for _, time in called],
            },
            "memory": {
                "event": [r[0] for r in records],
                "item_id": [r[1] for r in records],
                "content": [r[2] if r[0] == "write" else None for r in records],
                "reason": [r[3] if r[0] == "touch" else None for r in records],
                "sim_time": [r[4] for r in records],
            },
        }
        found.append((task, summary))
    return found


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_the_readers_stale_counts_are_those_of_the_plain_definition(logged_tasks, data):
    checker = StaleChecker()  # one for the whole load, as the reader has
    for task, summary in data.draw(pairs(logged_tasks)):
        assert checker.pair_counts(task, summary) == _plain_counts(task, summary)


def test_the_tasks_have_stale_values_and_some_none(logged_tasks):
    """The strategy's tasks take both ways of `pair_counts`."""
    counts = [len(stale_values(task)) for task in logged_tasks]
    assert min(counts) == 0 and max(counts) > 0


def test_an_item_shown_out_of_date_at_a_later_touch_counts(logged_tasks):
    """An item shown only by injections, its value current at its first touch and out of date at its last."""
    task = next(task for task in logged_tasks if stale_values(task))
    value = stale_values(task)[0]
    times = [t for t in _times(task) if value.out_of_date(t)]
    early = next(t for t in _times(task) if t < times[0] and not value.out_of_date(t))
    text = f"It is {value.value}."
    summary = {
        "injections": {"session_index": [], "turn_index": [], "block": []},
        "calls": {"session_index": [], "turn_index": [], "sim_time": []},
        "memory": {"event": ["write", "touch", "touch"], "item_id": ["m-1"] * 3,
                   "content": [text, None, None], "reason": [None, "inject", "inject"],
                   "sim_time": [0.0, early, times[0]]},
    }  # fmt: skip
    assert _plain_counts(task, summary) == (0, 1, 1) == StaleChecker().pair_counts(task, summary)


def test_the_plain_counts_see_stale_blocks(logged_tasks):
    """A check of the check: a block asserting a superseded value at a late call counts."""
    task = next(task for task in logged_tasks if stale_values(task))
    value = stale_values(task)[0]
    late = next(t for t in _times(task) if value.out_of_date(t))
    summary = {
        "injections": {"session_index": [0], "turn_index": [0], "block": [f"It is {value.value}."]},
        "calls": {"session_index": [0], "turn_index": [0], "sim_time": [late]},
        "memory": {"event": [], "item_id": [], "content": [], "reason": [], "sim_time": []},
    }
    assert _plain_counts(task, summary)[0] == 1 == StaleChecker().pair_counts(task, summary)[0]
