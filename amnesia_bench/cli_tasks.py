"""`amnesia-bench validate` and `amnesia-bench generate`: the task-set commands."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated

import typer

from tasks.errors import BadInput
from tasks.spec import Task


def validate(
    path: Annotated[Path, typer.Argument(help="A task file or a folder (searched recursively).")],
    fairness: Annotated[
        bool,
        typer.Option(
            "--fairness",
            help="Also check that no arm's time rule is an oracle for the set (exit 1 if one is; "
            "tasks/README.md, 'How the tasks are kept fair').",
        ),
    ] = False,
    arms: Annotated[
        str,
        typer.Option(
            help="With --fairness: comma-separated arms to check (default: every arm that forgets by ttl)."
        ),
    ] = "",
    set_: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="ARM.OPTION=VALUE",
            help="With --fairness: arm.option=value (e.g. amnesia.ttl_policy=fixed:7d).",
        ),
    ] = None,
    seed: Annotated[
        int, typer.Option(help="With --fairness: the run seed a noisy ttl policy draws from.")
    ] = 0,
) -> None:
    """Check a task set; print every problem as file:line: field: problem (exit 2 if any)."""
    from tasks.load import GROUPS, read_task_set  # here: the other commands start without YAML

    tasks, errors = read_task_set(path)
    if errors:
        for error in errors:
            typer.echo(f"error: {error}", err=True)
        typer.echo(f"{len(errors)} error(s) in {path}", err=True)
        raise typer.Exit(code=2)
    counts = Counter(task.group for task in tasks)
    by_group = ", ".join(f"{group}: {counts.get(group, 0)}" for group in GROUPS)
    typer.echo(f"{sum(counts.values())} tasks OK ({by_group})")
    if fairness and not _fairness_report(path, tasks, arms, set_ or [], seed):
        raise typer.Exit(code=1)


def _fairness_report(path: Path, tasks: list[Task], arms: str, assignments: list[str], seed: int) -> bool:
    """Print each arm's wrong-side shares on the set; False when the set is an oracle for one of them."""
    from arms.base import time_rule_of
    from arms.registry import available
    from runners.armconfig import resolve_arm_specs
    from runners.runner import pair_seed
    from tasks.fairness import fairness_lines, oracle_problem, value_fates

    names = [name.strip() for name in arms.split(",") if name.strip()] or available()
    specs = resolve_arm_specs(names, None, assignments)
    rules = {spec.name: time_rule_of(spec.build()) for spec in specs}
    untimed = [name for name, rule in rules.items() if rule is None]
    typer.echo(
        f"fairness of {path}: per arm, the probe values time alone puts on its wrong side "
        "(an expected value hidden before its probe, a stale or poison value still shown)"
    )
    oracles = []
    for name, rule in rules.items():
        if rule is None:
            continue
        fates = value_fates(tasks, rule, lambda task_id: pair_seed(seed, task_id))
        typer.echo(name)
        for line in fairness_lines(rule, fates):
            typer.echo(line)
        oracles += [name] if oracle_problem(fates) else []
    if untimed:
        typer.echo(f"not checked (they do not forget by the writer's ttl): {', '.join(untimed)}")
    if oracles:
        typer.echo(f"fairness: the set acts as an oracle for {', '.join(oracles)} (rule: tasks/README.md)")
        return False
    typer.echo("fairness: no arm's time rule is an oracle for this set (rule: tasks/README.md)")
    return True


def generate_command(
    group: Annotated[str, typer.Option("--group", help="helpful, harmful, mixed, or all (n per group).")],
    n: Annotated[int, typer.Option("--n", help="Tasks to generate per group.")],
    out: Annotated[Path, typer.Option("--out", help="Output folder (must not exist or be empty).")],
    seed: Annotated[int, typer.Option("--seed", help="Same seed, same tasks.")] = 0,
    ttl_noise: Annotated[
        float,
        typer.Option(
            "--ttl-noise",
            help="Sigma of a seeded log-normal factor on every written ttl (0 = none; same seed, same ttls).",
        ),
    ] = 0.0,
    horizon: Annotated[
        str | None,
        typer.Option(
            "--horizon",
            help="week, month or quarter: stretch every task to that span with about 3, 9 or 15 memory "
            "mutations per probe (the realised density goes into MANIFEST.json).",
        ),
    ] = None,
    mechanisms: Annotated[
        str | None,
        typer.Option(
            "--mechanisms", help="Comma-separated mechanisms: only scenarios whose probes test them."
        ),
    ] = None,
) -> None:
    """Write seeded procedural tasks of every category, plus MANIFEST.json with a content hash."""
    from tasks.generate import HORIZONS, MAX_TTL_NOISE, generate, horizon_density, write_generated
    from tasks.load import GROUPS
    from tasks.spec import MECHANISMS

    if group != "all" and group not in GROUPS:
        raise BadInput(f"--group: expected one of {'|'.join(GROUPS)}|all, got {group!r}")
    if n < 1:
        raise BadInput(f"--n: expected a positive number of tasks, got {n}")
    if not 0.0 <= ttl_noise <= MAX_TTL_NOISE:
        raise BadInput(f"--ttl-noise: expected a sigma between 0 and {MAX_TTL_NOISE}, got {ttl_noise}")
    if horizon is not None and horizon not in HORIZONS:
        raise BadInput(f"--horizon: expected one of {'|'.join(HORIZONS)}, got {horizon!r}")
    chosen = [name.strip() for name in mechanisms.split(",")] if mechanisms is not None else None
    for name in chosen or ():
        if name not in MECHANISMS:
            raise BadInput(f"--mechanisms: expected names from {'|'.join(MECHANISMS)}, got {name!r}")
    groups = list(GROUPS) if group == "all" else [group]
    tasks = [
        task
        for name in groups
        for task in generate(name, n, seed, ttl_noise=ttl_noise, horizon=horizon, mechanisms=chosen)
    ]
    if not tasks:
        raise BadInput(f"--mechanisms: no generated scenario of --group {group} tests {mechanisms}")
    meta = {"seed": seed, "groups": groups, "n_per_group": n, "ttl_noise": ttl_noise, "horizon": horizon,
            "mechanisms": chosen, "density": horizon_density(tasks)}  # fmt: skip
    try:
        manifest = write_generated(tasks, out, meta=meta)
    except OSError as exc:
        raise BadInput(f"--out: {exc}") from None
    typer.echo(f"{len(tasks)} tasks written to {out} ({manifest.name} records the content hash)")


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
    app.command("generate")(generate_command)
