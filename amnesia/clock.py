"""Clocks. The engine never reads the wall clock itself: every time comes from an injected clock.

Times are float seconds. `SystemClock` uses Unix time; `SimulatedClock` starts wherever it is told and only
moves when `advance`/`set` is called, so a benchmark can simulate days in milliseconds.
"""

from __future__ import annotations

import time
from typing import Protocol, runtime_checkable


@runtime_checkable
class Clock(Protocol):
    def now(self) -> float:
        """Current time in seconds."""
        ...


class SystemClock:
    """Wall-clock time (Unix seconds). Only the CLI and real deployments use it."""

    def now(self) -> float:
        return time.time()


class SimulatedClock:
    """A clock that moves only when told to; it never goes backwards."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = float(start)

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> float:
        if seconds < 0:
            raise ValueError(f"cannot advance a clock by a negative duration ({seconds}s)")
        self._now += seconds
        return self._now

    def set(self, when: float) -> float:
        if when < self._now:
            raise ValueError(f"cannot move a clock backwards (from {self._now} to {when})")
        self._now = float(when)
        return self._now
