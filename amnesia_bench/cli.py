"""`amnesia-bench`: validate, generate, import, run, sweep, report, check, rescore, compare.

Each command group lives in its own module and registers itself here, so the harness and the reports stay
separate packages (reports read only run folders)."""

from __future__ import annotations

import gc
import sys
from collections.abc import Sequence
from typing import Annotated

import typer
from typer.core import TyperGroup

from amnesia.cli_runner import run_app
from amnesia_bench import cli_cache, cli_import, cli_list, cli_run, cli_score, cli_sweep, cli_tasks
from amnesia_bench import cli_reports as reports_cli
from tasks.errors import HANDLED_ERRORS, HarnessError, RunInterrupted, exit_code, problems


class HarnessGroup(TyperGroup):
    """The one place where a handled error (`tasks.errors.HANDLED_ERRORS`: bad input, engine errors,
    unreadable or unwritable paths, failed services) becomes `error: ...` lines on stderr and the exit code
    `tasks.errors.exit_code` gives (2 bad input, 1 a failed service) — for every command; an interrupted run
    (Ctrl-C) says how far it got, without `error:`, and exits 130."""

    def invoke(self, ctx: typer.Context) -> object:
        try:
            return super().invoke(ctx)
        except HANDLED_ERRORS as error:
            label = "" if isinstance(error, RunInterrupted) else "error: "  # a user's stop is no error
            for line in problems(error):
                typer.echo(f"{label}{line}", err=True)
            if isinstance(error, HarnessError) and error.hint:
                typer.echo(f"hint: {error.hint}", err=True)
            raise typer.Exit(code=exit_code(error)) from None


app = typer.Typer(
    name="amnesia-bench",
    cls=HarnessGroup,
    help="Replay YAML task sets against memory policies (arms) on a simulated clock; report from the logs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: no `<bool>` beside every flag, "[dask]" shown as written
)


def _print_version(value: bool) -> None:
    if value:
        from amnesia_bench import __version__  # looked up only when asked (see amnesia_bench.__getattr__)

        typer.echo(f"amnesia-bench {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Replay YAML task sets against memory policies (arms) on a simulated clock; report from the logs."""


cli_tasks.register(app)
cli_import.register(app)
cli_run.register(app)
cli_sweep.register(app)
reports_cli.register(app)
cli_cache.register(app)
cli_list.register(app)
cli_score.register(app)


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code: usage errors and every handled error become `error: ...` lines
    on stderr (see `HarnessGroup`), never a traceback or a usage panel."""
    return run_app(app, argv, ())


def main() -> None:
    """The console script: run the CLI, then exit with its code.

    The objects still alive are frozen first (`gc.freeze`), so that the interpreter's exit does not collect
    them cycle by cycle: the modules a command imported (pandas, scipy, matplotlib...) are cycles of
    functions, classes and dicts, and collecting them took a tenth of a second or more of a report's
    wall time, for memory the operating system takes back at once. Nothing a command wrote depends on it:
    its files are closed by then, and `atexit` handlers run as before."""
    code = run()
    gc.freeze()
    sys.exit(code)


if __name__ == "__main__":  # `python -m amnesia_bench.cli ...` as the console script (it did nothing)
    main()
