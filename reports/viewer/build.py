"""`build_viewer(runs, out)`: a static, self-contained site for reading run folders in a browser.

`OUT/index.html` opens from disk (file://): no server, no network, no external script, font or stylesheet. The
page script and stylesheet are package data (`reports/viewer/assets/`). Data travels as small JavaScript
files, because a browser refuses fetch()/XHR of local files from a file:// page but runs a <script src>:

    data/index.js          AmnesiaViewer.index({...})   runs, summary tables (95% CIs), one row per task
    data/tasks/<id>.js     AmnesiaViewer.task({...})     every arm's records for one task, loaded on demand

so the page stays light at 10^4 tasks: it loads the index, and a task's records only when the task is opened.
Records are the session-log records (read strictly through `tasks.logschema.read_log`) without their `wall*`
keys, plus the stale transitions recomputed by `transitions.py`; message texts are stored once per task file
in a string table. The folder is staged and swapped in whole (`reports.staging`).
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from reports.logread import expand_run_dirs, read_log_file, read_manifest
from reports.staging import staged_folder
from reports.viewer.transitions import with_stale_transitions
from tasks.errors import ReportInputError
from tasks.exposure import fill_exposure
from tasks.failures import FAILURE_CODES
from tasks.logschema import ModelCall, ProbeRecord, TaskStart, ToolCall

ASSETS = ("index.html", "viewer.js", "viewer.css")
CLASS_CODES = {"correct": "c", "stale": "s", "poisoned": "p", "abstained": "a", "wrong": "w"}
_DROPPED_KEYS = ("v", "arm", "task_id")  # the same for every record of a pair: said once per column
_COUNTED = (
    "tasks",
    "probes",
    "expect_probes",  # these three: probes listing such values whose exposure is known (as in the report)
    "stale_exposure_probes",
    "poison_exposure_probes",
    "expected_exposed",
    "stale_exposed",
    "poison_exposed",
    "correct",
    "stale_probes",
    "stale_errors",
    "poison_probes",
    "poison_errors",
    "abstained",
    "wrong",
    "model_calls",
    "context_tokens",
    "tool_calls",
    *(f"failure:{code}" for code in FAILURE_CODES),  # probes that are not correct, by failure code
)


_EXPOSED = (("expect", "expected"), ("stale", "stale"), ("poison", "poison"))  # exposed kind, count prefix


@dataclass(frozen=True)
class Column:
    """One (run, arm) pair of the site: what the side-by-side view puts next to another."""

    label: str  # the arm name; `<run folder>:<arm>` when several runs are shown
    run: int
    arm: str
    logs: Path


# The shares the summary gives with a 95% CI: name -> (numerator, denominator) of `_pair_counts`.
_SHARES = {
    "expected_exposed": ("expected_exposed", "expect_probes"),
    "stale_exposed": ("stale_exposed", "stale_exposure_probes"),
    "poison_exposed": ("poison_exposed", "poison_exposure_probes"),
    "success": ("correct", "probes"),
    "stale_error": ("stale_errors", "stale_probes"),
    "poison_error": ("poison_errors", "poison_probes"),
    "abstained": ("abstained", "probes"),
    "wrong": ("wrong", "probes"),
    **{f"failure:{code}": (f"failure:{code}", "probes") for code in FAILURE_CODES},
}


@dataclass
class _Totals:
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(_COUNTED, 0))
    tasks: list[str] = field(default_factory=list)  # the task of each `per_task` row
    per_task: list[dict[str, int]] = field(default_factory=list)

    def add(self, task_id: str, other: dict[str, int]) -> None:
        self.tasks.append(task_id)
        self.per_task.append(other)
        for name, value in other.items():
            self.counts[name] += value

    def cis(self) -> dict[str, list[float | None]]:
        """share -> [lo, hi]: the 95% task-clustered bootstrap CI of `amnesia-bench report` (reports.stats,
        the same resamples and seed, so the same interval for the same cell); None where it has none."""
        from reports.stats import cluster_keys, ratio_cis  # numpy and scipy: only once the logs are read

        num = [[row[n] for n, _ in _SHARES.values()] for row in self.per_task]
        den = [[row[d] for _, d in _SHARES.values()] for row in self.per_task]
        estimates = ratio_cis(num, den, cluster_keys(self.tasks))
        return {
            name: [None if math.isnan(value) else value for value in (estimate.lo, estimate.hi)]
            for name, estimate in zip(_SHARES, estimates, strict=True)
        }


class _Strings:
    """A per-file string table: message texts repeat from call to call (history), so each is stored once."""

    def __init__(self) -> None:
        self.values: list[str] = []
        self._index: dict[str, int] = {}

    def ref(self, text: str) -> int:
        if text not in self._index:
            self._index[text] = len(self.values)
            self.values.append(text)
        return self._index[text]


def _columns(run_dirs: list[Path], manifests: list[dict[str, Any]]) -> list[Column]:
    names = [path.resolve().name for path in run_dirs]
    unique = len(set(names)) == len(names)
    columns = []
    for index, (path, manifest) in enumerate(zip(run_dirs, manifests, strict=True)):
        for arm in manifest.get("arms", {}):
            prefix = "" if len(run_dirs) == 1 else f"{names[index] if unique else f'run{index + 1}'}:"
            columns.append(Column(f"{prefix}{arm}", index, arm, path / "logs" / arm))
    return columns


def _compact(record: dict[str, Any], strings: _Strings) -> dict[str, Any]:
    kept = {k: v for k, v in record.items() if k not in _DROPPED_KEYS and not k.startswith("wall")}
    if record["type"] == ModelCall.TYPE:
        kept["messages"] = [
            {**message, "content": strings.ref(str(message.get("content") or ""))}
            for message in record.get("messages", [])
        ]
    return kept


def _pair_counts(records: list[dict[str, Any]]) -> dict[str, int]:
    probes = [r for r in records if r["type"] == ProbeRecord.TYPE]
    calls = [r for r in records if r["type"] == ModelCall.TYPE]
    classes = [p["classification"] for p in probes]
    # filled in for older logs (`_read_pairs`); a probe whose exposure is unknown (None) counts in no
    # exposure share, as in the report (`reports.metrics.probe_flags`)
    known = [p for p in probes if p.get("exposed") is not None]
    return {
        "tasks": 1,
        "probes": len(probes),
        "expect_probes": sum(bool(p["expect"]) for p in known),
        "stale_exposure_probes": sum(bool(p["stale"]) for p in known),
        "poison_exposure_probes": sum(bool(p["poison"]) for p in known),
        **{f"{name}_exposed": sum(bool(p["exposed"][kind]) for p in known) for kind, name in _EXPOSED},
        "correct": classes.count("correct"),
        "stale_probes": sum(bool(p["stale"]) for p in probes),
        "stale_errors": sum(bool(p["stale"]) and p["classification"] == "stale" for p in probes),
        "poison_probes": sum(bool(p["poison"]) for p in probes),
        "poison_errors": sum(bool(p["poison"]) and p["classification"] == "poisoned" for p in probes),
        "abstained": classes.count("abstained"),
        "wrong": classes.count("wrong"),
        "model_calls": len(calls),
        "context_tokens": sum(int(c["prompt_tokens"]) for c in calls),
        "tool_calls": sum(r["type"] == ToolCall.TYPE for r in records),
        **{f"failure:{code}": sum(p.get("failure") == code for p in probes) for code in FAILURE_CODES},
    }


def _script(call: str, payload: dict[str, Any]) -> str:
    """`AmnesiaViewer.<call>(<payload>);` — JSON is a JavaScript expression once U+2028/9 are escaped."""
    text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    return f"AmnesiaViewer.{call}(" + text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029") + ");\n"


def _task_files(columns: list[Column]) -> list[str]:
    """Every log file name of any column, in a stable order."""
    names: set[str] = set()
    for column in columns:
        if not column.logs.is_dir():
            raise ReportInputError(f"{column.logs}: no session logs for arm {column.arm!r}")
        names.update(path.name for path in column.logs.glob("*.jsonl"))
    if not names:
        raise ReportInputError(f"{columns[0].logs.parent}: no session logs")
    return sorted(names)


def _read_pairs(columns: list[Column]) -> Iterator[tuple[str, dict[str, list[dict[str, Any]]]]]:
    """(log file name, {column label: records}) per task, one task at a time (memory stays flat)."""
    for name in _task_files(columns):
        yield (
            name,
            {
                c.label: fill_exposure(read_log_file(c.logs / name))
                for c in columns
                if (c.logs / name).is_file()
            },
        )


def _task_payload(pairs: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    strings = _Strings()
    task = next(iter(pairs.values()))[0]["task"]
    columns = {}
    for label, records in pairs.items():
        start = records[0]
        columns[label] = {
            "arm_config": start.get("arm_config", {}),
            "seed": start.get("seed"),
            "budget_tokens": start.get("budget_tokens"),
            "model": start.get("model", {}),
            "records": [
                _compact(r, strings)
                for r in with_stale_transitions(records[1:], start.get("arm_config", {}))
                if r["type"] != TaskStart.TYPE
            ],
        }
    return {"id": task["id"], "task": task, "columns": columns, "strings": strings.values}


def _index_row(file: str, pairs: dict[str, list[dict[str, Any]]]) -> tuple[list[Any], dict[str, str]]:
    """The task's list row ([id, group, category, lang, mechanisms, file]) and, per column, the initials of
    its probes' classifications."""
    task = next(iter(pairs.values()))[0]["task"]
    mechanisms: list[str] = []
    cells = {}
    for label, records in pairs.items():
        probes = [r for r in records if r["type"] == ProbeRecord.TYPE]
        cells[label] = "".join(CLASS_CODES.get(p["classification"], "?") for p in probes)
        for probe in probes:  # optional field: probes may name the mechanism they test
            if probe.get("mechanism") and probe["mechanism"] not in mechanisms:
                mechanisms.append(probe["mechanism"])
    row = [task["id"], task["group"], task["category"], task.get("lang", "en"), mechanisms, file]
    return row, cells


def build_viewer(runs: Sequence[Path | str], out: Path | str) -> Path:
    """Write the site for one or more run folders into `out` (replaced whole) and return `out`; a folder of
    run folders (`run --seeds`) stands for its run folders, as with `report`."""
    run_dirs = expand_run_dirs(runs)
    if not run_dirs:
        raise ReportInputError("no run folder given")
    manifests = [read_manifest(path) for path in run_dirs]
    columns = _columns(run_dirs, manifests)
    target = Path(out)
    totals: dict[tuple[str, str], _Totals] = {}
    rows: list[list[Any]] = []
    cells: dict[str, list[str | None]] = {column.label: [] for column in columns}
    with staged_folder(target, ".viewer-") as staging:
        task_folder = staging / "data" / "tasks"
        task_folder.mkdir(parents=True)
        for file, pairs in _read_pairs(columns):
            row, codes = _index_row(file.removesuffix(".jsonl"), pairs)
            rows.append(row)
            for label in cells:
                cells[label].append(codes.get(label))
            for label, records in pairs.items():
                counts = _pair_counts(records)
                for group in (row[1], "all"):
                    totals.setdefault((label, group), _Totals()).add(row[0], counts)
            script = _script("task", _task_payload(pairs))
            (task_folder / f"{file.removesuffix('.jsonl')}.js").write_text(script, encoding="utf-8")
        index = {
            "runs": [
                {"path": str(path), "manifest": {k: v for k, v in manifest.items() if k != "tasks"}}
                | {"tasks": {k: v for k, v in manifest.get("tasks", {}).items() if k != "files"}}
                for path, manifest in zip(run_dirs, manifests, strict=True)
            ],
            "columns": [{"label": c.label, "run": c.run, "arm": c.arm} for c in columns],
            "summary": [
                {"column": label, "group": group, **total.counts, "ci": total.cis()}
                for (label, group), total in totals.items()
            ],
            "failure_codes": list(FAILURE_CODES),  # the order of the summary's failure table
            "tasks": rows,
            "cells": cells,
        }
        (staging / "data" / "index.js").write_text(_script("index", index), encoding="utf-8")
        assets = resources.files("reports.viewer") / "assets"
        for name in ASSETS:
            with resources.as_file(assets / name) as source:
                shutil.copyfile(source, staging / name)
    return target
