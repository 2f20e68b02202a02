"""Fixtures shared by the engine tests."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest

from amnesia.errors import NotFound


def _apply_step(engine: Any, clock: Any, spec: dict[str, Any], target: str | None) -> None:
    """Applies one drawn step that is not a write: forget, touch or promote `target` (when any item lives),
    advance the clock, sweep or select."""
    action = spec["action"]
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


@pytest.fixture(scope="session")
def apply_step() -> Callable[[Any, Any, dict[str, Any], str | None], None]:
    """The function that applies a drawn history step other than a write (session-scoped: hypothesis tests
    call it for every example)."""
    return _apply_step
