"""`amnesia-bench run`: replay task sets against arms, then (by default) build the report.

Bad input (task set, arm config, `--set`, model spec, incompatible `--resume`) raises a
`tasks.errors.BadInput` before anything is written; `amnesia_bench.cli` prints it as one line and exits 2
(a model call that fails for good stops its pair only: the run goes on, then names the failed pairs in one
line and exits 1, without a report; `--resume` retries only those pairs)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from amnesia_bench.api import DEFAULT_ARMS, replicates, run_options
from amnesia_bench.cli_reports import FIGURES_OPTION
from runners.models.envopts import public_url
from tasks.errors import BadInput, TaskSetError

GROUP_NAMES = ("helpful", "harmful", "mixed")


def _parse_groups(value: str | None) -> tuple[str, ...]:
    if not value:
        return ()
    groups = tuple(part.strip() for part in value.split(",") if part.strip())
    unknown = [g for g in groups if g not in GROUP_NAMES]
    if unknown:
        raise BadInput(f"--group: unknown group {unknown[0]!r}; choose from {', '.join(GROUP_NAMES)}")
    return groups


def _parse_seeds(value: str | None) -> list[int]:
    if not value:
        return []
    seeds = []
    for part in (p.strip() for p in value.split(",")):
        try:
            seeds.append(int(part))
        except ValueError:
            raise BadInput(f"--seeds: expected comma-separated integers, got {part!r}") from None
    return seeds


def _without_secrets(argv: list[str]) -> list[str]:
    """argv for the manifest, with the --api-key value masked and every URL (--base-url) stripped of its
    credentials (`user:key@`, key query parameters)."""
    masked: list[str] = []
    for index, arg in enumerate(argv):
        if arg.startswith("--api-key="):
            arg = "--api-key=***"
        elif index > 0 and argv[index - 1] == "--api-key":
            arg = "***"
        elif "://" in arg:
            name, equals, value = arg.partition("=") if arg.startswith("--") else ("", "", arg)
            arg = name + equals + public_url(value)
        masked.append(arg)
    return masked


def _warn(line: str) -> None:
    typer.echo(f"warning: {line}", err=True)


def _build_report(run_dir: Path, figures: bool) -> None:
    from reports.build import build_report  # imported here: a run without the report step need not load it

    target = build_report(run_dir, figures=figures)
    typer.echo(f"report written to {target}")


def register(app: typer.Typer) -> None:
    @app.command("run")
    def run_command(
        tasks: Annotated[Path, typer.Option(help="Task file or folder.")] = Path("tasks"),
        arms: Annotated[str, typer.Option(help="Comma-separated arm names, or all.")] = ",".join(
            DEFAULT_ARMS
        ),
        model: Annotated[
            str,
            typer.Option(
                help="provider/model or provider:model: scripted, scripted/newest (also first, last, "
                "temporal, uniform), openai/<m>, gguf/<m> (amnesia-bench list models)."
            ),
        ] = ("scripted"),
        seed: Annotated[int, typer.Option(help="Run seed; each (arm, task) stream derives from it.")] = 0,
        seeds: Annotated[
            str | None,
            typer.Option(help="Several run seeds (e.g. 0,1,2), each into OUT/seed-S; replaces --seed."),
        ] = None,
        epochs: Annotated[
            int, typer.Option(help="Repeat each seed N times (epoch folded into each pair's seed).")
        ] = 1,
        out: Annotated[Path, typer.Option(help="Run folder.")] = Path("runs/default"),
        budget: Annotated[int, typer.Option(help="Token budget of the injected memory block.")] = 2000,
        workers: Annotated[int, typer.Option(help="Worker processes (Dask: LocalCluster workers).")] = 1,
        shard: Annotated[
            str | None,
            typer.Option(help="i/N: only shard i (0-based) of N of the (arm, task) pairs, by a stable hash."),
        ] = None,
        executor: Annotated[
            str,
            typer.Option(help="processes, or dask[=ADDRESS] (no address: a LocalCluster; the [dask] extra)."),
        ] = "processes",
        limit: Annotated[
            int | None,
            typer.Option(
                help="A balanced sample of N tasks (groups, then categories, take turns; after --group)."
            ),
        ] = None,
        limit_seed: Annotated[int, typer.Option(help="Seed of the --limit sample.")] = 0,
        group: Annotated[str | None, typer.Option(help="Only these groups (comma-separated).")] = None,
        task_id: Annotated[
            list[str] | None,
            typer.Option("--task-id", metavar="ID", help="Only this task (repeatable; after --group)."),
        ] = None,
        resume: Annotated[
            bool, typer.Option(help="Skip finished (arm, task) pairs; redo unfinished ones.")
        ] = False,
        overwrite: Annotated[
            bool, typer.Option(help="Replace the logs of an earlier run in --out (refused without it).")
        ] = False,
        arm_config: Annotated[Path | None, typer.Option(help="YAML: arm name -> {base, options}.")] = None,
        set_: Annotated[
            list[str] | None,
            typer.Option("--set", metavar="ARM.OPTION=VALUE", help="arm.option=value (repeatable)."),
        ] = None,
        judge: Annotated[
            str | None,
            typer.Option(
                metavar="SPEC",
                help="A model (any --model spec) that also classifies each probe answer, logged beside the "
                "rules' verdict (docs/scoring.md).",
            ),
        ] = None,
        report: Annotated[bool, typer.Option(help="Build the report after the run.")] = True,
        figures: Annotated[bool, FIGURES_OPTION] = True,
        progress: Annotated[bool, typer.Option(help="Progress bar on stderr.")] = True,
        base_url: Annotated[
            str | None, typer.Option(help="openai: endpoint (default $OPENAI_BASE_URL, else OpenAI's).")
        ] = None,
        api_key: Annotated[
            str | None, typer.Option(help="openai: key (default $OPENAI_API_KEY); never logged.")
        ] = None,
        max_connections: Annotated[
            int | None,
            typer.Option(min=1, help="openai: requests in flight per run, over all workers (default 4)."),
        ] = None,
        timeout: Annotated[
            float | None, typer.Option(min=0.001, help="openai: seconds per attempt (default 60).")
        ] = None,
        no_cache: Annotated[
            bool, typer.Option("--no-cache", help="Real models: bypass the on-disk response cache.")
        ] = False,
        cache_epoch: Annotated[
            int | None, typer.Option(help="Real models: cache epoch; a new epoch asks for fresh answers.")
        ] = None,
    ) -> None:
        """Replay every task on every arm on a simulated clock; logs go to OUT/logs, the manifest to OUT."""
        # The runners are imported here: the other commands (`report` above all) start without them.
        from runners.models.cache import default_cache_path
        from runners.models.envopts import apply_model_flags
        from runners.runner import raise_if_failed, run

        # Through the environment, so worker processes rebuilding the model from its spec see them too.
        apply_model_flags(
            base_url=base_url,
            api_key=api_key,
            max_connections=max_connections,
            timeout=timeout,
            no_cache=no_cache,
            cache_epoch=cache_epoch,
        )
        options = run_options(
            tasks,
            [a.strip() for a in arms.split(",") if a.strip()],
            model=model,
            seed=seed,
            out=out,
            budget_tokens=budget,
            workers=workers,
            limit=limit,
            groups=_parse_groups(group),
            task_ids=task_id or [],
            set_options=set_ or [],
            arm_config=arm_config,
            resume=resume,
            overwrite=overwrite,
            progress=progress,
            argv=_without_secrets(sys.argv[1:]),
            limit_seed=limit_seed,
            shard=shard,
            executor=executor,
            judge=judge,
        )
        summaries = []
        for replicate in replicates(options, _parse_seeds(seeds), epochs):
            try:
                summary = run(replicate, warn=_warn)
            except TaskSetError as error:
                if tasks == Path("tasks") and not tasks.exists():  # the default set is resolved from the cwd
                    error.hint = "run from the repository root, or pass --tasks PATH"
                raise
            typer.echo(
                f"{summary.pairs} pairs run, {summary.skipped} skipped, {summary.model_calls} model calls, "
                f"{summary.probes} probes in {summary.seconds:.1f}s -> {summary.out}"
            )
            if summary.cache_hits is not None:
                typer.echo(
                    f"response cache: {summary.cache_hits} hits, {summary.cache_misses} misses "
                    f"({default_cache_path()})"
                )
            summaries.append(summary)
        raise_if_failed(summaries)  # one line, exit 1, no report: the failed pairs wait for --resume
        if report and shard is not None:
            typer.echo("partial shard: run `amnesia-bench report` on the run folder after all shards")
        elif report:
            _build_report(out, figures)
