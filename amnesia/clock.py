"""Clocks. The engine never reads the wall clock itself: every time comes from an injected clock.

Times are float seconds. `SystemClock` uses Unix time; `SimulatedClock` starts wherever it is told and only
moves when `advance`/`set` is called, so a benchmark can simulate days in milliseconds; `FileClock` reads the
time from a file, so a test can move the clock of a server running in another process.
"""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Protocol, runtime_checkable

from amnesia.errors import InvalidInput


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


class FileClock:
    """The time written in a file (Unix seconds, a decimal number), read at every call.

    For tests and replays of a process that runs on its own (`dsh-memory-forget mcp --clock-file PATH`): the
    test moves the server's clock by rewriting the file — atomically (write a temporary file, then rename it),
    so a read never sees half a number. Like every clock it never goes backwards: a smaller value is an error.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._last = -math.inf
        self.now()  # an unreadable or malformed file is refused up front, not at the first engine call

    def now(self) -> float:
        try:
            text = self.path.read_text(encoding="utf-8").strip()
        except (OSError, UnicodeDecodeError) as error:
            raise InvalidInput(f"{self.path}: cannot read the clock file ({type(error).__name__})") from None
        try:
            when = float(text)
        except ValueError:
            when = math.nan
        if not math.isfinite(when):
            raise InvalidInput(f"{self.path}: the clock file must hold a time in seconds, got {text[:40]!r}")
        if when < self._last:
            raise InvalidInput(f"{self.path}: the clock went backwards (from {self._last} to {when})")
        self._last = when
        return when
