"""`amnesia-bench cache stats | clear`: the on-disk response cache of real models (runners/models/cache)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from runners.models.envopts import public_url
from tasks.errors import BadInput


def _describe_identity(identity: str) -> str:
    """`base_url (serves model)` for an endpoint, `local` for an in-process model, `unkeyed (old)` for
    entries written before answers were keyed by endpoint (never served again)."""
    if not identity:
        return "unkeyed (old entries, never served)"
    parsed = json.loads(identity)
    if "base_url" not in parsed:
        return "local"
    served = parsed.get("served_model")
    shown = ", ".join(served) if isinstance(served, list) else served
    # public_url: caches written before base URLs were stored without their credentials may hold them.
    return public_url(str(parsed["base_url"])) + (f" (serves {shown})" if shown else "")


def register(app: typer.Typer) -> None:
    cache_app = typer.Typer(
        help="The response cache of real models: what it holds, and emptying it.", no_args_is_help=True
    )
    app.add_typer(cache_app, name="cache")

    @cache_app.command("stats")
    def stats_command() -> None:
        """Where the cache is, its size, and how many answers it holds per model and endpoint."""
        from runners.models.cache import ResponseCache, default_cache_path  # only here: 13 ms to import

        path = default_cache_path()
        if not path.exists():
            typer.echo(f"{path}: no cache yet (0 responses)")
            return
        entries = ResponseCache(path).entries()
        size = sum(part.stat().st_size for part in _files(path))
        total = sum(entry.responses for entry in entries)
        typer.echo(f"{path}: {total} responses, {size / 1e6:.1f} MB")
        for entry in entries:
            typer.echo(f"  {entry.responses:>8}  {entry.model}  @ {_describe_identity(entry.identity)}")

    @cache_app.command("clear")
    def clear_command(
        model: Annotated[
            str | None, typer.Option(help="Only this model's answers (as `stats` names it, e.g. openai:m).")
        ] = None,
        yes: Annotated[
            bool, typer.Option("--yes", "-y", help="Do not ask (needed without a terminal to ask on).")
        ] = False,
    ) -> None:
        """Delete the cached answers (all, or one model's) after asking; the next run asks the model again."""
        from runners.models.cache import ResponseCache, default_cache_path

        path = default_cache_path()
        if not path.exists():
            typer.echo(f"{path}: no cache yet, nothing to clear")
            return
        cache = ResponseCache(path)
        held = sum(entry.responses for entry in cache.entries() if model is None or entry.model == model)
        what = f"{held} responses" + (f" of {model}" if model else "") + f" from {path}"
        if not yes:
            if not _interactive():
                raise BadInput(
                    f"cache clear: would delete {what}; pass --yes to confirm (no terminal to ask)"
                )
            if not typer.confirm(f"Delete {what}?"):
                typer.echo("nothing deleted")
                return
        deleted = cache.clear(model)
        typer.echo(f"{path}: {deleted} responses deleted")


def _interactive() -> bool:
    """Whether a person can answer a question: standard input is a terminal."""
    return sys.stdin.isatty()


def _files(path: Path) -> list[Path]:
    """The cache file and its SQLite WAL companions."""
    return [p for p in (path, Path(f"{path}-wal"), Path(f"{path}-shm")) if p.exists()]
