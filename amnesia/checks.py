"""Argument checks shared by the engine's public methods. Each raises a one-line InvalidInput naming the field
and the value it got (never an item's content)."""

from __future__ import annotations

from typing import Any

from amnesia.errors import InvalidInput


def shown(text: object) -> str:
    """`text` as an error message may quote it and stay one line: bare when it is a printable word (no
    whitespace, no control or separator character), else in repr() form, which escapes every line break."""
    plain = str(text)
    if plain and plain.isprintable() and not any(char.isspace() for char in plain):
        return plain
    return repr(plain)


def check_choice(field_name: str, value: Any, choices: tuple[str, ...]) -> None:
    """`value` must be one of `choices`."""
    if value not in choices:
        raise InvalidInput(f"{field_name}: expected one of {', '.join(choices)}, got {value!r}")


def check_count(field_name: str, value: Any, *, minimum: int) -> None:
    """`value` must be an int (not a bool) >= `minimum` (0: non-negative, 1: positive)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        kind = "non-negative" if minimum == 0 else "positive"
        raise InvalidInput(f"{field_name}: expected a {kind} integer, got {value!r}")


def check_time(field_name: str, value: Any) -> None:
    """`value` must be a number of seconds (engine-clock time; not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(f"{field_name}: expected a time in seconds, got {value!r}")


def check_query(query: Any) -> None:
    """A search text: a string with something besides whitespace."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidInput("query: must be a non-empty string")
