"""`run`, `load_run`, `build_report`: the harness as three functions (the CLI is a thin layer over them)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tasks.errors import BadInput

if TYPE_CHECKING:  # the runners are imported where a run is set up: `amnesia-bench report` needs none
    from reports.logread import RunData
    from runners.runner import RunOptions

DEFAULT_ARMS = ("no-memory", "full-memory", "amnesia")


def run_options(
    tasks: Path | str = "tasks",
    arms: Sequence[str] = DEFAULT_ARMS,
    *,
    model: str = "scripted",
    seed: int = 0,
    out: Path | str = "runs/default",
    budget_tokens: int = 2000,
    workers: int = 1,
    limit: int | None = None,
    groups: Sequence[str] = (),
    task_ids: Sequence[str] = (),
    set_options: Sequence[str] = (),
    arm_config: Path | str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    argv: Sequence[str] = (),
    limit_seed: int = 0,
    shard: str | None = None,
    executor: str = "processes",
    judge: str | None = None,
) -> RunOptions:
    """The validated `RunOptions` of a run (arm names, config file and `--set` strings resolved to arm specs);
    shared by `run` and the `amnesia-bench run` command. Raises `tasks.errors.BadInput` for a wrong input."""
    from runners.armconfig import resolve_arm_specs
    from runners.execute import Executor, parse_shard
    from runners.runner import RunOptions

    return RunOptions(
        tasks=Path(tasks),
        arms=resolve_arm_specs(list(arms), Path(arm_config) if arm_config else None, list(set_options)),
        model=model,
        seed=seed,
        out=Path(out),
        budget_tokens=budget_tokens,
        workers=workers,
        limit=limit,
        groups=tuple(groups),
        task_ids=tuple(task_ids),
        resume=resume,
        overwrite=overwrite,
        progress=progress,
        argv=list(argv),
        limit_seed=limit_seed,
        shard=parse_shard(shard) if shard is not None else None,
        executor=Executor.parse(executor).describe(),  # checked before anything is written
        judge=judge,
    )


def replicates(options: RunOptions, seeds: Sequence[int] = (), epochs: int = 1) -> list[RunOptions]:
    """The runs of `--seeds`/`--epochs`: one RunOptions per (seed, epoch), each into OUT/seed-S (and
    `-epoch-E` with several epochs) so that `report OUT` pools them as repeated measures of each task; with
    one seed and one epoch, `options` itself (seed replaced) into OUT."""
    if epochs < 1:
        raise BadInput(f"--epochs: expected at least 1, got {epochs}")
    seeds = list(seeds) or [options.seed]
    repeated = sorted({s for s in seeds if seeds.count(s) > 1})
    if repeated:
        raise BadInput(
            f"--seeds: seed {repeated[0]} given twice (a duplicate run would be refused by report)"
        )
    if len(seeds) == 1 and epochs == 1:
        return [replace(options, seed=seeds[0])]
    return [
        replace(
            options, seed=s, epoch=e, out=options.out / (f"seed-{s}" + (f"-epoch-{e}" if epochs > 1 else ""))
        )
        for s in seeds
        for e in range(epochs)
    ]


def run(
    tasks: Path | str = "tasks",
    arms: Sequence[str] = DEFAULT_ARMS,
    *,
    model: str = "scripted",
    seed: int = 0,
    out: Path | str = "runs/default",
    budget_tokens: int = 2000,
    workers: int = 1,
    limit: int | None = None,
    groups: Sequence[str] = (),
    task_ids: Sequence[str] = (),
    set_options: Sequence[str] = (),
    arm_config: Path | str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    report: bool = True,
    figures: bool = True,
    seeds: Sequence[int] = (),
    epochs: int = 1,
    limit_seed: int = 0,
    shard: str | None = None,
    executor: str = "processes",
    judge: str | None = None,
) -> Path:
    """Replay `tasks` (a file or folder) on every arm with `model`, write the run folder (logs + manifest)
    and, unless `report=False`, its report in OUT/report (without figures if `figures=False`); return the
    run folder. `set_options` are
    `arm.option=value` strings as with `--set`; `task_ids` selects tasks by id (as `--task-id`). An `out`
    that holds an earlier run's logs is refused unless `resume` (continue it) or `overwrite` (replace it).
    `shard="i/N"` runs only shard i of N of the pairs (stable hash; see runners.execute) and builds no
    report (report the folder after all shards), `executor="dask"` or `"dask=ADDRESS"` runs them on a Dask
    cluster (the `[dask]` extra). Raises `tasks.errors.BadInput` before writing anything when an input is
    wrong, and `tasks.errors.PairsFailed` (no report) when pairs stopped on a failed model call or arm
    backend. `judge`: a model spec whose verdict on each probe answer is logged beside the rules'
    (tasks.judge). `seeds`/`epochs` run every (seed, epoch) into OUT/seed-S[-epoch-E] (see `replicates`)
    and report them together."""
    from runners.runner import raise_if_failed
    from runners.runner import run as run_pairs

    options = run_options(
        tasks,
        arms,
        model=model,
        seed=seed,
        out=out,
        budget_tokens=budget_tokens,
        workers=workers,
        limit=limit,
        groups=groups,
        task_ids=task_ids,
        set_options=set_options,
        arm_config=arm_config,
        resume=resume,
        overwrite=overwrite,
        progress=progress,
        limit_seed=limit_seed,
        shard=shard,
        executor=executor,
        judge=judge,
    )
    raise_if_failed([run_pairs(replicate) for replicate in replicates(options, seeds, epochs)])
    if report and shard is None:  # a shard's report would cover a part of the pairs: report after all shards
        from reports.build import build_report

        build_report(options.out, figures=figures)
    return options.out


def load_run(*run_dirs: Path | str) -> RunData:
    """One or more run folders of the same design (e.g. several seeds) as tidy DataFrames (`RunData`:
    `tasks`, `calls`, `injections`, `probes`, `memory`), read strictly through the log schema."""
    from reports.logread import load_runs

    return load_runs(list(run_dirs))


def __getattr__(name: str) -> Any:
    """`build_report` (reports.build's), imported on first use: the reports' imports (pandas, matplotlib,
    scipy) would otherwise cost every command's start, `run --no-report` included."""
    if name == "build_report":
        from reports.build import build_report

        return build_report
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DEFAULT_ARMS", "load_run", "replicates", "run"]  # and build_report, see __getattr__
