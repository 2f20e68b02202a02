"""Arm A, `no-memory`: a cold start every session. It stores nothing and injects nothing, so the prompt holds
only the system text, the current session's history and the user text."""

from __future__ import annotations

from typing import Any

from arms.base import ArmBase
from arms.registry import register_arm


@register_arm("no-memory")
class NoMemoryArm(ArmBase):
    name = "no-memory"

    def __init__(self, **options: Any) -> None:
        if options:
            raise ValueError(f"no-memory: takes no options, got {', '.join(sorted(options))}")
        super().__init__()
