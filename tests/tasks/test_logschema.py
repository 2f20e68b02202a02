"""The typed log schema: what the writer writes, the reader reads back field for field; a format-1 line
without the optional fields still reads; a line that breaks the schema is refused with file:line: field."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia.clock import SimulatedClock
from tasks.errors import ReportInputError
from tasks.failures import failure_code
from tasks.logschema import (
    RECORD_TYPES,
    LogWriter,
    MemoryWrite,
    ModelCall,
    ProbeRecord,
    Record,
    TaskEnd,
    TaskStart,
    _micros_json,
    _number,
    is_finished,
    parse_record,
    read_log,
    required_fields,
    shared_value,
    summarize,
)

text = st.text(max_size=30)
maybe_float = st.none() | st.floats(allow_nan=False, allow_infinity=False, width=32)


@settings(max_examples=60, deadline=None)
@given(
    content=text,
    ttl=maybe_float,
    answer=text,
    classification=st.sampled_from(["correct", "stale", "poisoned", "abstained", "wrong"]),
    purpose=st.none() | text,
)
def test_written_records_read_back_as_the_same_typed_records(
    tmp_path_factory, content, ttl, answer, classification, purpose
):
    path = tmp_path_factory.mktemp("log") / "pair.jsonl"
    written = [
        TaskStart(task={"id": "t", "group": "helpful", "category": "c"}, seed=3),
        MemoryWrite(item_id="m-1", content=content, ttl=ttl),
        ModelCall(
            session_index=0, turn_index=0, call_index=0, purpose=purpose, prompt_tokens=5, completion_tokens=1
        ),
        ProbeRecord(
            session_index=0,
            turn_index=0,
            expect=["a"],
            stale=[],
            poison=[],
            abstain=False,
            answer=answer,
            classification=classification,
            failure=failure_code("", classification),  # as the runner writes it
        ),
        TaskEnd(probes=1, model_calls=1, wall_seconds=0.5),
    ]
    with LogWriter(path, arm="amnesia", task_id="t", clock=SimulatedClock(10.0)) as log:
        for record in written:
            log.write(record)
    assert is_finished(path)
    lines = read_log(path)
    read_back = [parse_record(line) for line in lines]
    assert read_back[-1].summary == summarize(lines)  # the writer adds the pair's summary to task_end
    assert [*read_back[:-1], dataclasses.replace(read_back[-1], summary=None)] == written
    assert [line["seq"] for line in lines] == list(range(len(written)))
    assert all(line["sim_time"] == 10.0 and line["arm"] == "amnesia" for line in lines)
    call = json.loads(path.read_text(encoding="utf-8").split("\n")[2])  # not splitlines: U+0085 is content
    assert ("purpose" in call) == (purpose is not None)  # optional field left out at its default


def _write_lines(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def _envelope(seq: int, kind: str) -> dict:
    return {"v": 1, "seq": seq, "type": kind, "arm": "a", "task_id": "t", "sim_time": 0.0}


def test_a_format_1_log_with_only_the_required_fields_reads_and_gets_defaults(tmp_path):
    records = [
        {**_envelope(0, "task_start"), "task": {"id": "t", "group": "g", "category": "c"}},
        {**_envelope(1, "model_call"), **{k: 0 for k in required_fields("model_call")}},
        {**_envelope(2, "task_end"), "probes": 0, "model_calls": 1},
    ]
    lines = read_log(_write_lines(tmp_path / "old.jsonl", records))
    assert lines[1]["messages"] == [] and lines[1]["cached"] is False and "purpose" not in lines[1]
    assert lines[2]["wall_seconds"] is None


MIDDLE_TYPES = sorted(kind for kind in RECORD_TYPES if kind not in ("task_start", "task_end"))


@pytest.mark.parametrize("kind", MIDDLE_TYPES)
def test_a_missing_required_field_is_named_with_file_and_line(tmp_path, kind):
    required = required_fields(kind)
    middle = {**_envelope(1, kind), **{name: 0 for name in required[1:]}}
    records = [
        {**_envelope(0, "task_start"), "task": {"id": "t", "group": "g", "category": "c"}},
        middle,
        {**_envelope(2, "task_end"), "probes": 0, "model_calls": 0},
    ]
    path = _write_lines(tmp_path / "bad.jsonl", records)
    with pytest.raises(ReportInputError, match=rf"bad.jsonl:2: {required[0]}: missing in {kind} record"):
        read_log(path)


def test_an_unknown_format_version_is_refused(tmp_path):
    records = [{**_envelope(0, "task_start"), "v": 99, "task": {}}]
    with pytest.raises(ReportInputError, match=r":1: v: unknown log format 99"):
        read_log(_write_lines(tmp_path / "future.jsonl", records))


class _FixedClock:
    """A clock at any value the writer may meet (an int, an infinity...), unlike SimulatedClock's floats."""

    def __init__(self, now: object) -> None:
        self._now = now

    def now(self) -> object:
        return self._now


@settings(max_examples=80, deadline=None)
@given(
    content=st.text(),
    ttl=st.none() | st.floats(),
    strength=st.none() | st.floats(),
    now=st.floats() | st.integers(min_value=0, max_value=10**12),
    purpose=st.none() | st.text(max_size=10),
    arm=st.text(min_size=1, max_size=10),
)
def test_a_line_is_the_json_of_envelope_fields_and_wall_time(
    tmp_path_factory, content, ttl, strength, now, purpose, arm
):
    """The writer splices the envelope around the encoded fields: the text must be exactly what encoding
    the whole line as one dict gives (floats, non-finite values, escapes, omitted defaults)."""
    path = tmp_path_factory.mktemp("log") / "pair.jsonl"
    records = [
        MemoryWrite(item_id="m-1", content=content, ttl=ttl, strength=strength),
        ModelCall(
            session_index=0,
            turn_index=1,
            call_index=None,
            purpose=purpose,
            prompt_tokens=5,
            completion_tokens=1,
            messages=[{"role": "user", "content": content}],
        ),
    ]
    with LogWriter(path, arm=arm, task_id="t/1", clock=_FixedClock(now)) as log:  # type: ignore[arg-type]
        for record in records:
            log.write(record)
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines.pop() == ""
    for seq, (line, record) in enumerate(zip(lines, records, strict=True)):
        fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
        if fields.get("purpose", 0) is None:  # the one field here written only when it is not its default
            del fields["purpose"]
        envelope = {"v": 1, "seq": seq, "type": record.TYPE, "arm": arm, "task_id": "t/1", "sim_time": now}
        whole = {**envelope, **fields, "wall_time": json.loads(line)["wall_time"]}
        assert line == json.dumps(whole, ensure_ascii=False, separators=(",", ":"))


@settings(max_examples=300, deadline=None)
@given(
    micros=st.integers(min_value=0, max_value=2**34 * 10**6)
    | st.integers(min_value=2**30 * 10**6 - 5, max_value=2**30 * 10**6 + 5)
    | st.integers(min_value=2**32 * 10**6 - 5, max_value=2**32 * 10**6 + 5)
)
def test_the_wall_clock_is_written_as_the_json_of_its_float(micros):
    """`wall_time` is spelled from the integer clock: the text must be exactly the JSON of the float it reads
    back as, and that float must be the clock's value in seconds (the nearest double to it)."""
    written = _micros_json(micros)
    assert written == _number(json.loads(written))
    assert json.loads(written) == micros / 1e6


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None)
@given(
    tasks=st.lists(st.dictionaries(st.text(max_size=6), JSON_VALUES, max_size=4), min_size=1, max_size=3),
    picks=st.lists(st.integers(min_value=0, max_value=2), min_size=1, max_size=8),
    seed=st.none() | st.integers(),
)
def test_a_shared_task_is_written_as_encoding_the_whole_line_gives(tmp_path_factory, tasks, picks, seed):
    """`task_start.task` is a shared_value (encoded once per dict object): whichever of several task dicts
    each pair's writer gets, in any order and again, its line is the plain encoding of the whole line."""
    folder = tmp_path_factory.mktemp("log")
    for number, pick in enumerate(picks):
        record = TaskStart(task=tasks[pick % len(tasks)], seed=seed)
        path = folder / f"{number}.jsonl"
        with LogWriter(path, arm="a", task_id="t", clock=_FixedClock(0.0)) as log:  # type: ignore[arg-type]
            log.write(record)
        line = path.read_text(encoding="utf-8").removesuffix("\n")
        envelope = {"v": 1, "seq": 0, "type": "task_start", "arm": "a", "task_id": "t", "sim_time": 0.0}
        fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
        whole = {**envelope, **fields, "wall_time": json.loads(line)["wall_time"]}
        assert line == json.dumps(whole, ensure_ascii=False, separators=(",", ":"))


def test_only_a_records_first_field_may_be_shared(tmp_path):
    @dataclasses.dataclass(kw_only=True)
    class Late(Record):
        TYPE: ClassVar[str] = "late"
        first: int
        task: dict = shared_value()  # noqa: RUF009

    with (
        LogWriter(tmp_path / "pair.jsonl", arm="a", task_id="t", clock=_FixedClock(0.0)) as log,  # type: ignore[arg-type]
        pytest.raises(TypeError, match="only the first field may be a shared_value"),
    ):
        log.write(Late(first=1, task={}))


def test_a_pair_whose_task_end_is_longer_than_the_tail_read_is_finished(tmp_path):
    """An imported conversation's task_end carries a summary of hundreds of kilobytes: the last record is read
    whole, however long (it was cut at 64 KiB, so every LoCoMo pair read as unfinished)."""
    path = tmp_path / "long.jsonl"
    with LogWriter(path, arm="amnesia", task_id="t", clock=SimulatedClock(0.0)) as log:
        for index in range(3000):
            log.write(MemoryWrite(item_id=f"m-{index}", content="an observation of the conversation " * 3))
        log.write(TaskEnd(probes=0, model_calls=0, wall_seconds=0.1))
    assert len(path.read_bytes().splitlines()[-1]) > 4 * 65536
    assert is_finished(path)
