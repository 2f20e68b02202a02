"""Is a task set's ttl an oracle for an arm that forgets by time? (tasks/README.md, "How the tasks are kept
fair"; `amnesia-bench validate --fairness`.)

For every probe value written to memory before its probe (expect, stale and poison alike), `value_fates` says
whether an arm's time rule still shows it at the probe. The cut-off is the arm's own, computed from its engine
`Config` and ttl policy — not the writer's ttl: under the default ebbinghaus curve a memory stops being
injected when its strength falls below `stale_strength`, at about 0.40·ttl; a flat curve keeps it to the ttl;
`source: auto` writes are capped at `untrusted_max_ttl`; with `renew_on_inject: full` each later main-agent
session that injects the memory restarts its clock and boosts its strength.

A value is on the arm's **wrong side** when time alone makes the arm fail on it: an expected value forgotten
before its probe, a stale or poison value still shown. If nearly every value were on the right side, obeying
the ttl would win by construction. `oracle_problem` applies the documented rule (`ORACLE_SHARE`,
`MIN_VALUES`); `exact_gaps` lists probes that sit on a cut-off, where moving the probe by an hour flips a
value's side.

What the model leaves out, on purpose: the token budget (it assumes every live memory fits), renewal by a
model's answer (`renew_on_inject: used`: never assumed), recall tools (and with them the revival of a stale or
due-but-unswept memory by a recall hit, seed §5.3: a replay sweeps at every clock step, before any recall),
and supersession by key. Writes a user `forget` removes before the probe, pinned writes and session- or
team-scoped writes (disposed with their agent or team) are not decided by time; a value with such a write is
left out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

import numpy as np

from amnesia.config import Config
from amnesia.decay import CURVE_CODES, boost, decayed, idle_fraction
from amnesia.text import matches_query
from tasks.scoring import find_mentions
from tasks.spec import ForgetSpec, ProbeSpec, RememberSpec, Task
from tasks.valueforms import has_forms

KINDS = ("expect", "stale", "poison")
# The rule (tasks/README.md): a set acts as an oracle for an arm when time alone puts at least ORACLE_SHARE of
# its expected values on the kept side AND at least ORACLE_SHARE of its stale and poison values on the dropped
# side, pooled over the set (`validate --fairness` exits 1), counting only sides with at least MIN_VALUES
# values (fewer cannot show a pattern either way). The same test within one mechanism is a warning.
ORACLE_SHARE = 0.9
MIN_VALUES = 5
# A probe this close to the moment a value crosses an arm's cut-off is an exact-gap probe: the larger of one
# hour (the finest step the shipped sessions use) and 1% of the stored ttl.
EXACT_GAP_SECONDS = 3600.0
EXACT_GAP_SHARE = 0.01

StoredTtl = Callable[[float | None, int, int], float | None]


def writer_ttl(ttl: float | None, seed: int, write_index: int) -> float | None:
    """The `task` ttl policy: the stored ttl is the writer's (None = the arm's default)."""
    return ttl


@dataclass(frozen=True)
class TimeRule:
    """How an arm forgets by time, in the engine's own terms (an arm that never forgets by time has none)."""

    config: Config  # the arm's engine config: curve, decay_k, thresholds, default ttl, untrusted cap, renewal
    # (writer's ttl, pair seed, write index in the task) -> the ttl the arm stores: its ttl policy
    stored_ttl: StoredTtl = writer_ttl

    @property
    def cutoff_fraction(self) -> float:
        """Share of the ttl a fresh, untouched memory stays injectable (≈0.40 for the default curve)."""
        config = self.config
        return idle_fraction(1.0, config.default_curve, config.stale_strength, config.decay_k)


@dataclass(frozen=True)
class ValueFate:
    """One probe value, the arm's time rule and whether the rule still shows the value at the probe."""

    task_id: str
    group: str
    mechanism: str
    kind: str  # expect | stale | poison
    value: str
    probe_at: float  # seconds from the task start
    written_at: float  # the latest write that mentions the value
    ttl: float  # the ttl stored for that write (after policy, default and untrusted cap)
    hidden_at: float  # when the last of the value's writes stops being injectable (renewals counted)

    @property
    def kept(self) -> bool:
        """Still injectable at the probe (the engine's thresholds are strict: at the cut-off it is gone)."""
        return self.probe_at < self.hidden_at

    @property
    def wrong_side(self) -> bool:
        """Time alone makes the arm fail on this value: an expected value gone, a stale or poison one kept."""
        return self.kept if self.kind != "expect" else not self.kept

    @property
    def gap(self) -> float:
        """Seconds between the probe and the cut-off (negative: the value was hidden before the probe)."""
        return self.hidden_at - self.probe_at


@dataclass(frozen=True)
class _Write:
    at: float
    spec: RememberSpec
    index: int  # the write's position among the task's writes (the noisy ttl policy draws by it)
    workspace: bool  # visible to the main agent (a session- or team-scoped write goes with its agent)
    ascii_lower: str | None  # the content lower-cased when it is ASCII, for `_mentions`' quick test
    removed: bool = False  # a user `forget` removed it


@dataclass(frozen=True)
class _ProbePoint:
    at: float
    probe: ProbeSpec
    writes: tuple[_Write, ...]  # every write before the probe turn
    accesses: tuple[float, ...]  # earlier main sessions' times: injections that may renew a memory


def _probe_points(task: Task) -> Iterator[_ProbePoint]:
    writes: list[_Write] = []
    accesses: list[float] = []
    index = 0
    for session in task.sessions:
        for turn in session.turns:
            for forget in turn.forget:
                writes = [replace(w, removed=True) if _forgets(forget, w.spec) else w for w in writes]
            for spec in turn.remember:
                # without a scope only the main agent writes to the workspace (a sub-agent to its session, a
                # team agent to its team: disposed with them, not by time)
                scope = spec.scope or ("workspace" if session.agent == "main" else session.agent)
                lowered = spec.content.lower() if spec.content.isascii() else None
                writes.append(_Write(session.at, spec, index, scope == "workspace", lowered))
                index += 1
            if turn.probe is not None:
                yield _ProbePoint(session.at, turn.probe, tuple(writes), tuple(accesses))
        if session.agent == "main":
            accesses.append(session.at)


def _forgets(forget: ForgetSpec, spec: RememberSpec) -> bool:
    if forget.key is not None and forget.key == spec.key:
        return True
    if forget.tags and set(forget.tags) & set(spec.tags):
        return True
    return forget.query is not None and matches_query(forget.query, spec.content)


def _mentions(write: _Write, value: str, lowered: str | None) -> bool:
    """Whether the write's content mentions `value` (scoring's rule). `lowered`: the value lower-cased when it
    is ASCII and has no other spelling (tasks.valueforms) — then an ASCII content that does not hold it cannot
    mention it, and most writes are passed over without the full match (an imported conversation has
    hundreds of writes and of questions)."""
    text = write.ascii_lower
    if lowered is not None and text is not None and lowered not in text:
        return False
    return _mention_in(write.spec.content, value)


@lru_cache(maxsize=65_536)
def _mention_in(content: str, value: str) -> bool:
    return bool(find_mentions(content, (value,)))


def _stored_ttl(write: _Write, rule: TimeRule, seed: int) -> float:
    config = rule.config
    ttl = rule.stored_ttl(write.spec.ttl, seed, write.index)
    ttl = config.default_ttl if ttl is None else ttl
    return min(ttl, config.untrusted_max_ttl) if write.spec.source == "auto" else ttl


def _hidden_at(write: _Write, ttl: float, rule: TimeRule, point: _ProbePoint) -> float:
    """When the write stops being injectable, replaying the renewals (injections in later main sessions)
    that happen while it is still shown and before the probe."""
    config = rule.config
    curve, k, threshold = config.default_curve, config.decay_k, config.stale_strength
    last, strength = write.at, 1.0
    hidden = last + ttl * idle_fraction(strength, curve, threshold, k)
    if config.renew_on_inject != "full" or hidden == math.inf:
        return hidden
    for at in point.accesses:
        if at <= last:
            continue
        if at >= hidden:
            break
        now = float(decayed(*_one(strength, at - last, ttl, CURVE_CODES[curve], False), k)[0])
        strength, last = boost(now, config), at
        hidden = last + ttl * idle_fraction(strength, curve, threshold, k)
    return hidden


def _one(*values: float | bool) -> list[np.ndarray]:
    """Each value as a one-slot array (the engine's decay formula works on the store's columns)."""
    return [np.array([value]) for value in values]


@dataclass(frozen=True)
class _DecidedValue:
    point: _ProbePoint
    kind: str
    value: str
    writes: tuple[_Write, ...]  # the writes before the probe that mention the value


@lru_cache(maxsize=4096)  # every arm of a run asks about the same tasks: the mentions are found once
def _decided_values(task: Task) -> tuple[_DecidedValue, ...]:
    """The task's probe values decided by time: mentioned only by unpinned, workspace, undeleted writes."""
    found = []
    for point in _probe_points(task):
        for kind in KINDS:
            for value in getattr(point.probe, kind):
                needle = value.strip()
                plain = needle.isascii() and not has_forms(value)  # no other spelling ("two" for 2)
                lowered = needle.lower() if plain else None
                mentioning = tuple(w for w in point.writes if _mentions(w, value, lowered))
                if mentioning and not any(w.spec.pin or not w.workspace or w.removed for w in mentioning):
                    found.append(_DecidedValue(point, kind, value, mentioning))
    return tuple(found)


def value_fates(
    tasks: list[Task], rule: TimeRule, pair_seed: Callable[[str], int] = lambda _task_id: 0
) -> list[ValueFate]:
    """Every probe value written before its probe and decided by time alone, with the arm's cut-off.
    `pair_seed(task_id)`: the seed the run gives the task (only a noisy ttl policy uses it)."""
    fates: list[ValueFate] = []
    for task in tasks:
        seed = pair_seed(task.id)
        for decided in _decided_values(task):
            writes, point = decided.writes, decided.point
            ttls = [_stored_ttl(write, rule, seed) for write in writes]
            hidden = max(_hidden_at(w, ttl, rule, point) for w, ttl in zip(writes, ttls, strict=True))
            fates.append(
                ValueFate(
                    task.id,
                    task.group,
                    point.probe.mechanism,
                    decided.kind,
                    decided.value,
                    point.at,
                    writes[-1].at,
                    ttls[-1],
                    hidden,
                )
            )
    return fates


def wrong_side_counts(fates: list[ValueFate]) -> dict[str, list[int]]:
    """kind -> [values on the wrong side, values decided by time] (kinds with no value are left out)."""
    counts: dict[str, list[int]] = {}
    for fate in fates:
        cell = counts.setdefault(fate.kind, [0, 0])
        cell[0] += fate.wrong_side
        cell[1] += 1
    return {kind: counts[kind] for kind in KINDS if kind in counts}


def oracle_problem(fates: list[ValueFate], scope: str = "the set") -> str | None:
    """How an arm's time rule acts as an oracle on these values, or None, by the rule of `ORACLE_SHARE` and
    `MIN_VALUES` (`scope` names the values in the message)."""
    expected = [f for f in fates if f.kind == "expect"]
    outdated = [f for f in fates if f.kind != "expect"]
    if len(expected) < MIN_VALUES or len(outdated) < MIN_VALUES:
        return None
    kept = sum(f.kept for f in expected) / len(expected)
    dropped = sum(not f.kept for f in outdated) / len(outdated)
    if kept < ORACLE_SHARE or dropped < ORACLE_SHARE:
        return None
    return (
        f"{scope}: time alone keeps {kept:.0%} of {len(expected)} expected values and drops {dropped:.0%} "
        f"of {len(outdated)} stale and poison values (an oracle: both >= {ORACLE_SHARE:.0%})"
    )


def separated_mechanisms(fates: list[ValueFate]) -> list[str]:
    """`oracle_problem` within each mechanism: results on such a mechanism restate the arm's cut-off (a
    warning, not a failure: the rule that fails a set is the whole set's)."""
    problems = []
    for mechanism in sorted({f.mechanism for f in fates}):
        problem = oracle_problem([f for f in fates if f.mechanism == mechanism], f"mechanism {mechanism}")
        problems += [problem] if problem else []
    return problems


def exact_gaps(fates: list[ValueFate]) -> list[ValueFate]:
    """Values whose probe sits on the arm's cut-off (within `EXACT_GAP_SECONDS` or `EXACT_GAP_SHARE` of the
    stored ttl, whichever is larger): moving the probe that little flips the value's side."""
    return [
        f
        for f in fates
        if math.isfinite(f.gap) and abs(f.gap) <= max(EXACT_GAP_SECONDS, EXACT_GAP_SHARE * f.ttl)
    ]


def fairness_summary(fates: list[ValueFate]) -> dict[str, Any]:
    """What a run records per arm (manifest `fairness`) and reports print: the wrong-side counts over the set
    and per mechanism, whether the set is an oracle (None: it is
    not), the mechanisms time alone separates and the exact-gap probes."""
    mechanisms = sorted({f.mechanism for f in fates})
    return {
        "wrong_side": wrong_side_counts(fates),
        "by_mechanism": {m: wrong_side_counts([f for f in fates if f.mechanism == m]) for m in mechanisms},
        "oracle": oracle_problem(fates),
        "separated_mechanisms": separated_mechanisms(fates),
        "exact_gaps": [describe_gap(f) for f in exact_gaps(fates)],
    }


def describe_gap(fate: ValueFate) -> str:
    """One line: the task, the value and how far its probe is from the moment the value is hidden."""
    hours = abs(fate.gap) / 3600.0
    when = "at the moment" if fate.gap == 0 else f"{hours:.1f} h {'before' if fate.gap > 0 else 'after'}"
    return (
        f"{fate.task_id}: {fate.kind} {fate.value!r} probed {when} it is hidden "
        f"(stored ttl {fate.ttl / 86_400.0:g} d)"
    )


def _share(cell: list[int] | None) -> str:
    if not cell:
        return "-"
    wrong, total = cell
    return f"{wrong}/{total} ({wrong / total:.0%})"


def share_row(counts: dict[str, list[int]]) -> str:
    """Wrong-side counts as `expected hidden 15/113 (13%), stale shown 36/49 (73%), poison shown -`."""
    names = {"expect": "expected hidden", "stale": "stale shown", "poison": "poison shown"}
    return ", ".join(f"{names[kind]} {_share(counts.get(kind))}" for kind in KINDS)


def describe_rule(rule: TimeRule) -> str:
    """The cut-off in words: the curve, the share of the ttl a fresh memory stays shown, renewal."""
    config = rule.config
    renewal = "each injection renews it" if config.renew_on_inject == "full" else "injections do not renew it"
    return (
        f"{config.default_curve} curve: a fresh memory is shown until {rule.cutoff_fraction:.2f} x its "
        f"stored ttl ({renewal}; source auto capped at {config.untrusted_max_ttl / 3600.0:g} h)"
    )


def fairness_lines(rule: TimeRule, fates: list[ValueFate]) -> list[str]:
    """The report of one arm on one set: wrong-side shares over the set, per group and per mechanism, then
    warnings (mechanisms time alone separates, exact-gap probes) and the verdict line if it is an oracle."""
    lines = [f"  cut-off: {describe_rule(rule)}", f"  all: {share_row(wrong_side_counts(fates))}"]
    for field in ("group", "mechanism"):
        for name in sorted({getattr(f, field) for f in fates}):
            chosen = [f for f in fates if getattr(f, field) == name]
            lines.append(f"  {field} {name or '(none)'}: {share_row(wrong_side_counts(chosen))}")
    lines += [f"  warning: {problem}" for problem in separated_mechanisms(fates)]
    lines += [f"  exact gap: {describe_gap(fate)}" for fate in exact_gaps(fates)]
    problem = oracle_problem(fates)
    if problem:
        lines.append(f"  ORACLE: {problem}")
    return lines
