"""Synchronous engine events: "written", "forgotten", "injected", "touched" (small JSON-able dicts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from amnesia.errors import InvalidInput

if TYPE_CHECKING:
    from amnesia.item import MemoryItem
    from amnesia.views import Injection

EVENT_NAMES: tuple[str, ...] = ("written", "forgotten", "injected", "touched")
Listener = Callable[[dict[str, Any]], None]


class EventBus:
    def __init__(self) -> None:
        # The callbacks of each event, read-only outside: an empty list means nobody listens, and callers test
        # it (a C-level lookup, not a method call: every write asks) before they build a payload.
        self.listeners: dict[str, list[Listener]] = {name: [] for name in EVENT_NAMES}

    def on(self, event: str, callback: Listener) -> Callable[[], None]:
        """Subscribe; returns a callable that unsubscribes (idempotent)."""
        if event not in self.listeners:
            raise InvalidInput(f"event: expected one of {', '.join(EVENT_NAMES)}, got {event!r}")
        self.listeners[event].append(callback)

        def unsubscribe() -> None:
            if callback in self.listeners[event]:
                self.listeners[event].remove(callback)

        return unsubscribe

    def emit(self, event: str, payload: dict[str, Any]) -> None:
        for callback in list(self.listeners[event]):
            callback(payload)


def touched_payload(item: MemoryItem, reason: str, now: float) -> dict[str, Any]:
    """The `touched` event of a use ("inject", "recall" or "answer") that just renewed `item`."""
    return {
        "id": item.id,
        "strength": item.strength,
        "reason": reason,
        "at": now,
        "access_count": item.access_count,
        "ttl": item.ttl,
    }


def injected_payload(summary: dict[str, Any], injection: Injection) -> dict[str, Any]:
    """The `injected` event: the injection's summary (count, tokens, budget_tokens, at), items and block."""
    return {**summary, "items": [dict(ref) for ref in injection.items], "block": injection.block}
