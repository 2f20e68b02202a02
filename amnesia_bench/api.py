"""`run`, `load_run`, `build_report`: the harness as three functions (the CLI is a thin layer over them)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from reports.build import build_report
from reports.logread import RunData, load_runs
from runners.armconfig import resolve_arm_specs
from runners.runner import RunOptions
from runners.runner import run as run_pairs

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
    set_options: Sequence[str] = (),
    arm_config: Path | str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    argv: Sequence[str] = (),
) -> RunOptions:
    """The validated `RunOptions` of a run (arm names, config file and `--set` strings resolved to arm specs);
    shared by `run` and the `amnesia-bench run` command. Raises `tasks.errors.BadInput` for a wrong input."""
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
        resume=resume,
        overwrite=overwrite,
        progress=progress,
        argv=list(argv),
    )


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
    set_options: Sequence[str] = (),
    arm_config: Path | str | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    report: bool = True,
) -> Path:
    """Replay `tasks` (a file or folder) on every arm with `model`, write the run folder (logs + manifest)
    and, unless `report=False`, its report in OUT/report; return the run folder. `set_options` are
    `arm.option=value` strings as with `--set`. An `out` that holds an earlier run's logs is refused unless
    `resume` (continue it) or `overwrite` (replace it). Raises `tasks.errors.BadInput` before writing
    anything when an input is wrong."""
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
        set_options=set_options,
        arm_config=arm_config,
        resume=resume,
        overwrite=overwrite,
        progress=progress,
    )
    summary = run_pairs(options)
    if report:
        build_report(summary.out)
    return summary.out


def load_run(*run_dirs: Path | str) -> RunData:
    """One or more run folders of the same design (e.g. several seeds) as tidy DataFrames (`RunData`:
    `tasks`, `calls`, `injections`, `probes`, `memory`), read strictly through the log schema."""
    return load_runs(list(run_dirs))


__all__ = ["DEFAULT_ARMS", "build_report", "load_run", "run"]
