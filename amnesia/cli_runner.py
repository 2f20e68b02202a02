"""Runs a typer app the way both of this project's CLIs promise: bad input (usage errors and the given error
types) becomes one `error: ...` line on stderr and exit code 2 — never a traceback or a usage panel."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import typer

EXIT_BAD_INPUT = 2


def fail(message: str) -> int:
    lines = message.strip().splitlines()
    print(f"error: {lines[0] if lines else 'invalid input'}", file=sys.stderr)
    return EXIT_BAD_INPUT


def run_app(app: typer.Typer, argv: Sequence[str] | None, bad_input: tuple[type[BaseException], ...]) -> int:
    """Run `app` on `argv` (default: sys.argv[1:]) and return its exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    command = typer.main.get_command(app)
    try:
        # No arguments at all: show the help (exit 0) rather than a usage error.
        result = command.main(args=args or ["--help"], prog_name=app.info.name, standalone_mode=False)
    except typer.Abort:
        return fail("aborted")
    except typer.TyperException as exc:  # usage errors: unknown command/option, bad or missing value
        return fail(exc.format_message())
    except bad_input as exc:
        return fail(str(exc))
    return result if isinstance(result, int) else 0
