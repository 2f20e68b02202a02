"""`amnesia-bench import locomo|longmemeval PATH --out DIR`: public datasets into task sets.

The conversion lives in the task vocabulary (`tasks.importers`); this module only parses the options and
prints what was written."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from amnesia.durations import parse_duration
from tasks.errors import BadInput

_TTL_HELP = (
    "The ttl WRITTEN into every imported memory (the datasets carry none): none (ttl: never, so no arm "
    "forgets by time), default (no ttl: each arm's default, 30d for amnesia), "
    "fixed:<duration> (e.g. fixed:30d), or by-kind:<kind>=<duration>,... "
    "(e.g. by-kind:fact=90d,episode=14d). "
    "Not the amnesia arm's ttl_policy option, which overrides ttls at run time."
)
TtlPolicy = Annotated[str, typer.Option("--ttl-policy", help=_TTL_HELP)]
Out = Annotated[Path, typer.Option("--out", help="Output folder (must not exist or be empty).")]
Limit = Annotated[int | None, typer.Option("--limit", help="Import only the first N items (sorted by id).")]


def _limit(limit: int | None) -> int | None:
    if limit is not None and limit < 1:
        raise BadInput(f"--limit: expected a positive number, got {limit}")
    return limit


def register(app: typer.Typer) -> None:
    import_app = typer.Typer(
        help="Convert a public long-conversation dataset into a task set (with a manifest).",
        no_args_is_help=True,
    )
    app.add_typer(import_app, name="import")

    @import_app.command("locomo")
    def locomo_command(
        path: Annotated[
            Path, typer.Argument(help="A folder of LoCoMo JSON files, one file, or locomo10.json.")
        ],
        out: Out,
        ttl_policy: TtlPolicy = "none",
        ask_after: Annotated[
            str, typer.Option("--ask-after", help="When the questions are asked, after the last session.")
        ] = "0s",
        limit: Limit = None,
    ) -> None:
        """LoCoMo: one task per conversation; observations become memories, qa items become probes."""
        from tasks.importers.common import parse_ttl_policy  # here: the other commands start without them
        from tasks.importers.locomo import import_locomo

        try:
            delay = parse_duration(ask_after, field="--ask-after")
        except ValueError as error:
            raise BadInput(str(error)) from None
        manifest, totals = import_locomo(path, out, parse_ttl_policy(ttl_policy), delay, _limit(limit))
        typer.echo(
            f"{totals['tasks']} tasks ({totals['memories']} memories, {totals['probes']} probes) written to "
            f"{out} ({manifest.name} records the source, license, citation and content hash)"
        )

    @import_app.command("longmemeval")
    def longmemeval_command(
        path: Annotated[Path, typer.Argument(help="A LongMemEval JSON file (longmemeval_s.json, ...).")],
        out: Out,
        ttl_policy: TtlPolicy = "none",
        question_type: Annotated[
            list[str] | None,
            typer.Option(
                "--question-type", metavar="TYPE", help="Keep only this question type (repeatable)."
            ),
        ] = None,
        limit: Limit = None,
    ) -> None:
        """LongMemEval: one task per question; session turns become memories; knowledge updates give stale
        probes."""
        from tasks.importers.common import parse_ttl_policy
        from tasks.importers.longmemeval import import_longmemeval

        manifest, totals = import_longmemeval(
            path, out, parse_ttl_policy(ttl_policy), tuple(question_type or ()), _limit(limit)
        )
        typer.echo(
            f"{totals['tasks']} tasks ({totals['memories']} memories; {totals['stale_probes']} of "
            f"{totals['knowledge_update']} knowledge-update probes with stale values) written to {out} "
            f"({manifest.name} records the source, license, citation and content hash)"
        )
