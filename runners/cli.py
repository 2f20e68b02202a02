"""`amnesia-bench`: validate, generate, run, report, check, rescore, compare.

Each command group lives in its own module and registers itself here, so the harness and the reports stay
separate packages (reports read only run folders)."""

from __future__ import annotations

import sys
from collections.abc import Sequence

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
EXIT_BAD_INPUT = 2
cli_tasks.register(app)
cli_run.register(app)
reports_cli.register(app)


def run(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code: usage errors and unreadable/unwritable paths become one
    `error: ...` line on stderr and exit code 2, never a traceback or a usage panel."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = typer.main.get_command(app)
    try:
        # No arguments at all: show the help (exit 0) rather than a usage error.
        result = command.main(args=args or ["--help"], prog_name=app.info.name, standalone_mode=False)
    except typer.Abort:
        return _fail("aborted")
    except typer.TyperException as exc:  # usage errors: unknown command/option, bad or missing value
        return _fail(exc.format_message())
    except OSError as exc:  # e.g. --out under a file, a path that is neither file nor folder
        return _fail(str(exc))
    return result if isinstance(result, int) else 0


def _fail(message: str) -> int:
    lines = message.strip().splitlines()
    print(f"error: {lines[0] if lines else 'invalid input'}", file=sys.stderr)
    return EXIT_BAD_INPUT


def main() -> None:
    sys.exit(run())
