"""The pair summary in `task_end`: what `LogWriter` works out record by record is what `summarize` gives on
the records read back, and `read_pair` returns the same summary whether it reads a log's two ends or has to
read the whole log (older logs, other summary versions, damaged ends)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tasks import logschema
from tasks.errors import ReportInputError
from tasks.exposure import KINDS, exposed_values
from tasks.logschema import (
    SUMMARY_VERSION,
    InjectionRecord,
    LogWriter,
    MemoryForget,
    MemoryRefused,
    MemoryTouch,
    MemoryWrite,
    ModelCall,
    ProbeRecord,
    SessionStart,
    TaskEnd,
    TaskStart,
    ToolCall,
    TurnRecord,
    read_log,
    read_pair,
    summarize,
)

small = st.integers(min_value=0, max_value=3)
count = st.integers(min_value=0, max_value=10**6)
text = st.text(max_size=12)
texts = st.lists(text, max_size=3)
maybe_float = st.none() | st.floats(allow_nan=False, allow_infinity=False)

RECORDS = st.one_of(
    st.builds(SessionStart, session_index=small, session_id=text, agent=st.just("main"), at=st.floats(0, 9)),
    st.builds(TurnRecord, session_index=small, turn_index=small, user=text),
    st.builds(
        ModelCall, session_index=st.none() | small, turn_index=st.none() | small, call_index=small,
        purpose=st.none() | text, prompt_tokens=count, completion_tokens=count, cached=st.booleans(),
        wall_ms=maybe_float, messages=st.lists(st.fixed_dictionaries({"role": text, "content": text})),
    ),
    st.builds(
        InjectionRecord, session_index=small, turn_index=small, block=text, tokens=count,
        budget_tokens=st.none() | count, items=st.lists(st.fixed_dictionaries({"id": text, "tokens": count})),
    ),
    st.builds(
        ProbeRecord, session_index=small, turn_index=small, expect=texts, stale=texts, poison=texts,
        abstain=st.booleans(), answer=text, classification=st.sampled_from(["correct", "stale", "abstained"]),
        fact_changed_at=maybe_float, mechanism=text,
        evidence_memories=st.none() | st.dictionaries(text, count, max_size=2), gold_answer=st.none() | text,
        exposed=st.none() | st.fixed_dictionaries({kind: texts for kind in KINDS}),
    ),
    st.builds(
        ToolCall, session_index=small, turn_index=small, call_index=small, round_index=small,
        tool_call_id=text, name=text, arguments=text, result=text,
    ),
    st.builds(
        MemoryWrite, item_id=text, content=text, ttl=maybe_float, pinned=st.none() | st.booleans(),
        key=st.none() | text, source=st.none() | text, curve=st.none() | text, strength=maybe_float,
        expires_at=maybe_float,
    ),
    st.builds(MemoryTouch, item_id=text, strength=maybe_float, reason=text),
    st.builds(MemoryForget, item_id=text, reason=text, content_hash=st.none() | text),
    st.builds(MemoryRefused, reason=text, rule=st.none() | text),
)  # fmt: skip
TASK = {"id": "t/1", "group": "helpful", "category": "c"}


class _Clock:
    """A clock that shows the times it is given, one per record (a replay's clock only moves forward; the
    summary must not rely on that)."""

    def __init__(self, times: list[float]) -> None:
        self._times = iter(times)

    def now(self) -> float:
        return next(self._times)


def _write(path: Path, records: list, times: list[float]) -> Path:
    with LogWriter(path, arm="amnesia", task_id="t/1", clock=_Clock(times)) as log:  # type: ignore[arg-type]
        for record in [TaskStart(task=TASK), *records, TaskEnd(probes=0, model_calls=0)]:
            log.write(record)
    return path


def _without_summary(path: Path, out: Path) -> Path:
    """A copy of the log as a writer without summaries wrote it."""
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    end = json.loads(lines[-1])
    del end["summary"]
    lines[-1] = json.dumps(end, ensure_ascii=False, separators=(",", ":"))
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


@settings(max_examples=150, deadline=None)
@given(data=st.data(), records=st.lists(RECORDS, max_size=25))
def test_the_writers_summary_is_the_summary_of_the_records_read_back(tmp_path_factory, data, records):
    times = data.draw(st.lists(st.floats(0, 1e9) | st.integers(0, 10**9), min_size=len(records) + 2,
                               max_size=len(records) + 2))  # fmt: skip
    folder = tmp_path_factory.mktemp("log")
    path = _write(folder / "pair.jsonl", records, times)
    lines = read_log(path)
    written = lines[-1]["summary"]
    assert written == summarize(lines)
    assert written["horizon"] == max(times) and written["v"] == SUMMARY_VERSION
    assert read_pair(path) == (lines[0], lines[-1])  # read from both ends
    start, end = read_pair(_without_summary(path, folder / "old.jsonl"))  # read whole, then summarised
    assert (start, end) == (lines[0], lines[-1])


# The summary's columns that are not a record field of the same name, as worked out from a record read back.
_DERIVED = {
    "item_ids": lambda record: [item["id"] for item in record["items"]],
    "event": lambda record: record["type"].removeprefix("memory_"),
    "mechanism": lambda record: record.get("mechanism") or "",
}
_FAMILY_TYPES = {"calls": ("model_call",), "injections": ("injection",), "probes": ("probe",),
                 "memory": ("memory_write", "memory_touch", "memory_forget", "memory_refused")}  # fmt: skip


def _exposure(lines: list[dict], probe: dict) -> dict[str, list[str]] | None:
    """A probe line's `exposed`, or for one logged without it, the values the first prompt of its turn (the
    first earlier `model_call` of that session and turn) exposed; None when that prompt is unknown: no such
    call, or one whose messages were not logged."""
    if probe.get("exposed") is not None:
        return probe["exposed"]
    turn = (probe["session_index"], probe["turn_index"])
    calls = [
        line
        for line in lines[: probe["seq"]]
        if line["type"] == "model_call" and (line["session_index"], line["turn_index"]) == turn
    ]
    if not calls or not calls[0]["messages"]:
        return None
    return exposed_values(calls[0]["messages"], probe["expect"], probe["stale"], probe["poison"])


def _turn_records(messages: list[dict]) -> list:
    """A turn's model call with `messages`, then its probe, which was logged without `exposed`."""
    return [
        ModelCall(session_index=0, turn_index=2, call_index=0, messages=messages, prompt_tokens=0,
                  completion_tokens=0),
        ProbeRecord(session_index=0, turn_index=2, expect=["oolong"], stale=["lapsang"], poison=[],
                    abstain=False, answer="", classification="correct"),
    ]  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(records=st.lists(RECORDS, max_size=25))
# a call that logged no messages: its probe's exposure is unknown (the summary once said "nothing exposed")
@example(records=_turn_records([]))
@example(
    records=_turn_records([{"role": "system", "content": "It is oolong."}, {"role": "user", "content": "?"}])
)
def test_each_summary_column_holds_its_records_values_in_order(tmp_path_factory, records):
    """The columns, worked out the plain way: one value per record of the family, in log order."""
    path = _write(tmp_path_factory.mktemp("log") / "pair.jsonl", records, [float(i) for i in range(27)])
    lines = read_log(path)
    summary = lines[-1]["summary"]
    tools: dict[tuple[int, int], int] = {}
    for line in lines:
        if line["type"] == "tool_call":
            turn = (line["session_index"], line["turn_index"])
            tools[turn] = tools.get(turn, 0) + 1
    for family, types in _FAMILY_TYPES.items():
        rows = [line for line in lines if line["type"] in types]
        for name, values in summary[family].items():
            if name == "tool_calls":
                expected = [tools.get((row["session_index"], row["turn_index"]), 0) for row in rows]
            elif name == "exposed":
                expected = [_exposure(lines, row) for row in rows]
            else:
                expected = [_DERIVED.get(name, lambda row, n=name: row.get(n))(row) for row in rows]
            assert values == expected, (family, name)
    assert summary["tool_calls"] == sum(tools.values())


def test_the_summary_keeps_the_values_the_records_had_when_written(tmp_path):
    """An arm may reuse a list after logging it; the summary is encoded only when the pair ends."""
    expect, items = ["oolong"], [{"id": "m-1", "tokens": 3}]
    records = [
        ProbeRecord(session_index=0, turn_index=0, expect=expect, stale=[], poison=[], abstain=False,
                    answer="oolong", classification="correct"),
        InjectionRecord(session_index=0, turn_index=0, block="b", tokens=3, items=items),
    ]  # fmt: skip
    path = tmp_path / "pair.jsonl"
    with LogWriter(path, arm="a", task_id="t/1", clock=_Clock([0.0] * 4)) as log:  # type: ignore[arg-type]
        for record in [TaskStart(task=TASK), *records]:
            log.write(record)
        expect.append("lapsang")
        items.append({"id": "m-2", "tokens": 1})
        log.write(TaskEnd(probes=1, model_calls=0))
    lines = read_log(path)
    assert lines[-1]["summary"] == summarize(lines)
    assert lines[-1]["summary"]["probes"]["expect"] == [["oolong"]]


def _log_with_a_long_summary(tmp_path: Path) -> Path:
    block = "x" * 150_000  # the last line is longer than the first read from the end
    records = [InjectionRecord(session_index=0, turn_index=0, block=block, tokens=1, items=[])]
    return _write(tmp_path / "pair.jsonl", records, [0.0, 1.0, 2.0])


def test_a_last_line_longer_than_the_first_window_is_found(tmp_path):
    path = _log_with_a_long_summary(tmp_path)
    start, end = read_pair(path)
    assert end["summary"]["injections"]["block"] == ["x" * 150_000] and start["task"] == TASK


@settings(max_examples=300, deadline=None)
@given(
    lines=st.lists(st.binary(max_size=6) | st.sampled_from([b"", b"\r", b"{}"]), max_size=8),
    ended=st.booleans(),
)
def test_a_short_log_read_whole_is_cut_into_the_ends_the_windows_find(tmp_path_factory, lines, ended):
    """A log shorter than a window is read in one call and cut into its first and last lines
    (`logschema._ends`): the lines found by reading it from both ends (`logschema._long_ends`)."""
    data = b"\n".join(lines) + (b"\n" if ended else b"")
    path = tmp_path_factory.mktemp("log") / "pair.jsonl"
    path.write_bytes(data)
    assert logschema._short_log(path) == data
    assert logschema._ends(data) == logschema._long_ends(path)


def test_only_a_file_shorter_than_a_window_is_read_whole(tmp_path):
    path = tmp_path / "pair.jsonl"
    for size, whole in [(logschema._TAIL_BYTES - 1, True), (logschema._TAIL_BYTES, False)]:
        path.write_bytes(b"x\n" * (size // 2) + b"x" * (size % 2))
        assert (logschema._short_log(path) is not None) == whole
    assert logschema._short_log(tmp_path) is None  # not a file: opened the other way, which raises as before
    with pytest.raises(IsADirectoryError):
        read_pair(tmp_path)


def test_a_summary_of_another_version_is_worked_out_again(tmp_path):
    path = _log_with_a_long_summary(tmp_path)
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    end = json.loads(lines[-1])
    end["summary"] = {"v": SUMMARY_VERSION + 1, "anything": []}
    lines[-1] = json.dumps(end)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert read_pair(path)[1]["summary"] == summarize(read_log(path))


@pytest.mark.parametrize(
    ("damage", "expected"),
    [
        (lambda lines: [*lines[:-1], lines[-1][:-20]], r":3: truncated record"),
        (lambda lines: lines[:-1], r":2: unfinished pair"),
        (lambda lines: [lines[0][:-3], *lines[1:]], r":1: corrupt record"),
        (lambda lines: lines[:1], r":1: unfinished pair"),
    ],
)
def test_damaged_ends_are_read_whole_and_named_with_file_and_line(tmp_path, damage, expected):
    path = _write(tmp_path / "pair.jsonl", [TurnRecord(session_index=0, turn_index=0, user="hi")], [0.0] * 3)
    lines = path.read_text(encoding="utf-8").split("\n")[:-1]
    broken = damage(lines)
    path.write_text("\n".join(broken) + ("" if "truncated" in expected else "\n"), encoding="utf-8")
    with pytest.raises(ReportInputError, match=expected):
        read_pair(path)
