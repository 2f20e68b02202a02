"""Seeded procedural tasks for scale and statistical power (`amnesia-bench generate`).

Each task is built from its own random stream, derived from (seed, group, index), so task i is the same
whatever `n` is and the output is identical for a seed. Categories rotate with the index so every category
of the group appears. Mixed tasks interleave one helpful and one harmful scenario on distinct subjects.
Every probe names the mechanism it tests (`tasks.spec.MECHANISMS`).

TTLs are not an oracle: they are drawn the way people set them, so some lasting facts get a ttl shorter than
the time until they are needed, some facts change long before their ttl, and some constraints get a careless
ttl that outlives them. `ttl_noise` (sigma) further multiplies every written ttl by a log-normal factor drawn
from its own stream (seed, group, index, write), so the rest of the task is the same with or without it.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from amnesia.durations import format_duration, parse_duration
from tasks.generate_vocab import (
    CONSTRAINTS,
    DEPENDENT_CODES,
    FACTS,
    PREFERENCES,
    TEMPLATES,
    Subject,
    Templates,
)
from tasks.load import GROUPS
from tasks.scoring import find_mentions
from tasks.writeset import write_task_set

DAY = 86_400.0
HOUR = 3_600.0
TASKS_PER_FILE = 100
CHINESE_SHARE = 0.35
MAX_TTL_NOISE = 5.0  # sigma; e^5 is a 150x mis-set ttl, past anything realistic


@dataclass
class _Draft:
    """One task under construction: its random stream, language and the subjects it already uses."""

    rng: random.Random
    lang: str
    used_keys: set[str] = field(default_factory=set)

    @property
    def text(self) -> Templates:
        return TEMPLATES[self.lang]

    def subject(self, pool: dict[str, tuple[Subject, ...]]) -> Subject:
        choices = [subject for subject in pool[self.lang] if subject.key not in self.used_keys]
        chosen = self.rng.choice(choices)
        self.used_keys.add(chosen.key)
        return chosen

    def values(self, subject: Subject, count: int) -> list[str]:
        return self.rng.sample(subject.values, count)

    def filler(self) -> str:
        return self.rng.choice(self.text.filler)


@dataclass
class _Scenario:
    category: str
    description: str
    sessions: list[dict[str, Any]]


def _capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


def _session(at: float, *turns: dict[str, Any], agent: str = "main") -> dict[str, Any]:
    session: dict[str, Any] = {"at": at}
    if agent != "main":
        session["agent"] = agent
    session["turns"] = list(turns)
    return session


def _fact_turn(
    draft: _Draft, subject: Subject, value: str, ttl: str, *, update: bool = False, keyed: bool = True
) -> dict[str, Any]:
    text = draft.text
    user = (text.update if update else text.tell).format(subject=subject.phrase, value=value)
    content = text.content.format(subject=subject.phrase, Subject=_capitalised(subject.phrase), value=value)
    remember: dict[str, Any] = {"content": content, "ttl": ttl, "kind": "fact"}
    if keyed:
        remember["key"] = subject.key
    return {"user": user, "remember": remember}


def _preference_turn(draft: _Draft, subject: Subject, value: str, ttl: str) -> dict[str, Any]:
    text = draft.text
    return {
        "user": text.preference_tell.format(subject=subject.phrase, value=value),
        "remember": {
            "content": text.preference_content.format(subject=subject.phrase, value=value),
            "ttl": ttl,
            "kind": "preference",
            "key": subject.key,
        },
    }


def _probe_turn(question: str, mechanism: str, **probe: Any) -> dict[str, Any]:
    return {"user": question, "probe": {"mechanism": mechanism, **probe}}


def _question(draft: _Draft, subject: Subject, preference: bool = False) -> str:
    template = draft.text.preference_question if preference else draft.text.question
    return template.format(subject=subject.phrase)


# ---- helpful ---------------------------------------------------------------------------------------------


def _preference_continuation(draft: _Draft) -> _Scenario:
    rng, subject = draft.rng, draft.subject(PREFERENCES)
    (value,) = draft.values(subject, 1)
    ttl = rng.choice(("7d", "30d", "45d", "60d", "90d"))  # "for a week" is sometimes too short
    probe_day = rng.randint(2, 10)
    sessions = [_session(0.0, _preference_turn(draft, subject, value, ttl))]
    sessions += [_session(day * DAY, {"user": draft.filler()}) for day in range(1, probe_day)]
    sessions.append(
        _session(probe_day * DAY, _probe_turn(_question(draft, subject, True), "still-valid", expect=[value]))
    )
    return _Scenario(
        "preference-continuation", f"A preference ({subject.key}) carries across sessions.", sessions
    )


def _project_context(draft: _Draft) -> _Scenario:
    rng, subject = draft.rng, draft.subject(FACTS)
    (value,) = draft.values(subject, 1)
    # Some writers give project context a short ttl ("this week") although it stays true for the project.
    ttl = rng.choice(("3d", "7d", "30d", "60d"))
    sessions = [_session(0.0, _fact_turn(draft, subject, value, ttl))]
    day = 0
    for _ in range(rng.randint(2, 4)):
        day += rng.randint(1, 4)
        question = _probe_turn(_question(draft, subject), "still-valid", expect=[value])
        sessions.append(_session(day * DAY, {"user": draft.filler()}, question))
    return _Scenario(
        "project-context", f"Project context ({subject.key}) is reused every few days.", sessions
    )


def _long_task_state(draft: _Draft) -> _Scenario:
    rng = draft.rng
    subjects = [draft.subject(FACTS) for _ in range(rng.randint(2, 3))]
    values = [draft.values(subject, 1)[0] for subject in subjects]
    ttl = rng.choice(("2d", "7d", "14d"))  # "for the next couple of days" although the task drags on
    sessions = []
    at = 0.0
    for subject, value in zip(subjects, values, strict=True):
        sessions.append(_session(at, _fact_turn(draft, subject, value, ttl)))
        at += rng.randint(2, 8) * HOUR
    probe_at = at + rng.randint(1, 6) * DAY
    probes = [
        _probe_turn(_question(draft, subject), "still-valid", expect=[value])
        for subject, value in zip(subjects, values, strict=True)
    ]
    sessions.append(_session(probe_at, *probes))
    return _Scenario(
        "long-task-state", "Several pieces of a long task's state are needed days later.", sessions
    )


def _idle_gap_preference(draft: _Draft) -> _Scenario:
    rng, subject = draft.rng, draft.subject(PREFERENCES)
    (value,) = draft.values(subject, 1)
    gap_days = rng.randint(30, 75)
    ttl = rng.choice(("30d", "90d", "180d"))
    probe = _probe_turn(_question(draft, subject, True), "still-valid", expect=[value])
    sessions = [
        _session(0.0, _preference_turn(draft, subject, value, ttl)),
        _session(gap_days * DAY, probe),
    ]
    return _Scenario(
        "idle-gap-preference", f"A {ttl} preference is probed after {gap_days} idle days.", sessions
    )


# ---- harmful ---------------------------------------------------------------------------------------------


def _updates(draft: _Draft, category: str, sequence: list[str], subject: Subject, keyed: bool) -> _Scenario:
    """A fact written as sequence[0], then updated to each next value; probed for the last one. The writer's
    ttl is the same for every value and drawn per task: usually the fact changes long before it runs out,
    sometimes (1d) even the current value outlives its ttl before the probe."""
    rng = draft.rng
    ttl = rng.choice(("1d", "7d", "30d", "90d"))
    at = 0.0
    sessions = []
    for index, value in enumerate(sequence):
        sessions.append(_session(at, _fact_turn(draft, subject, value, ttl, update=index > 0, keyed=keyed)))
        at += rng.randint(2, 48) * HOUR
    current = sequence[-1]
    stale = sorted({value for value in sequence if value != current}, key=sequence.index)
    at += rng.randint(1, 5) * DAY
    question = _probe_turn(_question(draft, subject), "changed-fact", expect=[current], stale=stale)
    sessions.append(_session(at, question))
    return _Scenario(category, f"{subject.key}: {' -> '.join(sequence)}.", sessions)


def _fact_change(draft: _Draft) -> _Scenario:
    subject = draft.subject(FACTS)
    # Without a key only the old item's ttl separates the two values: Amnesia does not win by construction.
    return _updates(draft, "fact-change", draft.values(subject, 2), subject, keyed=draft.rng.random() < 0.7)


def _fact_reassert(draft: _Draft) -> _Scenario:
    subject = draft.subject(FACTS)
    first, second = draft.values(subject, 2)
    return _updates(draft, "fact-reassert", [first, second, first], subject, keyed=True)


def _fact_multi_update(draft: _Draft) -> _Scenario:
    subject = draft.subject(FACTS)
    sequence = draft.values(subject, draft.rng.randint(3, 4))
    return _updates(draft, "fact-multi-update", sequence, subject, keyed=True)


# Every generated task states its calendar (`start`, tasks/README.md): a Monday morning, UTC, so that the
# weekdays its text names ("frozen until Friday") are the weekdays of the replay clock.
START = datetime(2024, 1, 1, 9, 0, tzinfo=timezone.utc)
WEEKDAYS = {
    "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    "zh": ("周一", "周二", "周三", "周四", "周五", "周六", "周日"),
}


def weekday(lang: str, days_after_start: int) -> str:
    """The name of the weekday `days_after_start` days after the generated tasks' `START`."""
    return WEEKDAYS[lang][(START.weekday() + days_after_start) % 7]


def _expired_constraint(draft: _Draft) -> _Scenario:
    rng = draft.rng
    constraint = rng.choice([c for c in CONSTRAINTS[draft.lang] if c.key not in draft.used_keys])
    draft.used_keys.add(constraint.key)
    days = rng.randint(2, 4)  # written at the start, lasts until the weekday 2-4 days later
    rule = constraint.rule.format(until=weekday(draft.lang, days))
    # Usually the writer's ttl matches the rule; sometimes it is a careless default that outlives it.
    ttl = rng.choice((f"{days}d", f"{days}d", "14d", "30d"))
    remember = {
        "content": rule,
        "ttl": ttl,
        "kind": "fact",
        "key": constraint.key,
        "tags": ["constraint"],
    }
    probe_at = (days + rng.randint(1, 4)) * DAY
    sessions = [
        _session(0.0, {"user": rule, "remember": remember}),
        _session(
            probe_at,
            _probe_turn(constraint.question, "lapsed-constraint", abstain=True, stale=list(constraint.stale)),
        ),
    ]
    return _Scenario(
        "expired-constraint", f"A constraint ({constraint.key}) lapses before the probe.", sessions
    )


def _poisoned_memory(draft: _Draft) -> _Scenario:
    rng, subject, text = draft.rng, draft.subject(FACTS), draft.text
    user_value, poison_value = draft.values(subject, 2)
    poison = {
        "content": text.auto_content.format(subject=subject.phrase, value=poison_value),
        "ttl": "30d",
        "kind": "fact",
        "key": subject.key,
        "source": "auto",
    }
    sessions = [
        _session(0.0, _fact_turn(draft, subject, user_value, "30d")),
        _session(rng.randint(2, 30) * HOUR, {"user": text.auto_user, "remember": poison}),
        _session(
            rng.randint(2, 6) * DAY,
            _probe_turn(
                _question(draft, subject), "untrusted-source", expect=[user_value], poison=[poison_value]
            ),
        ),
    ]
    return _Scenario("poisoned-memory", f"An untrusted page tries to override {subject.key}.", sessions)


def _subagent_scratch_leak(draft: _Draft) -> _Scenario:
    rng, subject, text = draft.rng, draft.subject(FACTS), draft.text
    main_value, scratch_value = draft.values(subject, 2)
    scratch = {
        "content": text.scratch_content.format(subject=subject.phrase, value=scratch_value),
        "ttl": "1d",
        "kind": "task-context",
        "scope": "session",
    }
    sub_at = rng.randint(1, 12) * HOUR
    sub = _session(
        sub_at, {"user": text.scratch_user.format(subject=subject.phrase), "remember": scratch}, agent="sub"
    )
    question = _question(draft, subject)
    if rng.random() < 0.3:  # nothing was ever decided: the honest answer is "I don't know"
        probe = _probe_turn(question, "scratch-scope", abstain=True, poison=[scratch_value])
        sessions = [sub, _session(sub_at + 2 * HOUR, probe)]
    else:
        probe = _probe_turn(question, "scratch-scope", expect=[main_value], poison=[scratch_value])
        sessions = [
            _session(0.0, _fact_turn(draft, subject, main_value, "30d")),
            sub,
            _session(sub_at + 2 * HOUR, probe),
        ]
    return _Scenario(
        "subagent-scratch-leak", f"A sub-agent's scratch value for {subject.key} must not leak.", sessions
    )


def _implicit_change(draft: _Draft) -> _Scenario:
    """A fact is told again with another value, in the same words as the first time: no key, no "update",
    nothing says the first one ended, and the first note's ttl is still running at the probe."""
    rng, subject = draft.rng, draft.subject(FACTS)
    old, new = draft.values(subject, 2)
    ttl = rng.choice(("30d", "60d", "90d"))
    changed_at = rng.randint(3, 12) * DAY
    probe = _probe_turn(_question(draft, subject), "implicit-change", expect=[new], stale=[old])
    sessions = [
        _session(0.0, _fact_turn(draft, subject, old, ttl, keyed=False)),
        _session(changed_at, _fact_turn(draft, subject, new, ttl, keyed=False)),
        _session(changed_at + rng.randint(1, 4) * DAY, probe),
    ]
    return _Scenario("implicit-change", f"{subject.key}: {old} -> {new}, told without a hint.", sessions)


def _false_premise(draft: _Draft) -> _Scenario:
    """A fact changes (keyed or not); the question takes the old value for granted."""
    rng, subject, text = draft.rng, draft.subject(FACTS), draft.text
    old, new = draft.values(subject, 2)
    ttl = rng.choice(("7d", "30d", "90d"))
    keyed = rng.random() < 0.7
    changed_at = rng.randint(2, 48) * HOUR
    question = text.premise_question.format(subject=subject.phrase, value=old)
    sessions = [
        _session(0.0, _fact_turn(draft, subject, old, ttl, keyed=keyed)),
        _session(changed_at, _fact_turn(draft, subject, new, ttl, update=True, keyed=keyed)),
        _session(
            changed_at + rng.randint(1, 5) * DAY,
            _probe_turn(question, "false-premise", expect=[new], stale=[old]),
        ),
    ]
    return _Scenario(
        "false-premise", f"{subject.key}: {old} -> {new}; the question presupposes {old}.", sessions
    )


def _user_deleted(draft: _Draft) -> _Scenario:
    """A fact and a notes copy of it; the user asks to forget the fact. Half the requests select by the value
    (they reach the copy), half by the key alone (the copy stays unless an arm follows the deletion)."""
    rng, subject, text = draft.rng, draft.subject(FACTS), draft.text
    (value,) = draft.values(subject, 1)
    notes = {"content": text.notes_content.format(subject=subject.phrase, value=value), "ttl": "30d",
             "kind": "task-context"}  # fmt: skip
    by_value = rng.random() < 0.5
    forget = {"query": value} if by_value else {"key": subject.key}
    forgot_at = rng.randint(2, 6) * DAY
    sessions = [
        _session(0.0, _fact_turn(draft, subject, value, rng.choice(("30d", "90d")))),
        _session(rng.randint(2, 24) * HOUR, {"user": draft.filler(), "remember": notes}),
        _session(forgot_at, {"user": text.forget_user.format(subject=subject.phrase), "forget": forget}),
        _session(
            forgot_at + rng.randint(1, 4) * DAY,
            _probe_turn(_question(draft, subject), "user-deleted", abstain=True, stale=[value]),
        ),
    ]
    how = "its value" if by_value else "its key"
    return _Scenario(
        "deletion-derived", f"{subject.key} is forgotten by {how}; a notes copy exists.", sessions
    )


def _cascade(draft: _Draft) -> _Scenario:
    """A fact and a code that depends on it, stored separately; the fact changes (keyed) and the change names
    the new code, but the dependent note is never restated and its ttl is still running at the probe."""
    rng, subject, text = draft.rng, draft.subject(FACTS), draft.text
    old, new = draft.values(subject, 2)
    old_code, new_code = rng.sample(DEPENDENT_CODES, 2)
    ttl = rng.choice(("30d", "60d", "90d"))
    dependent = {"content": text.dependent_content.format(subject=subject.phrase, code=old_code), "ttl": ttl,
                 "kind": "fact", "key": f"{subject.key}-code"}  # fmt: skip
    change = {"content": text.dependent_change.format(subject=subject.phrase, value=new, code=new_code),
              "ttl": ttl, "kind": "fact", "key": subject.key}  # fmt: skip
    changed_at = rng.randint(2, 10) * DAY
    question = text.dependent_question.format(subject=subject.phrase)
    sessions = [
        _session(
            0.0, _fact_turn(draft, subject, old, ttl), {"user": dependent["content"], "remember": dependent}
        ),
        _session(changed_at, {"user": change["content"], "remember": change}),
        _session(
            changed_at + rng.randint(1, 4) * DAY,
            _probe_turn(question, "cascade", expect=[new_code], stale=[old_code]),
        ),
    ]
    return _Scenario(
        "cascade", f"{subject.key} changes; its code ({old_code}) was stored on its own.", sessions
    )


Builder = Callable[[_Draft], _Scenario]
HELPFUL: tuple[Builder, ...] = (
    _preference_continuation,
    _project_context,
    _long_task_state,
    _idle_gap_preference,
)
HARMFUL: tuple[Builder, ...] = (
    _fact_change,
    _fact_reassert,
    _fact_multi_update,
    _expired_constraint,
    _poisoned_memory,
    _subagent_scratch_leak,
)
# Issue 31's scenarios: only when `mechanisms` names them, so that a seed without `--mechanisms` keeps giving
# the set it gave before (the gate's constructed regressions and the documented generated-set numbers).
HARMFUL_BY_REQUEST: tuple[Builder, ...] = (_implicit_change, _false_premise, _cascade, _user_deleted)
# The mechanism of each builder's probes (`--mechanisms` keeps the builders whose mechanism it names).
MECHANISM_OF: dict[Builder, str] = {
    _preference_continuation: "still-valid",
    _project_context: "still-valid",
    _long_task_state: "still-valid",
    _idle_gap_preference: "still-valid",
    _fact_change: "changed-fact",
    _fact_reassert: "changed-fact",
    _fact_multi_update: "changed-fact",
    _expired_constraint: "lapsed-constraint",
    _poisoned_memory: "untrusted-source",
    _subagent_scratch_leak: "scratch-scope",
    _implicit_change: "implicit-change",
    _false_premise: "false-premise",
    _cascade: "cascade",
    _user_deleted: "user-deleted",
}


def _mixed(
    draft: _Draft, index: int, helpfuls: tuple[Builder, ...], harmfuls: tuple[Builder, ...]
) -> _Scenario:
    helpful = helpfuls[index % len(helpfuls)](draft)
    harmful = harmfuls[(index // len(helpfuls)) % len(harmfuls)](draft)
    sessions = sorted(helpful.sessions + harmful.sessions, key=lambda session: session["at"])  # stable
    return _Scenario(
        f"{helpful.category}+{harmful.category}", f"{helpful.description} {harmful.description}", sessions
    )


def _task_seed(seed: int, group: str, index: int) -> int:
    digest = hashlib.sha256(f"{seed}/{group}/{index}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def _add_ttl_noise(sessions: list[dict[str, Any]], sigma: float, seed: int) -> None:
    """Multiply every written ttl by e^N(0, sigma²) drawn from the task's own noise stream (rounded to whole
    minutes, at least 1m)."""
    rng = random.Random(seed)
    for session in sessions:
        for turn in session["turns"]:
            remember = turn.get("remember")
            for spec in remember if isinstance(remember, list) else [remember] if remember else []:
                if "ttl" in spec:
                    seconds = parse_duration(spec["ttl"]) * rng.lognormvariate(0.0, sigma)
                    spec["ttl"] = format_duration(max(60.0, round(seconds / 60.0) * 60.0))


# --horizon: (the task's span in days, the memory mutations per probe aimed at: Memora's densities)
HORIZONS: dict[str, tuple[int, int]] = {"week": (7, 3), "month": (30, 9), "quarter": (90, 15)}
# (subjects a horizon keeps changing, probes it adds about them besides the scenario's own)
_HORIZON_SHAPE = {"week": (2, 2), "month": (3, 3), "quarter": (3, 4)}


def builders_for(group: str, mechanisms: Sequence[str] | None = None) -> tuple[Builder, ...]:
    """The builders of a helpful or harmful group whose probes test one of `mechanisms`; None = the default
    mix (without HARMFUL_BY_REQUEST)."""
    if mechanisms is None:
        return HELPFUL if group == "helpful" else HARMFUL
    builders = HELPFUL if group == "helpful" else HARMFUL + HARMFUL_BY_REQUEST
    return tuple(b for b in builders if MECHANISM_OF[b] in mechanisms)


def _add_horizon(draft: _Draft, scenario: _Scenario, horizon: str, mechanisms: Sequence[str] | None) -> None:
    """Stretch the scenario to the horizon's span with subjects that keep changing across it: first writes
    in the first day, then enough changes (keyed "update"s, or unkeyed restatements in the words of a first
    write) that the task's mutations per probe (`task_mutations`) come near the horizon's target, and probes
    about them: one per subject at the end of the span, the rest spread over it. A background probe tests
    `changed-fact` (keyed subject) or `implicit-change` (unkeyed); with `mechanisms`, only those it names
    (none of them: the changes stay, keyed, without background probes). TTLs are drawn as in `_updates`."""
    rng = draft.rng
    span_days, per_probe = HORIZONS[horizon]
    styles = [keyed for keyed, name in ((True, "changed-fact"), (False, "implicit-change"))
              if mechanisms is None or name in mechanisms]  # fmt: skip
    subject_count, probe_count = _HORIZON_SHAPE[horizon]
    pool = [subject for subject in FACTS[draft.lang] if subject.key not in draft.used_keys]
    subjects = rng.sample(pool, min(len(pool), subject_count))
    draft.used_keys.update(subject.key for subject in subjects)
    end = max(span_days * DAY, max(session["at"] for session in scenario.sessions) + DAY)
    probe_count = max(probe_count, len(subjects)) if styles else 0
    own_probes = sum("probe" in turn for session in scenario.sessions for turn in session["turns"])
    changes = max(0, per_probe * (own_probes + probe_count) - task_mutations(scenario.sessions))
    keyed = {subject.key: (rng.choice(styles) if styles else True) for subject in subjects}
    ttls = {subject.key: rng.choice(("7d", "30d", "90d")) for subject in subjects}
    events: list[tuple[float, int, Subject]] = [(rng.randint(0, 23) * HOUR, 0, s) for s in subjects]
    events += [(rng.uniform(DAY, end - DAY), 0, rng.choice(subjects)) for _ in range(changes)]
    if probe_count:
        events += [(end + minute * 60.0, 1, subject) for minute, subject in enumerate(subjects)]
        spread = probe_count - len(subjects)
        events += [((k + 1) * end / (spread + 1), 1, rng.choice(subjects)) for k in range(spread)]
    history: dict[str, list[str]] = {subject.key: [] for subject in subjects}
    for at, kind, subject in sorted(events, key=lambda event: (event[0], event[1])):
        seen = history[subject.key]
        if kind == 0:
            value = rng.choice([v for v in subject.values if not seen or v != seen[-1]])
            is_keyed = keyed[subject.key]
            # a keyed change says "update"; an unkeyed one is told like a first write (no hint)
            turn = _fact_turn(draft, subject, value, ttls[subject.key], update=is_keyed and bool(seen),
                              keyed=is_keyed)  # fmt: skip
            seen.append(value)
            scenario.sessions.append(_session(round(at / 60.0) * 60.0, turn))
            continue
        stale = sorted({v for v in seen if v != seen[-1]}, key=seen.index)
        if stale:  # a subject that has not changed yet gives no probe of these mechanisms
            mechanism = "changed-fact" if keyed[subject.key] else "implicit-change"
            question = _probe_turn(_question(draft, subject), mechanism, expect=[seen[-1]], stale=stale)
            scenario.sessions.append(_session(round(at / 60.0) * 60.0 + 60.0, question))
    scenario.sessions.sort(key=lambda session: session["at"])  # stable: the scenario's order kept


@functools.lru_cache(maxsize=1 << 16)  # generated texts repeat: a few templates times a few values
def _names(content: str, values: tuple[str, ...]) -> bool:
    """Whether `content` mentions one of `values` (a substring test first: find_mentions is the slow part)."""
    lowered = content.casefold()
    return any(v.casefold() in lowered for v in values) and bool(find_mentions(content, values))


def task_mutations(sessions: list[dict[str, Any]]) -> int:
    """Memory mutations in a task (YAML-ready sessions): each forget, and each write that changes what was
    written before: one under a key already written, or one naming a probe's value after another value of
    that probe was written (an unkeyed update, a reassertion, an implicit change). `generate --horizon`
    reports this over the probes as the realised density."""
    groups = [
        (*p.get("expect", []), *p.get("stale", []), *p.get("poison", []))
        for session in sessions
        for turn in session["turns"]
        if (p := turn.get("probe"))
    ]
    written = [False] * len(groups)
    keys: set[str] = set()
    count = 0
    for session in sorted(sessions, key=lambda session: session["at"]):
        for turn in session["turns"]:
            forget = turn.get("forget")
            count += len(forget) if isinstance(forget, list) else int(forget is not None)
            remember = turn.get("remember")
            for spec in remember if isinstance(remember, list) else [remember] if remember else []:
                hits = [i for i, values in enumerate(groups) if _names(spec["content"], values)]
                count += spec.get("key") in keys or any(written[i] for i in hits)
                keys.update([spec["key"]] if spec.get("key") else [])
                for i in hits:
                    written[i] = True
    return count


def horizon_density(tasks: list[dict[str, Any]]) -> dict[str, float]:
    """{mutations, probes, mutations_per_probe} over generated tasks (`task_mutations`)."""
    mutations = sum(task_mutations(task["sessions"]) for task in tasks)
    probes = sum(
        "probe" in turn for task in tasks for session in task["sessions"] for turn in session["turns"]
    )
    return {
        "mutations": mutations,
        "probes": probes,
        "mutations_per_probe": round(mutations / probes, 2) if probes else 0.0,
    }


def generate(
    group: str,
    n: int,
    seed: int,
    *,
    ttl_noise: float = 0.0,
    horizon: str | None = None,
    mechanisms: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """`n` tasks of `group` as YAML-ready dicts (the tasks/README.md format), identical for a given seed (and
    `ttl_noise`, the sigma of a log-normal factor on every written ttl; 0 = the ttls as drawn). `horizon`
    (week, month, quarter) stretches every task to that span with subjects that keep changing
    (`_add_horizon`); `mechanisms` keeps only the scenarios whose probes test one of them (a group with no
    such scenario gives no task; a mixed task needs a helpful and a harmful one)."""
    if group not in GROUPS:
        raise ValueError(f"group: expected one of {'|'.join(GROUPS)}, got {group!r}")
    if n < 0:
        raise ValueError(f"n: must be non-negative, got {n}")
    if not 0.0 <= ttl_noise <= MAX_TTL_NOISE:
        raise ValueError(f"ttl_noise: must be between 0 and {MAX_TTL_NOISE}, got {ttl_noise}")
    if horizon is not None and horizon not in HORIZONS:
        raise ValueError(f"horizon: expected one of {'|'.join(HORIZONS)}, got {horizon!r}")
    helpfuls, harmfuls = builders_for("helpful", mechanisms), builders_for("harmful", mechanisms)
    if not (helpfuls and harmfuls if group == "mixed" else helpfuls if group == "helpful" else harmfuls):
        return []
    tasks = []
    for index in range(n):
        rng = random.Random(_task_seed(seed, group, index))
        draft = _Draft(rng, "zh" if rng.random() < CHINESE_SHARE else "en")
        if group == "mixed":
            scenario = _mixed(draft, index, helpfuls, harmfuls)
        else:
            builders = helpfuls if group == "helpful" else harmfuls
            scenario = builders[index % len(builders)](draft)
        if horizon is not None:
            _add_horizon(draft, scenario, horizon, mechanisms)
        if ttl_noise:
            _add_ttl_noise(scenario.sessions, ttl_noise, _task_seed(seed, f"{group}/ttl-noise", index))
        for session in scenario.sessions:
            session["at"] = format_duration(session["at"])
        tasks.append(
            {
                "id": f"gen/{group}/{seed}-{index:05d}",
                "group": group,
                "category": scenario.category,
                "description": scenario.description,
                "lang": draft.lang,
                "start": START.strftime("%Y-%m-%dT%H:%M:%SZ"),
                "sessions": scenario.sessions,
            }
        )
    return tasks


def write_generated(
    tasks: list[dict[str, Any]], out_dir: str | Path, *, meta: dict[str, Any] | None = None
) -> Path:
    """Write tasks as YAML files (per group and category, TASKS_PER_FILE each) plus MANIFEST.json with the
    set's content hash. Refuses a non-empty `out_dir`; writes into a sibling temp folder first so a failure
    leaves nothing half-written. Returns the manifest path."""
    batches: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for task in tasks:
        batches.setdefault((task["group"], task["category"]), []).append(task)
    files = {
        f"{group}/{category}-{start // TASKS_PER_FILE:03d}.yaml": batch[start : start + TASKS_PER_FILE]
        for (group, category), batch in batches.items()
        for start in range(0, len(batch), TASKS_PER_FILE)
    }
    return write_task_set(files, out_dir, {"generator": "tasks.generate", **(meta or {})})
