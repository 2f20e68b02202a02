"""Real-model settings travel in environment variables, so spawned worker processes (which rebuild the model
from its spec string) see the same settings as the parent, and no key ever lands in a spec or a manifest.

The `run` command's flags (`--base-url`, `--api-key`, `--max-connections`, `--timeout`, `--no-cache`,
`--cache-epoch`) set them through `apply_model_flags`; users may also export them directly.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TypeVar
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tasks.errors import ModelConfigError

BASE_URL = "OPENAI_BASE_URL"
API_KEY = "OPENAI_API_KEY"
MODEL = "AMNESIA_MODEL"
MAX_CONNECTIONS = "AMNESIA_MAX_CONNECTIONS"
TIMEOUT = "AMNESIA_TIMEOUT"
CACHE_PATH = "AMNESIA_CACHE"
NO_CACHE = "AMNESIA_NO_CACHE"
CACHE_EPOCH = "AMNESIA_CACHE_EPOCH"

_T = TypeVar("_T", int, float)
# Query parameters that carry a credential (Azure's `api-key`, Gemini's `key`, signed URLs' `sig`...).
_SECRET_QUERY = re.compile(
    r"(?:api[_-]?)?key|.*(?:token|secret|password|passwd|signature)|sig|auth|code", re.I
)
REDACTED = "REDACTED"


def public_url(url: str) -> str:
    """The URL as it may be stored or printed: without `user:password@` and with the values of credential
    query parameters replaced by REDACTED. Anything that does not parse as a URL is returned as it is."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return url
    if not parts.netloc:
        return url
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    netloc = host if port is None else f"{host}:{port}"
    query = parts.query
    if query:
        pairs = parse_qsl(query, keep_blank_values=True)
        if any(_SECRET_QUERY.fullmatch(name) for name, _ in pairs):
            query = urlencode(
                [(name, REDACTED if _SECRET_QUERY.fullmatch(name) else value) for name, value in pairs]
            )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def env_number(name: str, kind: Callable[[str], _T]) -> _T | None:
    """The variable parsed as a number, None when unset; a one-line ModelConfigError when malformed."""
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    try:
        return kind(raw)
    except ValueError:
        raise ModelConfigError(f"{name}: not a number: {raw!r}") from None


def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in {"1", "true", "yes", "on"}


def apply_model_flags(
    *,
    base_url: str | None = None,
    api_key: str | None = None,
    max_connections: int | None = None,
    timeout: float | None = None,
    no_cache: bool = False,
    cache_epoch: int | None = None,
) -> None:
    """Export the flags that were given (None/False leave the environment as it is)."""
    values = {
        BASE_URL: base_url,
        API_KEY: api_key,
        MAX_CONNECTIONS: max_connections,
        TIMEOUT: timeout,
        NO_CACHE: "1" if no_cache else None,
        CACHE_EPOCH: cache_epoch,
    }
    for name, value in values.items():
        if value is not None:
            os.environ[name] = str(value)
