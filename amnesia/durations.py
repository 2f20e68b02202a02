"""Human durations: `15s`, `90m`, `2h30m`, `7d`, `1w`, `1d12h` (and plain numbers, read as seconds)."""

from __future__ import annotations

import math
import re
from functools import lru_cache

UNIT_SECONDS: dict[str, int] = {"w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*([wdhms])")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")  # plain seconds (matched whole)
_WHOLE = re.compile(r"^\s*(?:\d+(?:\.\d+)?\s*[wdhms]\s*)+$")
# Anything longer is almost certainly a typo (and overflows datetime arithmetic downstream).
MAX_DURATION_SECONDS = 100 * 365 * 86_400


def parse_duration(value: str | int | float, *, field: str = "duration") -> float:
    """Parse a duration into seconds; ValueError with a one-line message naming `field` and the value."""
    if isinstance(value, bool):
        raise ValueError(f"{field}: expected a duration like 15s, 2h30m, 7d or 1w, got {value!r}")
    if isinstance(value, (int, float)):
        try:
            seconds = float(value)
        except OverflowError:  # an int past float's range (10**400): certainly over the maximum
            raise ValueError(f"{field}: duration exceeds the 100-year maximum") from None
    elif isinstance(value, str):
        found = _string_seconds(value.strip().lower())
        if found is None:
            raise ValueError(f"{field}: expected a duration like 15s, 2h30m, 7d or 1w, got {value!r}")
        seconds = found
    else:
        raise ValueError(
            f"{field}: expected a duration like 15s, 2h30m, 7d or 1w, got {type(value).__name__}"
        )
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"{field}: duration must be a finite, non-negative number of seconds, got {value!r}")
    if seconds > MAX_DURATION_SECONDS:
        raise ValueError(f"{field}: duration {value!r} exceeds the 100-year maximum")
    return seconds


@lru_cache(maxsize=4096)  # a task set's writes use a handful of ttls: each is read once
def _string_seconds(text: str) -> float | None:
    """The seconds of a stripped, lower-cased duration text (None: it is not one)."""
    if _NUMBER.fullmatch(text):
        return float(text)
    if _WHOLE.match(text):
        return sum(float(number) * UNIT_SECONDS[unit] for number, unit in _PART.findall(text))
    return None


def format_duration(seconds: float) -> str:
    """Exact compact form, largest units first: 93784 -> '1d2h3m4s'. Sub-second remainders are rounded."""
    if seconds < 0:
        return "-" + format_duration(-seconds)
    remaining = round(seconds)
    if remaining == 0:
        return "0s"
    parts = []
    for unit in ("d", "h", "m", "s"):
        size = UNIT_SECONDS[unit]
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
