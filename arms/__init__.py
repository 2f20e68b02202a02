"""Memory policies ("arms") behind one protocol (`arms.base.Arm`), created by name from a lazy registry
(`arms.registry`): importing this package imports no arm."""

from arms.base import Arm, ArmBase, ArmContext, MemoryContext, SessionInfo
from arms.registry import ARMS, VARIANTS, available, create_arm, resolve

__all__ = [
    "ARMS",
    "VARIANTS",
    "Arm",
    "ArmBase",
    "ArmContext",
    "MemoryContext",
    "SessionInfo",
    "available",
    "create_arm",
    "resolve",
]
