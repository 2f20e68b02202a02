"""`amnesia-bench sweep plan|run|report`: a grid of runs from one YAML file (amnesia_bench.sweep)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:  # imported by the commands: the other commands (`report` above all) start without them
    from amnesia_bench.sweep import Point
    from runners.runner import RunSummary


def register(app: typer.Typer) -> None:
    sweep = typer.Typer(help="A grid of runs (arms x arm options x seeds x models) from a YAML file.")
    app.add_typer(sweep, name="sweep")

    @sweep.command("plan")
    def plan_command(file: Annotated[Path, typer.Argument(help="The sweep file (YAML).")]) -> None:
        """List the points of a sweep: id, configuration, seed, model, run settings and --set options of each,
        and the point whose run of each shared arm (one no grid option touches) it links."""
        from amnesia_bench.sweep import load_sweep, point_settings

        for point in load_sweep(file).points:
            holders = sorted(set(point.shared.values()))
            shares = f"  (shares {', '.join(point.shared)} with {', '.join(holders)})" if holders else ""
            typer.echo(
                f"{point.id}  {point.configuration}  seed {point.seed}  {point.model}  "
                f"{point_settings(point)}".rstrip()
                + shares
            )

    @sweep.command("run")
    def run_command(
        file: Annotated[Path, typer.Argument(help="The sweep file (YAML).")],
        out: Annotated[Path, typer.Option(help="Sweep folder: OUT/points/<id>/ per point.")] = Path(
            "runs/sweep"
        ),
        point: Annotated[
            list[str] | None,
            typer.Option(metavar="POINT", help="Only this point (p003 or 3; repeatable). Default: all."),
        ] = None,
        shard: Annotated[
            str | None, typer.Option(help="i/N: only shard i of N of each point's (arm, task) pairs.")
        ] = None,
        workers: Annotated[int, typer.Option(help="Worker processes per point.")] = 1,
        executor: Annotated[str, typer.Option(help="processes, or dask[=ADDRESS].")] = "processes",
        progress: Annotated[bool, typer.Option(help="Progress bar on stderr.")] = True,
    ) -> None:
        """Run (or continue) the points of a sweep; each point is an ordinary run folder that resumes."""
        from amnesia_bench.sweep import load_sweep, run_sweep, select_points

        parsed = load_sweep(file)

        def announce(done: Point, summary: RunSummary) -> None:
            holders = ", ".join(sorted(set(done.shared.values())))
            linked = f" ({summary.shared} linked from {holders})" if summary.shared else ""
            typer.echo(
                f"{done.id}: {summary.pairs} pairs run, {summary.skipped} skipped{linked} "
                f"in {summary.seconds:.1f}s -> {summary.out}"
            )

        run_sweep(
            parsed,
            out,
            select_points(parsed, point or []),
            workers=workers,
            shard=shard,
            executor=executor,
            progress=progress,
            announce=announce,
        )

    @sweep.command("report")
    def report_command(
        out: Annotated[Path, typer.Argument(help="The sweep folder.")],
        resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples per CI.")] = 1000,
        reference: Annotated[
            str | None,
            typer.Option(
                help="Arm every other arm is paired against. Default: the first shared arm, if any."
            ),
        ] = None,
    ) -> None:
        """One table across the configurations, seeds pooled: success, stale errors and false forgetting per
        configuration and arm, each arm paired against the reference arm."""
        from reports.sweep import build_sweep_report  # imported here: running a sweep need not load pandas

        typer.echo(f"sweep report written to {build_sweep_report(out, resamples, reference)}")
