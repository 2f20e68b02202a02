"""Typed, validated arm options: each arm declares a frozen dataclass of options with defaults; bad
names or values raise ArmConfigError (a `tasks.errors.BadInput`) with one line naming the arm, the option and
the value (the run reports it with exit code 2)."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, TypeVar

from amnesia.durations import parse_duration
from tasks.errors import ArmConfigError

OptionsT = TypeVar("OptionsT")


def options_from(cls: type[OptionsT], arm: str, options: dict[str, Any]) -> OptionsT:
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise ArmConfigError(f"{arm}: unknown option {unknown[0]!r}; known: {', '.join(names)}")
    return cls(**options)


def check_int(arm: str, name: str, value: Any, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ArmConfigError(f"{arm}: option {name} must be an integer >= {minimum}, got {value!r}")
    return value


def check_number(
    arm: str, name: str, value: Any, *, minimum: float = 0.0, maximum: float | None = None
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise ArmConfigError(f"{arm}: option {name} must be a number >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ArmConfigError(f"{arm}: option {name} must be a number <= {maximum}, got {value!r}")
    return float(value)


def check_bool(arm: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArmConfigError(f"{arm}: option {name} must be true or false, got {value!r}")
    return value


def check_choice(arm: str, name: str, value: Any, choices: Iterable[str]) -> str:
    allowed = tuple(choices)
    if value not in allowed:
        raise ArmConfigError(f"{arm}: option {name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def check_duration(arm: str, name: str, value: Any) -> float | None:
    """A duration (`90d`, seconds) or None (= off)."""
    if value is None:
        return None
    return parse_duration(value, field=f"{arm}: option {name}")
