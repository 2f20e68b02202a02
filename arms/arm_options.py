"""Typed, validated arm options: each arm declares a frozen dataclass of options with defaults; bad
names or values raise ArmConfigError (a `tasks.errors.BadInput`) with one line naming the arm, the option and
the value (the run reports it with exit code 2)."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from amnesia.durations import MAX_DURATION_SECONDS, parse_duration
from tasks.errors import ArmConfigError
from tasks.spec import NEVER

OptionsT = TypeVar("OptionsT")


def options_from(cls: type[OptionsT], arm: str, options: dict[str, Any]) -> OptionsT:
    names = [f.name for f in dataclasses.fields(cls)]  # type: ignore[arg-type]
    unknown = sorted(set(options) - set(names))
    if unknown:
        raise ArmConfigError(f"{arm}: unknown option {unknown[0]!r}; known: {', '.join(names)}")
    return cls(**options)


def check_int(arm: str, name: str, value: Any, *, minimum: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ArmConfigError(f"{arm}: option {name} must be an integer >= {minimum}, got {value!r}")
    return value


def check_number(
    arm: str, name: str, value: Any, *, minimum: float = 0.0, maximum: float | None = None
) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < minimum:
        raise ArmConfigError(f"{arm}: option {name} must be a number >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ArmConfigError(f"{arm}: option {name} must be a number <= {maximum}, got {value!r}")
    return float(value)


def check_bool(arm: str, name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ArmConfigError(f"{arm}: option {name} must be true or false, got {value!r}")
    return value


def check_choice(arm: str, name: str, value: Any, choices: Iterable[str]) -> str:
    allowed = tuple(choices)
    if value not in allowed:
        raise ArmConfigError(f"{arm}: option {name} must be one of {', '.join(allowed)}, got {value!r}")
    return value


def check_duration(arm: str, name: str, value: Any) -> float | None:
    """A duration (`90d`, seconds) or None (= off)."""
    if value is None:
        return None
    return parse_duration(value, field=f"{arm}: option {name}")


TTL_POLICY_FORMS = "task, fixed:<duration>, scaled:<factor> or noisy:<sigma>"
MAX_TTL_NOISE_SIGMA = 5.0  # a log-normal factor of e^±5 (150x) is already far past any realistic mis-set ttl


@dataclass(frozen=True)
class TtlPolicy:
    """How an arm turns the ttl a task's writer gave into the ttl it stores (`ttl_policy` option).

    - `task` (default): the writer's ttl, unchanged (absent = the arm's default ttl);
    - `fixed:<duration>`: ignore the writer: every non-pinned write gets this ttl;
    - `scaled:<factor>`: the writer's ttl (or the arm's default) times `factor`;
    - `noisy:<sigma>`: the writer's ttl (or the arm's default) times a log-normal factor e^N(0, sigma²), drawn
      from (pair seed, write index), so it is the same on every arm and every rerun of a (run seed, task).
      The model's own writes (tool calls) count in a stream of their own, so that a tool write never shifts
      the draws of the task's writes.

    Writers are the task's scripted writes and the model's tool writes (`amnesia_remember`) alike.

    It lets a run ask what happens when ttls are set the way people and agents really set them (one default
    for everything, systematically too short or too long, or just noisy) instead of by the task's author."""

    kind: str = "task"  # task | fixed | scaled | noisy
    value: float = 0.0  # seconds (fixed), factor (scaled) or sigma (noisy); unused for task

    @classmethod
    def parse(cls, arm: str, text: Any) -> TtlPolicy:
        """The policy for an option value like `fixed:7d`; ArmConfigError (one line) if it is not one."""
        problem = f"{arm}: option ttl_policy must be {TTL_POLICY_FORMS}, got {text!r}"
        if text is None or text == "task":
            return cls()
        if not isinstance(text, str) or ":" not in text:
            raise ArmConfigError(problem)
        kind, _, raw = text.partition(":")
        try:
            if kind == "fixed":
                value = parse_duration(raw, field="ttl_policy")
                valid = value > 0
            elif kind in ("scaled", "noisy"):
                value = float(raw)
                valid = math.isfinite(value) and (value > 0 if kind == "scaled" else value >= 0)
                valid = valid and (kind == "scaled" or value <= MAX_TTL_NOISE_SIGMA)
            else:
                valid, value = False, 0.0
        except ValueError:
            valid, value = False, 0.0
        if not valid:
            raise ArmConfigError(problem)
        return cls(kind, value)

    def apply(
        self, ttl: float | None, default_ttl: float, *, seed: int, write_index: int, stream: str = "task"
    ) -> float | None:
        """The ttl to store for one non-pinned write whose writer asked for `ttl` (None = no ttl given);
        `write_index` counts the writes of `stream` (`task`: the task's writes, `tool`: the model's)."""
        if self.kind == "fixed":
            return self.value
        if self.kind == "task" or ttl == NEVER:  # a writer's `never` stays never (only `fixed` overrides it)
            return ttl
        base = default_ttl if ttl is None else ttl
        noisy = self.kind == "noisy"
        parts = (seed, write_index) if stream == "task" else (seed, stream, write_index)  # task: as before
        factor = math.exp(self.value * noise_draw(*parts)) if noisy else self.value
        return min(max(base * factor, 1.0), float(MAX_DURATION_SECONDS))


def noise_draw(*parts: object) -> float:
    """A standard normal draw from a stable hash of `parts` (never Python's salted hash, never global
    random state): the same parts give the same draw on every machine and run."""
    digest = hashlib.sha256("\x1f".join(str(part) for part in parts).encode("utf-8")).digest()
    return random.Random(int.from_bytes(digest[:8], "big")).gauss(0.0, 1.0)
