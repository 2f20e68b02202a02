"""Memory policies ("arms") behind one protocol (`arms.base.Arm`), created by name from a lazy registry
(`arms.registry`): importing this package imports no arm.

The public kit for writing an arm, here or in a file of your own (docs/harness.md): `ArmBase` (no-op hooks)
or `OwnStoreArm` (an arm with its own store: `self.memlog`, `self.now()`), `MemoryLog` (one call per memory
event: write, touch, forget, refused), `memory_line` and `fit_block` (the block's lines within the budget),
`scope_for`, `visible_to` and `forget_selects` (scopes and forget selectors as every arm reads them), and
`CompactionInfo`, the event of the `on_compaction_start` / `on_compaction_end` hooks."""

from arms.arm_kit import (
    MemoryLog,
    OwnStoreArm,
    fit_block,
    forget_selects,
    memory_line,
    scope_for,
    visible_to,
)
from arms.base import Arm, ArmBase, ArmContext, CompactionInfo, MemoryContext, SessionInfo
from arms.registry import ARMS, VARIANTS, available, create_arm, resolve

__all__ = [
    "ARMS",
    "VARIANTS",
    "Arm",
    "ArmBase",
    "ArmContext",
    "CompactionInfo",
    "MemoryContext",
    "MemoryLog",
    "OwnStoreArm",
    "SessionInfo",
    "available",
    "create_arm",
    "fit_block",
    "forget_selects",
    "memory_line",
    "resolve",
    "scope_for",
    "visible_to",
]
