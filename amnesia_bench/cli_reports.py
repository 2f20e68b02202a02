"""`amnesia-bench report | view | check | compare | rescore`: the reports side of the CLI (run folders only).

Bad input (missing/corrupt run folder, malformed `--max` spec) raises `ReportInputError`; `amnesia_bench.cli`
turns it into one line on stderr and exit code 2."""

from __future__ import annotations

import functools
import gc
from pathlib import Path
from typing import Annotated, Literal

import typer

from tasks.errors import ReportInputError

FigureStyleChoice = Literal["report", "paper", "paper-wide"]  # the keys of reports.figures.STYLES
PrimaryChoice = Literal["rules", "judge"]  # reports.judging.PRIMARIES
# `report` and `run` alike; the environment variable lets a CI job (or a test session) set it once.
FIGURES_OPTION = typer.Option(
    "--figures/--no-figures",
    envvar="AMNESIA_REPORT_FIGURES",
    help="Draw the figures (PNG + SVG); --no-figures writes the tables and report.md only (faster, e.g. for "
    "a CI gate). Env: AMNESIA_REPORT_FIGURES=0.",
)


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_command(
        runs: Annotated[
            list[Path],
            typer.Argument(help="Run folder(s); seeds of one design are pooled."),
        ],
        out: Annotated[Path | None, typer.Option(help="Output folder (default: FIRST_RUN/report).")] = None,
        resamples: Annotated[int, typer.Option(help="Bootstrap resamples for the CIs.")] = 2000,
        timeline_task: Annotated[str | None, typer.Option(help="Task id for the strength timeline.")] = None,
        reference: Annotated[
            list[str] | None,
            typer.Option(metavar="ARM", help="Also compare every arm with this arm, paired (repeatable)."),
        ] = None,
        progress: Annotated[bool, typer.Option(help="One line per phase on stderr.")] = True,
        arms: Annotated[
            str | None,
            typer.Option(help="Only these arms, in this order, in every table and figure: a,b,c."),
        ] = None,
        figure_style: Annotated[
            FigureStyleChoice,
            typer.Option(
                help="report (each figure its own size), paper (one column, 3.5 in), paper-wide (7 in)."
            ),
        ] = "report",
        primary: Annotated[
            PrimaryChoice,
            typer.Option(help="Whose verdicts the tables count: the scoring rules', or the --judge model's."),
        ] = "rules",
        figures: Annotated[bool, FIGURES_OPTION] = True,
    ) -> None:
        """Write summary.csv, per_task.csv, report.md and figures (PNG + SVG) from session logs."""
        from reports.figurepool import WORKERS, FigurePool

        chosen = [arm.strip() for arm in arms.split(",")] if arms is not None else []
        if arms is not None and (not all(chosen) or len(set(chosen)) != len(chosen)):
            raise ReportInputError(f"--arms: expected distinct arm names separated by commas, got {arms!r}")

        # The log reader starts first and reads while the report imports pandas and scipy; the figure
        # workers are forked once pandas is imported (they inherit it), and import matplotlib while the
        # report imports its own modules.
        # The collector: the imports make objects that live to the end, and the collections made meanwhile
        # find almost nothing (a 900-task report: 324 objects in the 160 collections of its imports, for
        # 0.05 s), so it is off until the report's modules are imported, and so in the log reader forked
        # meanwhile (it collected nothing: its lists of values hold no cycles, and it ends once they are
        # sent). What is alive at each fork and after the imports is frozen, as the gc module's
        # documentation advises before a fork: later collections, here and in the forked processes, skip
        # it, and its pages stay shared (the figure workers freeze their own imports, then collect: figures
        # are cycles). The collector is left as found at the end, for a report run inside a longer process
        # (the tests' CliRunner).
        collecting = gc.isenabled()
        gc.disable()
        gc.freeze()
        try:
            with FigurePool(WORKERS if figures else 0, read=runs, style=figure_style) as pool:
                import pandas  # noqa: F401

                gc.freeze()
                pool.start()
                from reports.build import build_report

                gc.freeze()
                if collecting:
                    gc.enable()
                target = build_report(
                    runs,
                    out=out,
                    resamples=resamples,
                    timeline_task=timeline_task,
                    references=reference or (),
                    progress=progress,
                    pool=pool,
                    arms=chosen,
                    primary=primary,
                    figures=figures,
                )
        finally:
            gc.unfreeze()
            if collecting:
                gc.enable()
        typer.echo(f"report written to {target}")

    @app.command("view")
    def view_command(
        runs: Annotated[
            list[Path],
            typer.Argument(help="Run folder(s), or folders of runs, to browse together."),
        ],
        out: Annotated[Path | None, typer.Option(help="Site folder (default: FIRST_RUN/view).")] = None,
    ) -> None:
        """Write a static site to browse the runs: open OUT/index.html from disk (no server, no network)."""
        from reports.viewer import build_viewer

        target = build_viewer(runs, out if out is not None else runs[0] / "view")
        typer.echo(f"viewer written to {target / 'index.html'}")

    @app.command("check")
    def check_command(
        run: Annotated[Path, typer.Argument(help="Run folder (or a summary.csv).")],
        max_: Annotated[
            list[str] | None, typer.Option("--max", metavar="SPEC", help="metric:arm:group=limit (<=).")
        ] = None,
        min_: Annotated[
            list[str] | None, typer.Option("--min", metavar="SPEC", help="metric:arm:group=limit (>=).")
        ] = None,
        baseline: Annotated[
            Path | None, typer.Option(help="Baseline run folder, its report folder or its per_task.csv.")
        ] = None,
        tolerance: Annotated[
            float, typer.Option(help="Allowed worsening: rates in absolute terms, tokens relative.")
        ] = 0.02,
        metric: Annotated[
            list[str] | None,
            typer.Option(
                metavar="METRIC", help="Metrics compared to the baseline (default: all gated ones)."
            ),
        ] = None,
        resamples: Annotated[int, typer.Option(help="Bootstrap resamples and random sign flips.")] = 2000,
        alpha: Annotated[
            float,
            typer.Option(help="Fail a worsening beyond --tolerance when its one-sided p is below this."),
        ] = 0.05,
        max_drop: Annotated[
            float | None,
            typer.Option(help="Fail any worsening beyond this, whatever its p (units as --tolerance)."),
        ] = None,
    ) -> None:
        """CI gate: exit 0 (a PASS line) when every limit holds and nothing got worse than the baseline on
        the shared tasks (one-sided test, docs/reports.md), 1 with one FAIL line per violation, 2 on bad
        input. The first lines say how many tasks were paired and the smallest worsening they could detect."""
        from reports.gate import check

        outcome = check(
            run,
            maxima=max_ or [],
            minima=min_ or [],
            baseline=baseline,
            tolerance=tolerance,
            metrics=metric,
            resamples=resamples,
            alpha=alpha,
            max_drop=max_drop,
        )
        for line in outcome.lines():
            typer.echo(line)
        raise typer.Exit(code=1 if outcome.violations else 0)

    @app.command("compare")
    def compare_command(
        run_a: Annotated[Path, typer.Argument(help="Run folder A (e.g. the old config).")],
        run_b: Annotated[Path, typer.Argument(help="Run folder B (e.g. the new config).")],
        out: Annotated[Path | None, typer.Option(help="Folder for compare.csv/.md (default: print).")] = None,
        resamples: Annotated[int, typer.Option(help="Bootstrap resamples.")] = 2000,
        arm: Annotated[
            list[str] | None, typer.Option(metavar="ARM", help="Only this arm (repeatable).")
        ] = None,
        metric: Annotated[
            list[str] | None,
            typer.Option(
                metavar="METRIC",
                help="Only this metric (repeatable): success_rate, stale_error_rate, "
                "poison_error_rate, false_forgetting_rate, context_tokens.",
            ),
        ] = None,
    ) -> None:
        """The configuration fields that differ between two runs, then the same tables side by side, with
        paired differences (B - A) on shared tasks."""
        from reports.compare import compare_runs

        result = compare_runs(
            run_a, run_b, out=out, resamples=resamples, arms=arm or (), metrics=metric or ()
        )
        typer.echo(result.markdown)

    @app.command("rescore")
    def rescore_command(
        run: Annotated[Path, typer.Argument(help="Run folder whose probes are re-classified.")],
        out: Annotated[Path | None, typer.Option(help="Output run folder (default: RUN/rescored).")] = None,
        force: Annotated[bool, typer.Option("--force", help="Replace an existing output folder.")] = False,
        judge: Annotated[
            str | None,
            typer.Option(
                metavar="SPEC",
                help="A model (any --model spec) that also classifies each probe answer (docs/scoring.md).",
            ),
        ] = None,
    ) -> None:
        """Re-classify every probe from its logged answer with current scoring; original logs stay as-is."""
        from reports.rescore import rescore_run

        replaced = force and (out if out is not None else run / "rescored").exists()
        if judge is None:
            result = rescore_run(run, out=out, force=force)
        else:
            from runners.judging import judge_description, judge_fields, judge_model

            ask = functools.partial(judge_fields, judge_model(judge))
            noted = judge_description(judge)
            result = rescore_run(run, out=out, force=force, judge=ask, judge_manifest=noted)
        typer.echo(
            f"{result.changed} of {result.probes} probes changed classification; rescored run: {result.out}"
            + (" (replaced the earlier one)" if replaced else "")
        )
