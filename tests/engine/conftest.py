"""Fixtures shared by the engine tests."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from amnesia.errors import NotFound


def _apply_step(engine: Any, clock: Any, spec: dict[str, Any], target: str | None, number: int) -> Any:
    """Applies one drawn history step and returns the write's view (None for other steps): write note `number`
    (key, ttl, pin, scope, deadline from `spec`), forget, touch or promote `target` (when any item lives),
    advance the clock, sweep or select."""
    action = spec["action"]
    if action == "write":
        deadline = None if spec["pin"] or spec["deadline"] is None else clock.now() + spec["deadline"]
        return engine.remember(
            f"note {number} about {spec['key']}",
            ttl=spec["ttl"],
            key=spec["key"],
            pin=spec["pin"],
            scope=spec["scope"],
            owner_id="agent" if spec["scope"] == "session" else None,
            expires_at=deadline,
        )
    if action == "forget" and target:
        engine.forget(target)
    elif action == "touch" and target:
        engine.touch(target)
    elif action == "promote" and target:
        with contextlib.suppress(NotFound):  # it was due: promote forgot it instead
            engine.promote(target)
    elif action == "advance":
        clock.advance(spec["advance"])
    elif action == "sweep":
        engine.sweep()
    elif action == "select":
        engine.select_for_injection()
    return None


@pytest.fixture(scope="session")
def apply_step() -> Callable[[Any, Any, dict[str, Any], str | None, int], Any]:
    """The function that applies one drawn history step (session-scoped: hypothesis tests call it for every
    example)."""
    return _apply_step
