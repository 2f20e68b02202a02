"""Read run folders (manifest + session logs) into tidy DataFrames, strictly.

Strict: a missing manifest, an unparsable or truncated line, a record missing a field, a broken `seq` sequence
or an unfinished (arm, task) pair raises `ReportInputError` naming the file and line. A report is never built
from a partial read. Several run folders of one design (e.g. several seeds) load into one `RunData`; the
`run` column tells them apart and (run, task_id) is the unit of clustering.

Reading is two steps, `read_runs` (the logs into plain columns, without pandas) then `run_data` (the frames):
`amnesia-bench report` reads the logs in a forked process while it imports pandas (reports.figurepool).
"""

from __future__ import annotations

import json
from array import array
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain, repeat
from pathlib import Path
from typing import TYPE_CHECKING, Any

from reports.staleness import StaleChecker
from tasks.errors import ReportInputError
from tasks.logschema import MANIFEST_FORMAT, SUMMARY_COLUMNS, read_log, read_pair

if TYPE_CHECKING:  # imported where the frames are made: `read_runs` runs before numpy and pandas are imported
    import pandas as pd

TASK_FIELDS = ("id", "group", "category")


@dataclass(frozen=True)
class RunInfo:
    index: int
    path: Path
    manifest: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.path.name} (seed {self.manifest.get('seed')})"

    @property
    def model(self) -> str:
        """A short model label from the manifest (e.g. `scripted/uniform`, `gpt-4o-mini`)."""
        return model_label(self.manifest.get("model", {}))

    @property
    def replicate(self) -> tuple[Any, ...]:
        """What makes two runs of one task set repeated measures, not duplicates: model, seed, epoch."""
        model = json.dumps(self.manifest.get("model", {}), sort_keys=True)
        return (model, self.manifest.get("seed"), self.manifest.get("epoch", 0))


def model_label(described: dict[str, Any]) -> str:
    """`name/strategy` for the scripted model, else the model's name; `+epochN` for a non-default cache
    epoch."""
    if not isinstance(described, dict):
        return str(described)
    name = str(described.get("model") or described.get("name") or described.get("adapter") or "model")
    strategy = described.get("strategy")
    if strategy and str(strategy) not in name:  # "scripted" + uniform; "scripted:newest" names it already
        name = f"{name}/{strategy}"
    return f"{name}+epoch{described['cache_epoch']}" if described.get("cache_epoch") else name


class TaskSpecs(Mapping[str, dict[str, Any]]):
    """task id -> the task as its task_start logged it, kept as compact JSON text and decoded on each access
    (a fresh dict): a task's dict costs ~10 KB of Python objects, its JSON a fifth of that, and a report
    reads each task a few times at most."""

    def __init__(self) -> None:
        self._texts: dict[str, str] = {}

    def add(self, task: dict[str, Any]) -> None:
        """Keep `task` under its id unless a task of that id is kept already."""
        if task["id"] not in self._texts:
            self._texts[task["id"]] = _COMPACT.encode(task)

    def __getitem__(self, task_id: str) -> dict[str, Any]:
        return json.loads(self._texts[task_id])

    def __iter__(self) -> Iterator[str]:
        return iter(self._texts)

    def __len__(self) -> int:
        return len(self._texts)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self._texts


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


@dataclass
class RunData:
    """Everything a report needs, one tidy frame per record family."""

    runs: list[RunInfo]
    tasks: pd.DataFrame  # one row per (run, arm, task_id)
    calls: pd.DataFrame  # one row per model call
    injections: pd.DataFrame  # one row per injection
    probes: pd.DataFrame  # one row per probe
    memory: pd.DataFrame  # one row per memory_write/touch/forget/refused
    task_specs: Mapping[str, dict[str, Any]] = field(default_factory=dict)  # task id -> task (TaskSpecs)
    arm_configs: dict[str, dict[str, Any]] = field(default_factory=dict)  # arm -> describe()

    @property
    def arms(self) -> list[str]:
        return self.tasks["arm"].unique().tolist()  # in order of appearance

    def with_arms(self, arms: Sequence[str]) -> RunData:
        """The runs cut to `arms`, their rows in that arm order (which every table and figure then follows),
        each arm's rows as they were; ReportInputError naming an arm the runs do not have."""
        missing = [arm for arm in arms if arm not in set(self.tasks["arm"])]
        if missing:
            raise ReportInputError(
                f"--arms: {missing[0]!r} is not in the runs (they have {', '.join(self.arms)})"
            )
        order = {arm: position for position, arm in enumerate(arms)}

        def cut(frame: pd.DataFrame) -> pd.DataFrame:
            kept = frame[frame["arm"].isin(order)]
            return kept.iloc[kept["arm"].map(order).argsort(kind="stable")].reset_index(drop=True)

        return RunData(
            self.runs,
            cut(self.tasks),
            cut(self.calls),
            cut(self.injections),
            cut(self.probes),
            cut(self.memory),
            self.task_specs,
            {arm: config for arm, config in self.arm_configs.items() if arm in order},
        )


def read_manifest(run_dir: Path) -> dict[str, Any]:
    """The run folder's manifest.json, checked (ReportInputError naming the file if missing or malformed)."""
    path = run_dir / "manifest.json"
    if not run_dir.exists():
        raise ReportInputError(f"{run_dir}: no such file or folder")
    if not run_dir.is_dir():
        raise ReportInputError(f"{run_dir}: not a run folder")
    if not path.is_file():
        raise ReportInputError(f"{path}: missing (not a run folder?)")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ReportInputError(f"{path}: invalid JSON: {error}") from None
    if not isinstance(manifest, dict) or manifest.get("format") != MANIFEST_FORMAT:
        raise ReportInputError(f"{path}: format: expected {MANIFEST_FORMAT}, got {manifest.get('format')!r}")
    return manifest


def read_log_file(path: Path) -> list[dict[str, Any]]:
    """The records of one finished pair, checked against the log schema (`tasks.logschema.read_log`), plus
    the task fields a report needs; raises `ReportInputError` naming file:line on the first bad line."""
    records = read_log(path)
    _check_task(path, records[0])
    return records


def read_pair_file(path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The task_start and task_end (with its summary) of one finished pair (`tasks.logschema.read_pair`),
    plus the task fields a report needs."""
    start, end = read_pair(path)
    _check_task(path, start)
    return start, end


def pair_summary(path: Path | str) -> dict[str, Any]:
    """The summary of one finished pair (its task_end's: family -> column -> values), read again from its
    log (the tasks frame's `file`)."""
    return read_pair_file(Path(path))[1]["summary"]


def _check_task(path: Path, start: dict[str, Any]) -> None:
    task = start["task"]
    for name in TASK_FIELDS:
        if not isinstance(task, dict) or name not in task:
            raise ReportInputError(f"{path}:1: task.{name}: missing in task_start")


COLUMNS = {
    "calls": ["run", "group", "category", "arm", "task_id", "sim_time", *SUMMARY_COLUMNS["calls"][1:6]],
    "injections": ["run", "group", "category", "arm", "task_id", "sim_time", "tokens", "block", "item_ids"],
    "probes": [
        "run",
        "group",
        "category",
        "arm",
        "task_id",
        "sim_time",
        "classification",
        "fact_changed_at",
        "mechanism",
    ],
    "memory": ["run", "group", "category", "arm", "task_id", "sim_time", "event", "item_id", "reason"],
}


# The columns `amnesia-bench report` reads of the three families with the most rows (a run's model calls,
# injections and memory records); the others it reads whole. The strength timeline reads its one pair's memory
# records from the pair's log again (`pair_summary`). The injected blocks and the items' contents are read
# only pair by pair, for the stale counts of the tasks frame (STALE_COLUMNS).
REPORT_COLUMNS: dict[str, tuple[str, ...]] = {
    "calls": ("run", "arm", "task_id", "sim_time", "prompt_tokens"),
    "injections": ("run", "arm", "task_id", "session_index", "turn_index", "tokens"),
    "memory": ("run", "group", "arm", "task_id", "event", "reason"),
}


# A pair's stale counts (`staleness.StaleChecker.pair_counts`), worked out as its log is read: model calls
# whose injected block asserts an out-of-date stale value, items kept alive only by being shown, and those of
# them shown while out of date.
STALE_COLUMNS = ("stale_injection_calls", "inject_only_items", "stale_inject_only_items")
# The tasks frame: one row per (run, arm, task).
TASK_COLUMNS = ("run", "arm", "task_id", "group", "category", "lang", "seed", "budget_tokens", "dataset",
                "written_ttl_policy", "model_calls", "probes", "wall_seconds", "tool_calls", "horizon",
                *STALE_COLUMNS, "file")  # fmt: skip
_CONTEXT = ("run", "group", "category", "arm", "task_id")  # each frame's first columns: whose row it is
_PAIR = (*_CONTEXT, "lang")  # the columns of the pair (probes carry lang), the same on each of its rows
_TUPLES = frozenset({"item_ids", "expect", "stale", "poison"})  # lists in a summary, tuples in a frame
_SHARED = frozenset({"block", "item_id", "content", "key", "source", "curve", "reason", "event", "answer",
                     "classification", "mechanism", "gold_answer", "lang"})  # fmt: skip


_TYPECODES = {int: "q", float: "d", bool: "b"}  # array.array codes of the values kept unboxed
_DTYPES = {"q": "int64", "d": "float64", "b": "int8"}
_NONE = type(None)
_BATCH = 1 << 12  # values checked and unboxed together
# Rows of summaries held before their columns are gathered (`_Columns`): few enough that the summaries are
# still in the processor's cache when they are gathered (held for 4096 rows, the same instructions made half
# as many last-level cache misses again as the reader without holding).
_HELD_ROWS = 1 << 9


class _Values:
    """One frame column's values, gathered pair by pair in the least memory that gives the column pandas
    makes of the whole list: while every value is an int (or every one a float, or a bool), possibly with
    Nones, they are kept unboxed in an `array.array` (8 bytes a value, against a pointer plus a 24-32 byte
    object in a list), the Nones marked in a byte mask (a list of their positions cost 36 bytes a None: a
    memory record leaves most of ttl, pinned, expires_at None); any other mix falls back to the list of the
    values themselves. Values are checked
    a batch at a time (a pair brings a few). `values()` is what `pd.DataFrame` would make of the list: int64
    (ints), float64 (floats, or numbers with Nones: NaN), bool, objects (bools with Nones, all Nones), or
    the list itself."""

    __slots__ = ("batch", "buffer", "code", "count", "items", "nones", "typed")

    def __init__(self, batch: int = _BATCH) -> None:
        self.batch = batch
        self.code: str | None = None  # the array's typecode; None while only Nones came
        self.typed: array[Any] | None = None
        self.nones: bytearray | None = None  # 1 where a value is None (0 in the array); None: no None yet
        self.count = 0  # values in the array (or Nones, while only Nones came)
        self.buffer: list[Any] = []  # values not checked yet
        self.items: list[Any] | None = None  # the values themselves, once they cannot be kept unboxed

    def __len__(self) -> int:
        return len(self.items) if self.items is not None else self.count + len(self.buffer)

    def extend(self, values: list[Any]) -> None:
        if self.items is not None:
            self.items.extend(values)
            return
        self.buffer.extend(values)
        if len(self.buffer) >= self.batch:
            self._flush()

    def _flush(self) -> None:
        values, self.buffer = self.buffer, []
        kinds = set(map(type, values))
        kinds.discard(_NONE)
        code = self.code if not kinds else _TYPECODES.get(kinds.pop(), "") if len(kinds) == 1 else ""
        if code == "" or (self.code is not None and code != self.code) or not self._append(code, values):
            self._unbox()
            self.items.extend(values)  # type: ignore[union-attr]

    def _append(self, code: str | None, values: list[Any]) -> bool:
        """Append to the array (typecode `code`); False when a value does not fit (an int beyond int64)."""
        if code is not None:
            try:
                found = array(code, [0 if v is None else v for v in values] if None in values else values)
            except OverflowError:
                return False
            if self.typed is None:
                self.code, self.typed = code, array(code, bytes(self.count * found.itemsize))
            self.typed.extend(found)
        if None in values:
            if self.nones is None:
                self.nones = bytearray(self.count)
            self.nones.extend([v is None for v in values])
        elif self.nones is not None:
            self.nones.extend(bytes(len(values)))
        self.count += len(values)
        return True

    def _unbox(self) -> None:
        """Keep the values so far as a list from now on."""
        items = self.typed.tolist() if self.typed is not None else [None] * self.count
        if self.code == "b":
            items = [bool(v) for v in items]
        for position, none in enumerate(self.nones or b""):
            if none:
                items[position] = None
        self.items, self.typed, self.nones = items, None, None

    def column(self) -> pd.Series:
        """The frame column: the dtype and values pandas makes of the list of the values (see `values`),
        sharing the unboxed array's memory."""
        import pandas as pd

        return pd.Series(self.values(), copy=False)

    def values(self) -> Any:
        """The column's values: an array, or the list of values where pandas is to infer."""
        if self.items is None and self.buffer:
            self._flush()
        if self.items is not None:
            return self.items
        if self.typed is None:
            return [None] * self.count
        import numpy as np

        data = np.frombuffer(self.typed, dtype=_DTYPES[self.code])
        nones = np.frombuffer(self.nones, dtype=bool) if self.nones is not None else None
        if self.code == "b":
            data = data.astype(bool)
            if nones is not None:  # pandas keeps bools with Nones as objects
                data = data.astype(object)
                data[nones] = None
            return data
        if nones is not None:  # numbers with Nones: float64, NaN for None
            data = data.astype(np.float64)
            data[nones] = np.nan
        return data


class _Columns:
    """One record family's rows kept column by column, extended with one pair's summary columns at a time,
    with equal strings and tuples stored once across the whole load (`shared`): a label, an item id or a
    memory block repeated over turns, arms and tasks costs one pointer per row. The columns of the pair
    (run, arm, task...: `_PAIR`) are not repeated row by row while the logs are read: `pairs` holds their
    value for each pair (for every family), `counts` each pair's rows here, and `frame` repeats them.

    A pair brings a few rows: its summary is held until the pairs held bring `_HELD_ROWS` rows, and their
    columns are then gathered together, each in one step (a column a pair cost a call or two for a few
    values, most of the load's gathering)."""

    def __init__(
        self,
        family: str,
        shared: dict[Any, Any],
        pairs: dict[str, list[Any]],
        kept: Collection[str] | None = None,
        batch: int = _HELD_ROWS,
    ) -> None:
        """`pairs`: `_PAIR` name -> its value for each pair read so far (filled by the reader, one value a
        pair, shared by the families); `kept`: the frame columns gathered (None: all of them); `batch`: the
        rows of the summaries held before their columns are gathered."""
        self.family = family
        names = SUMMARY_COLUMNS[family]
        # probes carry the task's language right after sim_time (a column of the task, not the summary)
        extra = ("lang",) if family == "probes" else ()
        every = (*_CONTEXT, names[0], *extra, *names[1:])
        self.names = [name for name in every if kept is None or name in kept]
        self.columns = {name: _Values() for name in self.names if name not in _PAIR}
        self.counts = array("q")  # each pair's rows, in the order of `pairs`
        self._pairs = pairs
        self._shared = shared
        self._batch = batch
        self._held: list[dict[str, list[Any]]] = []  # the summaries of the pairs not gathered yet
        self._rows = 0  # their rows

    def extend(self, summary: dict[str, list[Any]]) -> None:
        """Add one pair's rows: its summary columns (its `pairs` values are the reader's to add)."""
        count = len(summary["sim_time"])
        self.counts.append(count)
        if count:
            self._held.append(summary)
            self._rows += count
            if self._rows >= self._batch:
                self.gather()

    def gather(self) -> None:
        """Gather the columns of the summaries held into the frame's columns (the reader calls it last)."""
        held, self._held, self._rows = self._held, [], 0
        if not held:
            return
        shared = self._shared
        for name, column in self.columns.items():
            values = list(chain.from_iterable([summary[name] for summary in held]))
            if name in _TUPLES:
                values = [_shared_tuple(shared, value) for value in values]
            elif name in _SHARED:
                values = [shared.setdefault(v, v) if type(v) is str else v for v in values]
            column.extend(values)

    def frame(self) -> pd.DataFrame:
        """The family's frame, made column by column, each column's gathered values let go as soon as it is
        made: the frame takes the unboxed arrays as they are (no copy, no consolidation into 2-D blocks), so
        the load's peak is the gathered values plus one column, not twice the frame."""
        import pandas as pd

        self.gather()
        columns, self.columns = self.columns, {}
        if not self.names or not sum(self.counts):  # no rows in the whole load
            return pd.DataFrame(columns=[name for name in COLUMNS[self.family] if name in self.names])
        made = {}
        for name in self.names:
            if name in _PAIR:  # each pair's value, once per row of the pair
                made[name] = _repeated(self._pairs[name], self.counts)
            else:
                made[name] = columns.pop(name).column()
        return pd.DataFrame(made, copy=False)


def _repeated(values: list[Any], counts: array[int]) -> pd.Series:
    """The column of `values[i]` repeated `counts[i]` times: the one pandas makes of the list of them. All
    strings (labels: arms, tasks) or all int64 integers (run numbers), they are repeated by numpy, from
    an array pandas takes as it would take their list; any other mix goes the general way (`_Values`)."""
    import numpy as np
    import pandas as pd

    times = np.frombuffer(counts, dtype=np.int64)
    kinds = set(map(type, values))
    if kinds == {str}:
        labels = np.empty(len(values), dtype=object)
        labels[:] = values
        return pd.Series(np.repeat(labels, times))
    if kinds == {int} and _INT64[0] <= min(values) and max(values) <= _INT64[1]:
        return pd.Series(np.repeat(np.array(values, dtype=np.int64), times))
    gathered = _Values()
    gathered.extend(list(chain.from_iterable(map(repeat, values, counts))))
    return gathered.column()


_INT64 = (-(2**63), 2**63 - 1)


def _shared_tuple(shared: dict[Any, Any], values: list[Any]) -> tuple[Any, ...]:
    found = tuple(values)
    try:
        return shared.setdefault(found, found)
    except TypeError:  # a tuple holding a list stays as it is
        return found


def expand_run_dirs(run_dirs: Sequence[Path | str]) -> list[Path]:
    """Run folders, with a folder that holds no manifest but run folders (`run --seeds/--epochs` writes one
    run folder per seed and epoch under OUT) replaced by those run folders, in name order."""
    expanded: list[Path] = []
    for run_dir in map(Path, run_dirs):
        children = sorted(p.parent for p in run_dir.glob("*/manifest.json")) if run_dir.is_dir() else []
        if not (run_dir / "manifest.json").exists() and children:
            expanded.extend(children)
        else:
            expanded.append(run_dir)
    return expanded


def _refuse_other_configs(first: RunInfo, run: RunInfo) -> None:
    """Runs pooled in one report measure the same arms: an arm configured otherwise is another design, to be
    compared with `compare`, not pooled (nor taken for a duplicate run)."""
    configs, first_configs = run.manifest.get("arms", {}), first.manifest.get("arms", {})
    for arm in sorted(set(configs) & set(first_configs)):
        if configs[arm] != first_configs[arm]:
            raise ReportInputError(
                f"{run.path}/manifest.json: arms.{arm}: configured otherwise than in {first.path}; "
                f"to compare two configurations use `amnesia-bench compare {first.path} {run.path}`"
            )


def _refuse_duplicates(runs: list[RunInfo]) -> None:
    """Two runs of the same task set, arms, model, seed and epoch are one measurement counted twice: pooling
    them would narrow every CI for nothing."""
    seen: dict[tuple[Any, ...], RunInfo] = {}
    for run in runs:
        earlier = seen.setdefault(run.replicate, run)
        if earlier is not run:
            _, seed, epoch = run.replicate
            raise ReportInputError(
                f"{run.path}: duplicate of {earlier.path} (same task set, arms, model {run.model}, "
                f"seed {seed}, epoch {epoch}); pool runs of different seeds, epochs or models only"
            )


def load_runs(
    run_dirs: Sequence[Path | str], columns: Mapping[str, Collection[str]] | None = None, specs: bool = True
) -> RunData:
    """Load one or more run folders of the same design (same task set and arms) into one RunData; a folder
    of run folders stands for its run folders. Duplicate runs are refused (ReportInputError). `columns`:
    family -> the only columns its frame gets (REPORT_COLUMNS: a report's); a family not named is whole.
    `specs`: keep the tasks as their task_start logged them (`task_specs`; a report reads none of them)."""
    return run_data(read_runs(run_dirs, columns, specs))


@dataclass
class RunLogs:
    """What `read_runs` gathers from the logs, before any frame is made (plain columns: picklable and
    cheap to pickle, the labels stored once)."""

    runs: list[RunInfo]
    families: dict[str, _Columns]  # calls, injections, probes, memory
    task_rows: list[tuple[Any, ...]]  # TASK_COLUMNS
    task_specs: TaskSpecs
    arm_configs: dict[str, dict[str, Any]]


def read_runs(
    run_dirs: Sequence[Path | str], columns: Mapping[str, Collection[str]] | None = None, specs: bool = True
) -> RunLogs:
    """The checks and the reading of `load_runs`, without making the frames (`run_data` makes them)."""
    if not run_dirs:
        raise ReportInputError("no run folder given")
    paths = expand_run_dirs(run_dirs)
    runs = [RunInfo(i, path, read_manifest(path)) for i, path in enumerate(paths)]
    first = runs[0]
    for run in runs[1:]:
        if run.manifest.get("tasks", {}).get("content_hash") != first.manifest.get("tasks", {}).get(
            "content_hash"
        ):
            raise ReportInputError(f"{run.path}/manifest.json: tasks.content_hash: differs from {first.path}")
        if set(run.manifest.get("arms", {})) != set(first.manifest.get("arms", {})):
            raise ReportInputError(f"{run.path}/manifest.json: arms: differ from {first.path}")
        _refuse_other_configs(first, run)
    _refuse_duplicates(runs)
    shared: dict[Any, Any] = {}
    kept = columns or {}
    pairs: dict[str, list[Any]] = {name: [] for name in _PAIR}  # each pair's values, for every family
    families = {
        name: _Columns(name, shared, pairs, kept.get(name))
        for name in ("calls", "injections", "probes", "memory")
    }
    task_rows: list[tuple[Any, ...]] = []  # TASK_COLUMNS
    label = shared.setdefault  # label(s, s): the string equal to s stored first
    pair_values = list(pairs.values())  # in _PAIR order
    calls, injections, probes, memory = families.values()
    task_specs = TaskSpecs()
    checker = StaleChecker()  # shared: each task's stale values worked out once, each text scanned once
    arm_configs: dict[str, dict[str, Any]] = {}
    for run in runs:
        logs = run.path / "logs"
        arm_names = list(run.manifest.get("arms", {})) or sorted(p.name for p in logs.glob("*") if p.is_dir())
        task_sets: dict[str, set[str]] = {}
        for arm in arm_names:
            files = sorted((logs / arm).glob("*.jsonl"), key=str)  # str: paths of one folder, sorted as names
            if not files:
                raise ReportInputError(f"{logs / arm}: no session logs for arm {arm!r}")
            arm_configs.setdefault(arm, run.manifest.get("arms", {}).get(arm, {}))
            ids = task_sets.setdefault(arm, set())
            for path in files:
                start, end = read_pair_file(path)
                task, summary = start["task"], end["summary"]
                if specs:
                    task_specs.add(task)
                ids.add(task["id"])
                lang = task.get("lang", "en")
                context = (run.index, task["group"], task["category"], end["arm"], end["task_id"], lang)
                for values, value in zip(pair_values, context, strict=True):  # in _PAIR order
                    values.append(label(value, value) if type(value) is str else value)
                calls.extend(summary["calls"])
                injections.extend(summary["injections"])
                probes.extend(summary["probes"])
                memory.extend(summary["memory"])
                origin = task.get("origin", {})
                # a tuple, not a dict, and its labels stored once: 10^5 tasks x 3 arms are 300,000 rows
                labels = tuple(label(v, v) if type(v) is str else v for v in (
                    task["id"], task["group"], task["category"], lang, origin.get("dataset", ""),
                    origin.get("ttl_policy", "")))  # fmt: skip
                task_rows.append((run.index, arm, *labels[:4], start.get("seed"), start.get("budget_tokens"),
                                  *labels[4:], end["model_calls"], end["probes"], end.get("wall_seconds"),
                                  summary["tool_calls"], summary["horizon"],
                                  *checker.pair_counts(task, summary), str(path)))  # fmt: skip
        reference_arm = arm_names[0]
        for arm, ids in task_sets.items():
            if ids != task_sets[reference_arm]:
                missing = sorted(task_sets[reference_arm] ^ ids)[:3]
                raise ReportInputError(
                    f"{logs / arm}: task set differs from arm {reference_arm!r} (e.g. {missing})"
                )
    for columns in families.values():  # what is held goes to the frames (or the parent) gathered
        columns.gather()
    return RunLogs(runs, families, task_rows, task_specs, arm_configs)


def run_data(logs: RunLogs) -> RunData:
    """The RunData of logs read by `read_runs`; the gathered columns are let go as their frames are made."""
    import pandas as pd

    families = logs.families
    return RunData(
        runs=logs.runs,
        tasks=pd.DataFrame(logs.task_rows, columns=list(TASK_COLUMNS)),
        calls=families["calls"].frame(),
        injections=families["injections"].frame(),
        probes=families["probes"].frame(),
        memory=families["memory"].frame(),
        task_specs=logs.task_specs,
        arm_configs=logs.arm_configs,
    )
