"""`amnesia-bench`: validate, generate, run, report, check, rescore, compare.

Each command group lives in its own module and registers itself here, so the harness and the reports stay
separate packages (reports read only run folders)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

from amnesia.cli_runner import run_app
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


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code: usage errors and unreadable/unwritable paths (e.g. --out under a
    file) become one `error: ...` line on stderr and exit code 2, never a traceback or a usage panel."""
    return run_app(app, argv, (OSError,))


def main() -> None:
    sys.exit(run())
