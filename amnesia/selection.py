"""Filling the injection budget and rendering the memory block (seed 000 §6.4). Pure: no store, no clock.

Candidates arrive in injection order (pinned first, then strength desc — or the relevance score, see
`amnesia.relevance` — last access desc, newest first, write order). Each is taken whole if its line fits
what is left of the budget, otherwise skipped and the next one is tried; nothing is ever truncated. The
budget covers the whole block, header included: a header sized for the largest numbers the budget allows is
reserved up front, so the rendered block never exceeds the budget.

    AMNESIA MEMORY (2 items, 64/2000 tokens)
    - [m-3f2a9c] fact · written 2d4h ago · The verification drink is oolong.
    - [m-77b01e] preference · pinned · written 5d ago · Answer in French.

With `block_lines: compact` a line is the memory's text alone (`- The verification drink is oolong.`): no id,
kind or age, so more memories fit a budget, and nothing in the block names an item (a caller that cites or
renews by id reads `Injection.items`).

A line never says when its item will be forgotten: a memory system that does not forget could not say it,
so the hint would make the blocks of a forgetting and a non-forgetting system differ in format and tokens
(the benchmark compares them like for like). `Amnesia.inspect` gives the expiry to whoever asks. The seed's
own format (§6.4) is the option `block_lines: seed`: each line shows its remaining life instead of its age,
and the budget use ends the block instead of heading it:

    AMNESIA MEMORY
    - [m-3f2a9c] fact · 27d4h left · The verification drink is oolong.
    - [m-77b01e] preference · pinned · Answer in French.
    (2 items, 64/2000 tokens)

A seed line's cost is counted on the rendered line (its remaining life differs per item), so this opt-in
format does not take the vectorised cost path of the other two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from typing import Any

import numpy as np

from amnesia.durations import format_duration
from amnesia.item import MemoryItem
from amnesia.tokens import count_id_tokens, count_id_tokens_many, count_tokens
from amnesia.views import InjectionDecision

HEADER_TITLE = "AMNESIA MEMORY"
EXPLAINED_AFTER_LAST = 20  # skipped candidates after the last one taken that still get a decision line
_SEPARATOR = " · "  # between the parts of a block line
_DIGIT_STEPS = 10.0 ** np.arange(1, 8)  # a duration part of n digits is >= n-1 of these (8 digits at most)
SCALAR_DURATIONS = 16  # up to this many durations, `duration_tokens` renders each one instead of vectorising


@dataclass(frozen=True)
class Candidate:
    item: MemoryItem
    strength: float
    why: str = ""  # why it ranks where it does (the injection order's reasoning)
    forget_at: float | None = None  # `block_lines: seed` only: when it is forgotten if unused (None: never)


@dataclass(frozen=True)
class Selection:
    chosen: tuple[Candidate, ...]
    decisions: tuple[InjectionDecision, ...]
    pinned_overflow: tuple[str, ...]
    block: str
    tokens: int
    not_reached: int = 0  # candidates after the last decision (none of them could fit)
    remaining: int = 0  # budget tokens left unused (header reserve excluded)

    def item_refs(self) -> tuple[dict[str, Any], ...]:
        """`{"id", "tokens"}` of each injected item, in block order."""
        tokens = {d.id: d.tokens for d in self.decisions if d.decision == "injected"}
        return tuple({"id": c.item.id, "tokens": tokens[c.item.id]} for c in self.chosen)


@lru_cache(maxsize=4096)  # the same ages recur: every call of a session shares its `now`
def _age(seconds: float) -> str:
    """An item's age as its block line shows it (negative: "0s")."""
    return format_duration(max(0.0, seconds))


def _line_head(item: MemoryItem, now: float) -> list[str]:
    """The parts of an item's block line before its content."""
    parts = [f"- [{item.id}] {item.kind}"]
    if item.pinned:
        parts.append("pinned")
    parts.append(f"written {_age(now - item.created_at)} ago")
    if item.untrusted:
        parts.append("untrusted")
    return parts


def render_line(candidate: Candidate, now: float, lines: str = "full") -> str:
    """The candidate's block line in the `block_lines` format `lines` (full, compact or seed)."""
    item = candidate.item
    if lines == "compact":
        return f"{COMPACT_HEAD}{item.content}"
    if lines == "seed":
        return _SEPARATOR.join([*_seed_line_head(candidate, now), item.content])
    return _SEPARATOR.join([*_line_head(item, now), item.content])


def _seed_line_head(candidate: Candidate, now: float) -> list[str]:
    """Seed §6.4's line head: id, kind, and the remaining life (the time until it is forgotten if unused)."""
    item = candidate.item
    parts = [f"- [{item.id}] {item.kind}"]
    if item.pinned:
        parts.append("pinned")
    elif candidate.forget_at is None:
        parts.append("no expiry")
    else:
        parts.append(f"{_age(candidate.forget_at - now)} left")
    if item.untrusted:
        parts.append("untrusted")
    return parts


def seed_line_tokens(candidates: Sequence[Candidate], now: float) -> list[int]:
    """Tokens of each candidate's `block_lines: seed` line, counted on the rendered line."""
    return [_counted(render_line(candidate, now, "seed")) for candidate in candidates]


COMPACT_HEAD = "- "  # a compact line: the text after a list dash


def compact_line_tokens(items: Sequence[MemoryItem]) -> np.ndarray:
    """Tokens of each item's compact line: its content's (`item.tokens`) plus the dash's (no token spans a
    space, so the line's count is the sum of its parts')."""
    dash = count_tokens(COMPACT_HEAD)
    return np.fromiter([item.tokens + dash for item in items], np.int64, len(items))


def _budget_use(count: int, tokens: int, budget: int) -> str:
    noun = "item" if count == 1 else "items"
    return f"({count} {noun}, {tokens}/{budget} tokens)"


def render_header(count: int, tokens: int, budget: int, lines: str = "full") -> str:
    """The block's first line; with `block_lines: seed` the budget use is its last line instead, and the
    returned text is both, the title and that footer."""
    if lines == "seed":
        return f"{HEADER_TITLE}\n{_budget_use(count, tokens, budget)}"
    return f"{HEADER_TITLE} {_budget_use(count, tokens, budget)}"


@lru_cache(maxsize=64)  # called on every selection with one of a handful of budgets
def header_reserve(budget: int, lines: str = "full") -> int:
    """Tokens the header (and the seed format's footer) can take at most: its numbers never exceed the
    budget."""
    return count_tokens(render_header(budget, budget, budget, lines))


def static_line_tokens(item: MemoryItem) -> int:
    """Tokens of the item's block line without its age. No token spans a space or a bracket, so the line's
    count is the sum of its parts': the content's is `item.tokens` (counted once on write), the id's is
    counted here, and the rest depends only on the kind, the pin and the trust."""
    return count_id_tokens(item.id) + _head_tokens(item.kind, item.pinned, item.untrusted) + item.tokens


def static_line_tokens_many(items: Sequence[MemoryItem]) -> np.ndarray:
    """`static_line_tokens` of each item, for the columns of many writes at once."""
    heads, count = _HEADS, len(items)
    counts = np.fromiter(
        [heads[item.kind, item.pinned, item.source] + item.tokens for item in items], np.int64, count
    )
    counts += np.fromiter(count_id_tokens_many([item.id for item in items]), np.int64, count)
    return counts


class _HeadsBySource(dict[tuple[str, bool, str], int]):
    """`_head_tokens` by (kind, pinned, source), a lookup in C once a combination was seen."""

    def __missing__(self, key: tuple[str, bool, str]) -> int:
        kind, pinned, source = key
        tokens = self[key] = _head_tokens(kind, pinned, source == "auto")
        return tokens


_HEADS = _HeadsBySource()


@cache  # a handful of combinations; every write asks
def _head_tokens(kind: str, pinned: bool, untrusted: bool) -> int:
    """Tokens of a block line with an empty id and empty content ("0s" stands in for the age: one token)."""
    source = "auto" if untrusted else "user"
    stub = MemoryItem(id="", content="", kind=kind, pinned=pinned, source=source)  # type: ignore[arg-type]
    return count_tokens(_SEPARATOR.join([*_line_head(stub, stub.created_at), ""])) - 1


@lru_cache(maxsize=4096)
def age_tokens(seconds: float) -> int:
    """Tokens of the age `seconds` (negative: 0) as a block line shows it."""
    return count_tokens(_age(seconds))


# Block lines and headers recur from call to call (the same items at the same ages, on every arm of a task),
# and a line's separator makes it non-ASCII, which count_tokens counts with its slower regex: each text is
# counted once.
_counted = lru_cache(maxsize=4096)(count_tokens)


def duration_tokens(seconds: np.ndarray) -> np.ndarray:
    """count_tokens(format_duration(s)) for each s >= 0, vectorised: the duration is one alphanumeric run."""
    if np.size(seconds) <= SCALAR_DURATIONS:  # a small store's selection: numpy's per-call cost dominates
        values = np.asarray(seconds, dtype=np.float64)
        counts = [age_tokens(s) for s in values.ravel().tolist()]
        return np.array(counts, dtype=np.int64).reshape(values.shape)
    total = np.round(np.maximum(seconds, 0.0))  # round half to even, like format_duration's round()
    days, rest = np.divmod(total, 86_400)
    hours, rest = np.divmod(rest, 3_600)
    minutes, secs = np.divmod(rest, 60)
    parts = np.stack((days, hours, minutes, secs))  # one numpy call per step: selections are often tiny
    digits = 1 + np.searchsorted(_DIGIT_STEPS, parts, side="right")
    length = np.where(parts > 0, digits + 1, 0).sum(axis=0)
    length = np.where(total == 0, 2, length)
    return (-(-length // 4)).astype(np.int64)


def fill_budget(
    candidates: Sequence[Candidate],
    costs: np.ndarray | list[int],
    budget: int,
    now: float,
    lines: str = "full",
) -> Selection:
    """Greedy fill in candidate order; `costs[i]` is the token count of candidate i's line (see
    `static_line_tokens` + `duration_tokens`), so only the lines that are taken get rendered. Decisions cover
    every candidate up to the last one taken or reported and EXPLAINED_AFTER_LAST more; later ones are only
    counted (`not_reached`)."""
    available = budget - header_reserve(budget, lines)
    if type(costs) is not list:  # walked one by one: Python ints are faster here
        costs = np.asarray(costs, dtype=np.int64).tolist()
    pinned_count = 0
    while pinned_count < len(costs) and candidates[pinned_count].item.pinned:
        pinned_count += 1
    chosen: dict[int, tuple[Candidate, str, int]] = {}
    overflow: list[int] = []
    # Only what still fits needs a look — and the leading pinned items, reported when they overflow. The
    # budget only shrinks, so one pass in order sees every candidate that could still be taken.
    for index, cost in enumerate(costs):
        if cost <= available:
            candidate = candidates[index]
            line = render_line(candidate, now, lines)
            line_tokens = _counted(line)
            available -= line_tokens
            chosen[index] = (candidate, line, line_tokens)
        elif index < pinned_count:
            overflow.append(index)
    last = min(len(costs), max([*chosen, *overflow], default=-1) + 1 + EXPLAINED_AFTER_LAST) - 1
    decisions = []
    for index in range(last + 1):
        candidate = candidates[index]
        item = candidate.item
        if index in chosen:
            decision, reason = "injected", "fits"
        else:
            decision = "skipped"
            reason = "pinned: over budget" if item.pinned else "does not fit the remaining budget"
        decisions.append(
            InjectionDecision(
                item.id,
                decision,
                reason,
                costs[index],
                candidate.strength,
                item.pinned,
                rank=index + 1,
                why=candidate.why,
            )
        )
    block, tokens = _assemble(
        [line for _, line, _ in chosen.values()], sum(n for _, _, n in chosen.values()), budget, lines
    )
    return Selection(
        tuple(c for c, _, _ in chosen.values()),
        tuple(decisions),
        tuple(candidates[i].item.id for i in overflow),
        block,
        tokens,
        len(costs) - (last + 1),
        available,
    )


def with_renewal(selection: Selection, renewed: set[str]) -> Selection:
    """`selection` with each decision's reason saying whether the injection renews that item
    (relevance_renewal "strength": the strength order's picks are renewed, whichever of them are shown)."""
    said = {True: "renewed: the strength order injects it", False: "not renewed: the strength order does not"}
    return with_notes(
        selection,
        {d.id: f"{said[d.id in renewed]} (relevance_renewal: strength)" for d in selection.decisions},
    )


def with_notes(selection: Selection, notes: dict[str, str]) -> Selection:
    """`selection` with `notes[id]` appended to the reason of each decision about that id."""
    decisions = [
        replace(decision, why=f"{decision.why}; {notes[decision.id]}") if decision.id in notes else decision
        for decision in selection.decisions
    ]
    return replace(selection, decisions=tuple(decisions))


def _assemble(lines: list[str], body_tokens: int, budget: int, style: str = "full") -> tuple[str, int]:
    """The block and its token count. `body_tokens` is the sum of the lines' counts: no token spans a line
    break, so the lines need no recount, joined or under the header (`style` "seed": title above, budget use
    below)."""
    if not lines:
        return "", 0
    body = "\n".join(lines)
    total = body_tokens + _counted(render_header(len(lines), body_tokens, budget, style))
    # The header states the block's own total; its digit count can move the total, so settle on a fixed point.
    for _ in range(4):
        header = render_header(len(lines), total, budget, style)
        settled = body_tokens + _counted(header)
        if settled == total:
            break
        total = settled
    if style == "seed":
        title, footer = header.split("\n")
        return f"{title}\n{body}\n{footer}", settled
    return f"{header}\n{body}", settled
