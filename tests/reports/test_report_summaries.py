"""A report read from the logs' summaries (`task_end.summary`: each log read at its two ends) is the report
read from every record: same frames, same files byte for byte, on the small hand-written set and a generated
one. Logs written before summaries existed read whole, as before. The frames' numeric columns are gathered
unboxed, and come out as pandas makes them from plain lists."""

from __future__ import annotations

import filecmp
import json
import shutil
from array import array
from pathlib import Path
from typing import Any

import pandas as pd
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from reports.build import build_report
from reports.logread import (
    _PAIR,
    _TUPLES,
    REPORT_COLUMNS,
    _Columns,
    _repeated,
    _Values,
    load_runs,
)
from tasks.generate import generate
from tasks.logschema import SUMMARY_COLUMNS


def _strip_summaries(run: Path, out: Path) -> Path:
    """A copy of the run whose logs end as a writer without summaries left them."""
    shutil.copytree(run, out)
    for path in (out / "logs").rglob("*.jsonl"):
        lines = path.read_text(encoding="utf-8").split("\n")[:-1]
        end = json.loads(lines[-1])
        assert end["type"] == "task_end" and isinstance(end.pop("summary"), dict)
        lines[-1] = json.dumps(end, ensure_ascii=False, separators=(",", ":"))
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return out


def _files(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())


def test_a_report_from_summaries_is_the_report_from_every_record(
    small_set_tasks, write_tasks, run_ok, tmp_path
):
    generated = [t for group in ("helpful", "harmful", "mixed") for t in generate(group, 4, seed=5)]
    tasks = write_tasks(tmp_path / "tasks", [*small_set_tasks, *generated])
    run_ok(tasks, tmp_path / "new" / "run")
    new = tmp_path / "new" / "run"
    old = _strip_summaries(new, tmp_path / "old" / "run")  # same folder name: report.md names it
    new_data, old_data = load_runs([new]), load_runs([old])
    for family in ("tasks", "calls", "injections", "probes", "memory"):
        new_frame, old_frame = getattr(new_data, family), getattr(old_data, family)
        if family == "tasks":  # the log files' paths differ, nothing else
            new_frame, old_frame = new_frame.drop(columns="file"), old_frame.drop(columns="file")
        pd.testing.assert_frame_equal(new_frame, old_frame, check_exact=True)
    assert len(new_data.tasks) == 3 * len(generated + small_set_tasks)
    folders = [build_report(run, out=run.parent / "report", resamples=100, workers=0) for run in (new, old)]
    names = _files(folders[0])
    assert "report.md" in names and "per_task.csv" in names and _files(folders[1]) == names
    _, mismatch, errors = filecmp.cmpfiles(folders[0], folders[1], names, shallow=False)
    assert mismatch == [] and errors == []


VALUE = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=3)
    | st.tuples(st.text(max_size=2))
)
# most columns hold one kind of value, sometimes with Nones
COLUMN = st.sampled_from([st.integers(-5, 10**12), st.floats(), st.booleans(), st.none()]).flatmap(
    lambda kind: st.lists(st.lists(kind | st.none(), max_size=4), max_size=6)
)


@settings(max_examples=300, deadline=None)
@given(pairs=COLUMN | st.lists(st.lists(VALUE, max_size=4), max_size=6), batch=st.integers(1, 8))
def test_a_column_gathered_pair_by_pair_is_the_column_pandas_makes_of_the_whole_list(pairs, batch):
    """Numbers and booleans are kept unboxed while the load runs; the frame column must be the one pandas
    makes of the plain list of the values: same dtype, same values (None stays None, 1 stays 1)."""
    gathered = _Values(batch)
    for values in pairs:
        gathered.extend(values)
    whole = [v for values in pairs for v in values]
    assume(whole)  # a load without rows makes no columns (an empty frame of the family's column names)
    column, expected = (
        pd.DataFrame({"c": gathered.column()}, copy=False)["c"],
        pd.DataFrame({"c": whole})["c"],
    )
    assert column.dtype == expected.dtype
    pd.testing.assert_series_equal(column, expected, check_exact=True)
    assert [repr(v) for v in column.tolist()] == [repr(v) for v in expected.tolist()]


# A pair's values (its run, arm, task...): labels, run numbers, integers past 64 bits, any other mix.
LABEL = st.sampled_from(["amnesia", "no-memory", "t/1", ""])
PAIR_VALUES = st.sampled_from(
    [LABEL, st.integers(0, 3), st.integers(min_value=-(2**70), max_value=2**70), LABEL | VALUE]
).flatmap(lambda kind: st.lists(st.tuples(kind, st.integers(0, 3)), min_size=1, max_size=8))


@settings(max_examples=300, deadline=None)
@given(pairs=PAIR_VALUES)
def test_a_pairs_value_repeated_on_its_rows_is_the_column_pandas_makes_of_the_whole_list(pairs):
    """The columns of the pair (run, arm, task...) are kept one value a pair and repeated when the frame is
    made (`_repeated`, numpy's repeat for labels and run numbers): the column must be the plain list's."""
    whole = [value for value, count in pairs for _ in range(count)]
    assume(whole)  # a family without rows makes no columns
    values, counts = [value for value, _ in pairs], array("q", [count for _, count in pairs])
    column, expected = (
        pd.DataFrame({"c": _repeated(values, counts)}, copy=False)["c"],
        pd.DataFrame({"c": whole})["c"],
    )
    assert column.dtype == expected.dtype
    pd.testing.assert_series_equal(column, expected, check_exact=True)
    assert [repr(v) for v in column.tolist()] == [repr(v) for v in expected.tolist()]


_CELLS = {
    "float": st.one_of(st.floats(allow_infinity=True, allow_nan=True), st.just(-0.0)),
    "int": st.integers(-(2**62), 2**62),
    "bool": st.booleans(),
    "str": st.one_of(st.text(max_size=6), st.none()),
    "mixed": st.one_of(st.integers(-5, 5), st.floats(allow_nan=True), st.text(max_size=3), st.none()),
}


@st.composite
def _frames(draw: st.DrawFn) -> pd.DataFrame:
    """A frame of a few columns of one kind each (floats with NaN, integers, booleans, strings with
    missing ones, mixed objects), zero rows included."""
    rows = draw(st.integers(0, 6))
    kinds = draw(st.lists(st.sampled_from(sorted(_CELLS)), max_size=5))
    frame = pd.DataFrame(
        {f"c{i}": draw(st.lists(_CELLS[kind], min_size=rows, max_size=rows)) for i, kind in enumerate(kinds)}
    )
    return frame.astype({"c0": "category"}) if kinds and draw(st.booleans()) else frame


@settings(max_examples=200, deadline=None)
@given(_frames())
def test_records_are_pandas_records(frame):
    """markdown.records (report.md's rows, taken column by column) is frame.to_dict("records"): the same
    keys, values and Python types, NaN and signed zeros included."""
    from reports.markdown import records

    ours, theirs = records(frame), frame.to_dict("records")
    assert len(ours) == len(theirs)
    for mine, plain in zip(ours, theirs, strict=True):
        assert list(mine) == list(plain)
        assert [type(v) for v in mine.values()] == [type(v) for v in plain.values()]
        assert repr(list(mine.values())) == repr(list(plain.values()))


# A summary column's values: one kind of value, sometimes with Nones (or lists: tuples in a frame).
SUMMARY_VALUES = st.sampled_from(
    [st.integers(-5, 10**12), st.floats(), st.booleans(), st.none(), LABEL, st.text(max_size=2)]
).map(lambda kind: kind | st.none())


@st.composite
def family_pairs(draw: st.DrawFn) -> tuple[str, list[str] | None, list[dict[str, list[Any]]]]:
    """A family, the columns kept of it (all, or a report's), and the pairs' summaries of it, some empty."""
    family = draw(st.sampled_from(list(SUMMARY_COLUMNS)))
    kept = draw(st.sampled_from([None, REPORT_COLUMNS.get(family)]))
    kinds = {name: draw(SUMMARY_VALUES) for name in SUMMARY_COLUMNS[family]}
    tuples = st.lists(LABEL, max_size=2)
    summaries = []
    for rows in draw(st.lists(st.integers(0, 4), min_size=1, max_size=8)):
        summaries.append({
            name: draw(st.lists(tuples if name in _TUPLES else kind, min_size=rows, max_size=rows))
            for name, kind in kinds.items()
        })  # fmt: skip
    return family, kept, summaries


@settings(max_examples=300, deadline=None)
@given(drawn=family_pairs(), batch=st.integers(1, 6))
def test_a_family_gathered_in_batches_is_the_frame_of_its_rows(drawn, batch):
    """The reader holds the pairs' summaries and gathers their columns a batch of rows at a time: the frame
    must be the one pandas makes of the plain lists of the rows (each pair's run, arm, task... repeated
    on its rows; lists as tuples)."""
    family, kept, summaries = drawn
    pairs = {name: [] for name in _PAIR}
    columns = _Columns(family, {}, pairs, kept, batch)
    plain: dict[str, list[Any]] = {name: [] for name in columns.names}
    for index, summary in enumerate(summaries):
        context = {"run": index % 2, "group": "g", "category": f"c{index % 3}", "arm": "a",
                   "task_id": f"t{index}", "lang": "en"}  # fmt: skip
        for name, values in pairs.items():
            values.append(context[name])
        columns.extend(summary)
        rows = len(summary["sim_time"])
        for name in plain:
            if name in _PAIR:
                plain[name] += [context[name]] * rows
            else:
                plain[name] += [tuple(v) if name in _TUPLES else v for v in summary[name]]
    # a load without rows makes no columns (an empty frame of the family's names)
    assume(any(summary["sim_time"] for summary in summaries))
    frame, expected = columns.frame(), pd.DataFrame(plain)
    pd.testing.assert_frame_equal(frame, expected, check_exact=True)
    for name in plain:
        assert [repr(v) for v in frame[name].tolist()] == [repr(v) for v in expected[name].tolist()]
