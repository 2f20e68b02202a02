"""Sweeps: one YAML file names a grid — arms × arm-option values × seeds × models — and each point of the
grid becomes an ordinary run folder, `OUT/points/pNNN/`, so that everything a run can do (resume, shards,
Dask, `report`) a point can do too. `OUT/sweep.json` lists the points and their settings; the sweep report
(`reports.sweep`) puts every point's arms side by side.

```yaml
tasks: tasks/harmful          # a task file or folder, as `run --tasks` (relative to the working folder)
arms: [full-memory, amnesia]
grid:                         # arm.option: values; every combination is a point
  amnesia.default_curve: [flat, ebbinghaus]
seeds: [0, 1]
models: [scripted]            # optional (default: scripted)
budget: 2000                  # optional, as `run --budget`
group: harmful                # optional, as `run --group`
limit: 100                    # optional, as `run --limit`
```
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from amnesia_bench.api import run_options
from runners.runner import RunSummary, run
from tasks.errors import BadInput

SWEEP_FORMAT = 1
_KEYS = {"tasks", "arms", "grid", "seeds", "models", "budget", "group", "limit"}


@dataclass(frozen=True)
class Point:
    """One run of a sweep."""

    id: str  # pNNN, its folder under OUT/points/
    seed: int
    model: str
    options: dict[str, Any] = field(default_factory=dict)  # arm.option -> value


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep file."""

    tasks: Path
    arms: list[str]
    points: list[Point]
    budget: int = 2000
    groups: tuple[str, ...] = ()
    limit: int | None = None


def _fail(path: Path, field_name: str, problem: str) -> BadInput:
    return BadInput(f"{path}: {field_name}: {problem}")


def _list(path: Path, data: dict[str, Any], name: str, kind: type, default: list[Any]) -> list[Any]:
    value = data.get(name, default)
    if not isinstance(value, list) or not value:
        raise _fail(path, name, f"expected a non-empty list, got {value!r}")
    for element in value:
        if not isinstance(element, kind) or isinstance(element, bool):
            raise _fail(path, name, f"expected {kind.__name__} values, got {element!r}")
    if len(set(map(str, value))) != len(value):
        raise _fail(path, name, f"a value is listed twice in {value!r}")
    return value


def load_sweep(path: Path) -> Sweep:
    """Parse and check a sweep file; a `BadInput` naming the file and field for anything wrong."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise BadInput(f"{path}: cannot read the sweep file ({error.strerror})") from None
    except yaml.YAMLError as error:
        raise BadInput(f"{path}: not valid YAML: {str(error).splitlines()[0]}") from None
    if not isinstance(data, dict):
        raise BadInput(f"{path}: expected a mapping with tasks, arms, grid, seeds, models")
    unknown = sorted(set(map(str, data)) - _KEYS)
    if unknown:
        raise _fail(path, unknown[0], f"unknown field; expected one of {', '.join(sorted(_KEYS))}")
    if not isinstance(data.get("tasks"), str):
        raise _fail(path, "tasks", "expected a task file or folder")
    arms = _list(path, data, "arms", str, [])
    seeds = _list(path, data, "seeds", int, [0])
    models = _list(path, data, "models", str, ["scripted"])
    grid = data.get("grid") or {}
    if not isinstance(grid, dict):
        raise _fail(path, "grid", "expected a mapping arm.option: [values]")
    axes: list[list[tuple[str, Any]]] = []
    for key, values in grid.items():
        arm, dot, option = str(key).partition(".")
        if not dot or not option or arm not in arms:
            raise _fail(path, f"grid.{key}", "expected arm.option with an arm from `arms`")
        if not isinstance(values, list) or not values:
            raise _fail(path, f"grid.{key}", f"expected a non-empty list of values, got {values!r}")
        axes.append([(str(key), value) for value in values])
    combos = [dict(combo) for combo in itertools.product(*axes)]
    points = [
        Point(f"p{index:03d}", seed, model, options)
        for index, (model, seed, options) in enumerate(itertools.product(models, seeds, combos))
    ]
    budget, limit, group = data.get("budget", 2000), data.get("limit"), data.get("group")
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise _fail(path, "budget", f"expected a number of tokens, got {budget!r}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
        raise _fail(path, "limit", f"expected a number of tasks, got {limit!r}")
    if group is not None and not isinstance(group, str):
        raise _fail(path, "group", f"expected group names separated by commas, got {group!r}")
    groups = tuple(part.strip() for part in (group or "").split(",") if part.strip())
    return Sweep(Path(data["tasks"]), arms, points, budget, groups, limit)


def set_options(point: Point) -> list[str]:
    """The point's grid values as `--set arm.option=value` strings (JSON is YAML: the type survives)."""
    return [f"{key}={json.dumps(value)}" for key, value in point.options.items()]


def write_plan(sweep: Sweep, out: Path) -> Path:
    """OUT/sweep.json: the points and their settings (what the sweep report reads)."""
    out.mkdir(parents=True, exist_ok=True)
    plan = {
        "format": SWEEP_FORMAT,
        "tasks": str(sweep.tasks),
        "arms": sweep.arms,
        "points": [asdict(point) for point in sweep.points],
    }
    path = out / "sweep.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(plan, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def select_points(sweep: Sweep, wanted: list[str]) -> list[Point]:
    """The points named in `wanted` (ids like p003, or bare indices), all of them when it is empty."""
    if not wanted:
        return sweep.points
    by_id = {point.id: point for point in sweep.points}
    chosen = []
    for name in wanted:
        point_id = f"p{int(name):03d}" if name.isdigit() else name
        if point_id not in by_id:
            raise BadInput(f"--point: no point {name!r}; the sweep has p000..p{len(sweep.points) - 1:03d}")
        chosen.append(by_id[point_id])
    return chosen


def run_sweep(
    sweep: Sweep,
    out: Path,
    points: list[Point],
    *,
    workers: int = 1,
    shard: str | None = None,
    executor: str = "processes",
    progress: bool = False,
    announce: Callable[[Point, RunSummary], None] | None = None,
) -> list[RunSummary]:
    """Run (or continue: every point resumes) the chosen points into OUT/points/<id>/."""
    every = [
        run_options(
            sweep.tasks,
            sweep.arms,
            model=point.model,
            seed=point.seed,
            out=out / "points" / point.id,
            budget_tokens=sweep.budget,
            workers=workers,
            limit=sweep.limit,
            groups=sweep.groups,
            set_options=set_options(point),
            resume=True,
            progress=progress,
            shard=shard,
            executor=executor,
        )
        for point in points
    ]  # every point's options are checked before the first one runs
    write_plan(sweep, out)
    summaries = []
    for point, options in zip(points, every, strict=True):
        summary = run(options)
        summaries.append(summary)
        if announce is not None:
            announce(point, summary)
    return summaries
