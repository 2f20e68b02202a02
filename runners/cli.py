"""`amnesia-bench`: validate, generate, run, report, check, rescore, compare.

Each command group lives in its own module and registers itself here, so the harness and the reports stay
separate packages (reports read only run folders)."""

from __future__ import annotations

import typer

from reports import cli as reports_cli
from runners import cli_run, cli_tasks

app = typer.Typer(
    name="amnesia-bench",
    help="Replay YAML task sets against memory policies (arms) on a simulated clock; report from the logs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
cli_tasks.register(app)
cli_run.register(app)
reports_cli.register(app)


def main() -> None:
    app()
