"""Arms are registered by name. Adding a policy is one file in arms/ with `@register_arm("name")` on its class
(and one import line in arms/__init__.py). Named variants (presets) are a base arm plus options, from code
(`register_variant`) or from a YAML arm config file (see runners.armconfig)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from arms.base import Arm

ArmFactory = Callable[..., Arm]
_F = TypeVar("_F", bound=ArmFactory)

_FACTORIES: dict[str, ArmFactory] = {}
_VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {}


class UnknownArmError(ValueError):
    pass


def register_arm(name: str) -> Callable[[_F], _F]:
    def decorator(factory: _F) -> _F:
        if name in _FACTORIES or name in _VARIANTS:
            raise ValueError(f"arm {name!r} is already registered")
        _FACTORIES[name] = factory
        return factory

    return decorator


def register_variant(name: str, base: str, options: dict[str, Any]) -> None:
    """A named preset: `base` arm with `options` (e.g. amnesia with renewal switched off)."""
    if name in _FACTORIES or name in _VARIANTS:
        raise ValueError(f"arm {name!r} is already registered")
    _VARIANTS[name] = (base, dict(options))


def resolve(name: str, overrides: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
    """(base factory name, merged options) for an arm or variant name."""
    options: dict[str, Any] = {}
    seen = set()
    while name in _VARIANTS:
        if name in seen:
            raise UnknownArmError(f"arm variant cycle at {name!r}")
        seen.add(name)
        name, variant_options = _VARIANTS[name]
        options = {**variant_options, **options}
    if name not in _FACTORIES:
        raise UnknownArmError(f"unknown arm {name!r}; known: {', '.join(available())}")
    return name, {**options, **(overrides or {})}


def create_arm(name: str, overrides: dict[str, Any] | None = None) -> Arm:
    base, options = resolve(name, overrides)
    arm = _FACTORIES[base](**options)
    arm.name = name
    return arm


def available() -> list[str]:
    return sorted({*_FACTORIES, *_VARIANTS})
