"""Sweeps: one YAML file names a grid — arms × arm-option values × run settings × seeds × models — and each
point of the grid becomes an ordinary run folder, `OUT/points/pNNN/`, so that everything a run can do (resume,
shards, Dask, `report`) a point can do too. `OUT/sweep.json` lists the points and their settings; the sweep
report (`reports.sweep`) pools each configuration's seeds and pairs its arms against a reference arm.

```yaml
tasks: tasks/harmful          # a task file or folder, as `run --tasks` (relative to the working folder)
arms: [full-memory, amnesia]
grid:                         # every combination is a point
  amnesia.default_curve: [flat, ebbinghaus]   # arm.option: values (as `run --set`)
  budget: [500, 2000]         # run settings too: budget (tokens), tasks (task files or folders)
seeds: [0, 1]
models: [scripted]            # optional (default: scripted)
arm_config: arms.yaml         # optional, as `run --arm-config`
budget: 2000                  # optional, as `run --budget` (when the grid has no budget)
group: harmful                # optional, as `run --group`
limit: 100                    # optional, as `run --limit`
```

A **shared arm** is one that no `arm.option` of the grid touches (`full-memory` above): its run is the same
at every point of one seed, model and run settings, so it runs once, at the first such point (its holder),
and the other points link its finished logs (`RunOptions.shared_logs`): each point folder stays a whole run
folder whose logs are what a plain `run` of that point writes. The plan names each point's holder.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

from amnesia_bench.api import run_options
from runners.runner import RunSummary, raise_if_failed, run
from tasks.errors import BadInput

SWEEP_FORMAT = 2
_KEYS = {"tasks", "arms", "grid", "seeds", "models", "arm_config", "budget", "group", "limit"}
# Run settings a grid may vary, beside arm options: name -> (type, what a value is)
RUN_AXES: dict[str, tuple[type, str]] = {"budget": (int, "a number of tokens"), "tasks": (str, "a task path")}


@dataclass(frozen=True)
class Point:
    """One run of a sweep."""

    id: str  # pNNN, its folder under OUT/points/
    seed: int
    model: str
    options: dict[str, Any] = field(default_factory=dict)  # grid key (arm.option, budget, tasks) -> value
    configuration: str = ""  # cNNN: the points of one model and grid values (they differ by seed only)
    shared: dict[str, str] = field(default_factory=dict)  # shared arm -> the point whose run of it is linked


@dataclass(frozen=True)
class Sweep:
    """A parsed sweep file."""

    tasks: Path | None  # None when the grid varies the task set
    arms: list[str]
    points: list[Point]
    budget: int = 2000
    groups: tuple[str, ...] = ()
    limit: int | None = None
    arm_config: Path | None = None
    shared_arms: list[str] = field(default_factory=list)  # arms no arm option of the grid touches


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


def _axis(path: Path, key: str, values: Any, arms: list[str]) -> list[tuple[str, Any]]:
    """One grid axis as (key, value) pairs, checked: an arm option of a listed arm, or a run setting."""
    arm, dot, option = key.partition(".")
    if not dot and key not in RUN_AXES:
        raise _fail(path, f"grid.{key}", f"expected arm.option or a run setting ({', '.join(RUN_AXES)})")
    if dot and (not option or arm not in arms):
        raise _fail(path, f"grid.{key}", "expected arm.option with an arm from `arms`")
    if not isinstance(values, list) or not values:
        raise _fail(path, f"grid.{key}", f"expected a non-empty list of values, got {values!r}")
    if not dot:
        kind, what = RUN_AXES[key]
        for value in values:
            if not isinstance(value, kind) or isinstance(value, bool) or (kind is int and value < 0):
                raise _fail(path, f"grid.{key}", f"expected {what}, got {value!r}")
    if len({json.dumps(value, sort_keys=True) for value in values}) != len(values):
        raise _fail(path, f"grid.{key}", f"a value is listed twice in {values!r}")
    return [(key, value) for value in values]


def _shared(points: list[Point], shared_arms: list[str]) -> list[Point]:
    """The points with their configuration id and, past the first point of each seed, model and run
    settings (the holder), the holder of every shared arm."""
    configurations: dict[tuple[str, str], str] = {}
    holders: dict[tuple[int, str, str], str] = {}
    found = []
    for point in points:
        settings = json.dumps(point.options, sort_keys=True)
        configuration = configurations.setdefault((point.model, settings), f"c{len(configurations):03d}")
        run_settings = json.dumps({k: v for k, v in point.options.items() if k in RUN_AXES}, sort_keys=True)
        holder = holders.setdefault((point.seed, point.model, run_settings), point.id)
        shared = {arm: holder for arm in shared_arms} if holder != point.id else {}
        found.append(dataclasses.replace(point, configuration=configuration, shared=shared))
    return found


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
    arms = _list(path, data, "arms", str, [])
    seeds = _list(path, data, "seeds", int, [0])
    models = _list(path, data, "models", str, ["scripted"])
    grid = data.get("grid") or {}
    if not isinstance(grid, dict):
        raise _fail(path, "grid", "expected a mapping arm.option: [values]")
    for name in ("tasks", "budget"):
        if name in grid and name in data:
            raise _fail(path, f"grid.{name}", f"{name} is given at the top level too; give it in one place")
    if "tasks" not in grid and not isinstance(data.get("tasks"), str):
        raise _fail(path, "tasks", "expected a task file or folder")
    axes = [_axis(path, str(key), values, arms) for key, values in grid.items()]
    combos = [dict(combo) for combo in itertools.product(*axes)]
    touched = {str(key).partition(".")[0] for key in grid if "." in str(key)}
    shared_arms = [arm for arm in arms if arm not in touched] if touched else []
    points = _shared(
        [
            Point(f"p{index:03d}", seed, model, options)
            for index, (model, seed, options) in enumerate(itertools.product(models, seeds, combos))
        ],
        shared_arms,
    )
    budget, limit, group, config = data.get("budget", 2000), data.get("limit"), data.get("group"), None
    if not isinstance(budget, int) or isinstance(budget, bool):
        raise _fail(path, "budget", f"expected a number of tokens, got {budget!r}")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool)):
        raise _fail(path, "limit", f"expected a number of tasks, got {limit!r}")
    if group is not None and not isinstance(group, str):
        raise _fail(path, "group", f"expected group names separated by commas, got {group!r}")
    if "arm_config" in data:
        if not isinstance(data["arm_config"], str):
            raise _fail(path, "arm_config", f"expected an arm-config file, got {data['arm_config']!r}")
        config = Path(data["arm_config"])
    groups = tuple(part.strip() for part in (group or "").split(",") if part.strip())
    tasks = Path(data["tasks"]) if "tasks" in data else None
    return Sweep(tasks, arms, points, budget, groups, limit, config, shared_arms)


def set_options(point: Point) -> list[str]:
    """The point's arm-option grid values as `--set arm.option=value` strings (JSON is YAML: the type
    survives)."""
    return [f"{key}={json.dumps(value)}" for key, value in point.options.items() if "." in key]


def point_settings(point: Point) -> str:
    """The point's grid values as `sweep plan` prints them: run settings as `run` flags, then `--set`s."""
    run_settings = [f"--{key} {value}" for key, value in point.options.items() if key in RUN_AXES]
    return " ".join([*run_settings, *set_options(point)])


def write_plan(sweep: Sweep, out: Path) -> Path:
    """OUT/sweep.json: the points and their settings (what the sweep report reads)."""
    out.mkdir(parents=True, exist_ok=True)
    plan = {
        "format": SWEEP_FORMAT,
        "tasks": None if sweep.tasks is None else str(sweep.tasks),
        "arms": sweep.arms,
        "shared_arms": sweep.shared_arms,
        "points": [asdict(point) for point in sweep.points],
    }
    path = out / "sweep.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(plan, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path


def select_points(sweep: Sweep, wanted: list[str]) -> list[Point]:
    """The points named in `wanted` (ids like p003, or bare indices), all of them when it is empty, in plan
    order (a shared arm's holder first)."""
    if not wanted:
        return sweep.points
    known = {point.id for point in sweep.points}
    chosen = set()
    for name in wanted:
        point_id = f"p{int(name):03d}" if name.isdigit() else name
        if point_id not in known:
            raise BadInput(f"--point: no point {name!r}; the sweep has p000..p{len(sweep.points) - 1:03d}")
        chosen.add(point_id)
    return [point for point in sweep.points if point.id in chosen]


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
    """Run (or continue: every point resumes) the chosen points into OUT/points/<id>/, in plan order, so that
    a shared arm's holder runs before the points that link its logs (a point run before its holder replays
    the shared arms itself: the same pairs, the same logs). `PairsFailed` after the last point when a model
    or arm backend error stopped a pair (running the sweep again replays only those)."""
    every = [
        dataclasses.replace(
            run_options(
                Path(point.options.get("tasks", sweep.tasks)),
                sweep.arms,
                model=point.model,
                seed=point.seed,
                out=out / "points" / point.id,
                budget_tokens=point.options.get("budget", sweep.budget),
                workers=workers,
                limit=sweep.limit,
                groups=sweep.groups,
                set_options=set_options(point),
                arm_config=sweep.arm_config,
                resume=True,
                progress=progress,
                shard=shard,
                executor=executor,
            ),
            shared_logs=tuple((arm, out / "points" / holder) for arm, holder in point.shared.items()),
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
    raise_if_failed(summaries)  # as `run`: a pair stopped by a model or arm backend error fails the sweep
    return summaries
