"""What the dataset importers share: the written-ttl policy, input reading, and the output writer.

The **written-ttl policy** (`--ttl-policy` of `amnesia-bench import`) decides the `ttl` written into each
imported memory, because the public datasets carry none:

- `none` (the default): every memory is written with `ttl: never` — no ttl, so no arm forgets it by time
  (the amnesia arms' 30-day `default_ttl` does not apply; an arm option that overrides every writer's ttl,
  `ttl_policy: fixed:<d>`, still does, and arms whose forgetting never reads a ttl — memorybank's own
  curve, retrieval's usage eviction — keep their rule);
- `default`: no ttl is written; every arm applies its own default (the amnesia arm's `default_ttl`, 30 days);
- `fixed:<duration>`: every memory gets that ttl (`fixed:30d`);
- `by-kind:<kind>=<duration>,...`: by the memory's kind (`by-kind:fact=90d,episode=14d`); a kind not listed
  gets no ttl.

It is a property of the imported task set, recorded in each task's `origin.ttl_policy` and in the
manifest; it is not the amnesia arm's `ttl_policy` option, which overrides ttls at run time.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amnesia.durations import format_duration, parse_duration
from tasks.errors import BadInput
from tasks.load import KINDS
from tasks.writeset import write_task_set

MAX_INPUT_BYTES = 3 * 1024**3  # LongMemEval's largest file (M) is 2.75 GB and is read whole: beyond, refuse


class ImportInputError(BadInput):
    """A dataset file or an import option that cannot be converted (names the file, item and field)."""


@dataclass(frozen=True)
class WrittenTtlPolicy:
    """The ttl written into imported memories (see the module docstring); `spec` is the user's text."""

    spec: str
    fixed: float | None = None
    by_kind: tuple[tuple[str, float], ...] = ()

    def ttl_for(self, kind: str) -> str | None:
        """The ttl to write for a memory of `kind`: a duration string, `never`, or None (write no ttl)."""
        if self.spec == "none":
            return "never"
        if self.fixed is not None:
            return format_duration(self.fixed)
        seconds = dict(self.by_kind).get(kind)
        return None if seconds is None else format_duration(seconds)


def parse_ttl_policy(text: str) -> WrittenTtlPolicy:
    """`none`, `default`, `fixed:<duration>` or `by-kind:<kind>=<duration>,...` (ImportInputError naming the
    part)."""
    spec = text.strip()
    if spec in ("none", "default"):
        return WrittenTtlPolicy(spec)
    name, _, rest = spec.partition(":")
    try:
        if name == "fixed" and rest:
            return WrittenTtlPolicy(spec, fixed=_positive(rest))
        if name == "by-kind" and rest:
            pairs = []
            for part in rest.split(","):
                kind, eq, duration = part.partition("=")
                if not eq or kind.strip() not in KINDS:
                    raise ValueError(
                        f"expected <kind>=<duration> with a kind in {'|'.join(KINDS)}, got {part!r}"
                    )
                pairs.append((kind.strip(), _positive(duration)))
            return WrittenTtlPolicy(spec, by_kind=tuple(sorted(pairs)))
    except ValueError as error:
        raise ImportInputError(f"--ttl-policy: {error}") from None
    raise ImportInputError(
        "--ttl-policy: expected none, default, fixed:<duration> or by-kind:<kind>=<duration>,..., "
        f"got {text!r}"
    )


def _positive(text: str) -> float:
    seconds = parse_duration(text.strip(), field="ttl")
    if seconds <= 0:
        raise ValueError(f"ttl must be positive, got {text!r}")
    return seconds


def read_json(path: Path) -> Any:
    """The JSON document at `path`; ImportInputError (one line, naming the file) if unreadable."""
    size = path.stat().st_size
    if size > MAX_INPUT_BYTES:
        raise ImportInputError(f"{path}: {size} bytes is more than the importer reads ({MAX_INPUT_BYTES})")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as error:
        raise ImportInputError(f"{path}: invalid UTF-8 at byte {error.start}") from None
    except json.JSONDecodeError as error:
        raise ImportInputError(f"{path}:{error.lineno}: invalid JSON: {error.msg}") from None


def json_files(path: Path) -> list[Path]:
    """`path` itself if a file, else its *.json files (not recursive), sorted by name."""
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise ImportInputError(f"{path}: no such file or folder")
    files = sorted(p for p in path.glob("*.json") if p.is_file())
    if not files:
        raise ImportInputError(f"{path}: no *.json files")
    return files


def source_digest(files: list[Path]) -> str:
    """sha256 over the input files' names and bytes, in order: which copy of the dataset was imported."""
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.name.encode() + b"\0" + hashlib.sha256(file.read_bytes()).digest())
    return digest.hexdigest()


def require(mapping: Any, key: str, where: str, kind: type | tuple[type, ...]) -> Any:
    """`mapping[key]` checked to be of `kind`; ImportInputError naming `where.key` otherwise."""
    if not isinstance(mapping, dict) or key not in mapping:
        raise ImportInputError(f"{where}: {key}: missing")
    value = mapping[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        raise ImportInputError(f"{where}: {key}: expected {_names(kind)}, got {type(value).__name__}")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _names(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _as_tuple(kind))


def one_line(text: str) -> str:
    """`text` with its whitespace runs collapsed to single spaces (dataset text may hold newlines)."""
    return " ".join(str(text).split())


def write_import(files: dict[str, list[dict[str, Any]]], out: Path, manifest: dict[str, Any]) -> Path:
    """Write the imported set atomically (refusing a non-empty `out`) with its manifest; returns its path."""
    try:
        return write_task_set(files, out, manifest)
    except OSError as error:
        raise BadInput(f"--out: {error}") from None
