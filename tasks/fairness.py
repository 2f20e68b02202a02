"""Is a task set's ttl an oracle? For each probe value, how old its latest memory is at the probe, relative to
the ttl the writer gave it (`age / ttl`).

If every expected value were younger than its ttl and every stale value older, a policy that obeys the ttl
could never forget something still needed nor keep something outdated: "forgetting wins" would hold by
construction. `oracle_check` says whether a set has probes on both sides (tasks/README.md, "How the tasks
are kept fair"); the shipped sets are checked by tests/tasks/test_fairness.py.
"""

from __future__ import annotations

from dataclasses import dataclass

from tasks.scoring import find_mentions
from tasks.spec import RememberSpec, Task

DEFAULT_TTL = 30 * 86_400.0  # the engine's default ttl, for writes that give none


@dataclass(frozen=True)
class TtlRatio:
    """One probe value and the memory that last wrote it before the probe."""

    task_id: str
    group: str
    mechanism: str
    kind: str  # expect | stale | poison
    value: str
    age: float  # seconds from the write to the probe
    ttl: float  # the writer's ttl (DEFAULT_TTL when it gave none)

    @property
    def ratio(self) -> float:
        """age / ttl: above 1, obeying the ttl forgets the value before the probe."""
        return self.age / self.ttl


def ttl_ratios(tasks: list[Task], default_ttl: float = DEFAULT_TTL) -> list[TtlRatio]:
    """Every (probe, value) whose value was written to memory before the probe by a non-pinned write."""
    found: list[TtlRatio] = []
    for task in tasks:
        writes: list[tuple[float, RememberSpec]] = []
        for session in task.sessions:
            for turn in session.turns:
                writes += [(session.at, spec) for spec in turn.remember]
                if turn.probe is None:
                    continue
                probe = turn.probe
                for kind, values in (
                    ("expect", probe.expect),
                    ("stale", probe.stale),
                    ("poison", probe.poison),
                ):
                    for value in values:
                        latest = [(at, spec) for at, spec in writes if find_mentions(spec.content, (value,))]
                        if not latest or latest[-1][1].pin:
                            continue
                        at, spec = latest[-1]
                        ttl = default_ttl if spec.ttl is None else spec.ttl
                        found.append(
                            TtlRatio(task.id, task.group, probe.mechanism, kind, value, session.at - at, ttl)
                        )
    return found


def oracle_check(ratios: list[TtlRatio]) -> list[str]:
    """The ways the ttls of a set act as an oracle (empty = none): expected values that all outlive their
    ttl's reach, or stale values that all die before the probe."""
    problems = []
    expected = [r for r in ratios if r.kind == "expect"]
    stale = [r for r in ratios if r.kind == "stale"]
    if expected and all(r.ratio <= 1 for r in expected):
        problems.append(
            "every expected value is younger than its ttl: a ttl-obeying policy never forgets one"
        )
    if stale and all(r.ratio > 1 for r in stale):
        problems.append("every stale value is older than its ttl: a ttl-obeying policy always drops them")
    return problems
