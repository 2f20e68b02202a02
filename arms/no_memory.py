"""Arm A, `no-memory`: a cold start every session. It stores nothing and injects nothing, so the prompt holds
only the system text, the current session's history and the user text."""

from __future__ import annotations

from typing import Any

from arms.base import ArmBase
from tasks.errors import ArmConfigError


class NoMemoryArm(ArmBase):
    name = "no-memory"

    def __init__(self, **options: Any) -> None:
        if options:
            raise ArmConfigError(f"no-memory: takes no options, got {', '.join(sorted(options))}")
        super().__init__()
