"""Injection planning over an `ItemIndex`: which live memories are candidates for the block, in what order,
and what each one's line costs — then `selection.fill_budget` takes them greedily.

The order is the strength order (pinned, strength, last access, newest, write order) or, with
`injection_order: relevance` and a query, the same with the strength replaced by the score of
`amnesia.relevance.rank`. Either way the candidates are the same: visible, live and not stale.

Only the HEAD_CANDIDATES strongest candidates are sorted up front; the rest rank below all of them, so they
are looked at only when the budget still has room for one of them (or a pinned one is among them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from amnesia import decay, relevance
from amnesia.checks import check_count
from amnesia.selection import (
    Candidate,
    Selection,
    age_tokens,
    compact_line_tokens,
    duration_tokens,
    fill_budget,
    seed_line_tokens,
)

if TYPE_CHECKING:
    from amnesia.index import ItemIndex

HEAD_CANDIDATES = 1024  # injection candidates sorted up front; the rest only if the budget still has room
SMALL_STORE = 32  # up to this many slots, a selection is planned without numpy (`_plan_small`)


def resolve_budget(budget_tokens: Any, default: int) -> int:
    """The token budget of one injection: the caller's, else the configured default."""
    budget = default if budget_tokens is None else budget_tokens
    check_count("budget_tokens", budget, minimum=0)
    return budget


def plan_injection(
    index: ItemIndex,
    strengths: np.ndarray,
    budget: int,
    owner_id: str | None,
    include_workspace: bool,
    now: float,
    query: str | None = None,
    team_id: str | None = None,
) -> tuple[Selection, dict[str, int]]:
    """The selection for one block and what was left out: `{"stale", "invisible", "not_reached"}` counts.
    `strengths` are the index's current strengths (nothing due may be left in it); `query` ranks the
    candidates when the index keeps relevance postings (injection_order "relevance")."""
    config, columns = index.config, index.columns
    visible = columns.visible(owner_id, include_workspace, team_id)
    n = columns.used
    if n <= SMALL_STORE and not (index.relevance is not None and query):
        return _plan_small(index, strengths, visible, budget, now)
    stale = visible & (strengths < decay.stale_threshold(config)) & ~columns.pinned[:n]
    excluded = {"stale": int(stale.sum()), "invisible": len(index) - int(visible.sum())}
    if not config.prompt_section_enabled:
        return fill_budget((), np.zeros(0), budget, now), excluded
    candidates = np.flatnonzero(visible & ~stale)
    ranking = None
    if index.relevance is not None and query:
        ranking = relevance.rank(
            index.relevance,
            query,
            strengths,
            candidates,
            config.relevance_rule,
            config.relevance_weight,
            config.relevance_gate,
            _strength_order(columns, strengths) if config.relevance_duplicates == "demote" else None,
        )
    keys = strengths if ranking is None else ranking.keys  # what orders the candidates
    head, rest = columns.strongest(candidates, keys, HEAD_CANDIDATES)
    ordered = columns.injection_order(head, keys)  # more than HEAD_CANDIDATES when ties are wide
    selection = _fill(index, ordered[:HEAD_CANDIDATES], strengths, budget, now, ranking)
    later = np.concatenate([ordered[HEAD_CANDIDATES:], rest])
    unsorted = len(later)
    # Later candidates rank below every one walked so far: they matter only if one could still fit.
    if unsorted and (selection.remaining >= _cheapest_line(index, later) or columns.pinned[later].any()):
        everything = np.concatenate([ordered, columns.injection_order(rest, keys)])
        selection, unsorted = _fill(index, everything, strengths, budget, now, ranking), 0
    excluded["not_reached"] = selection.not_reached + unsorted
    return selection, excluded


def _strength_order(columns: Any, strengths: np.ndarray) -> Any:
    """slots -> the same slots in the strength order (for relevance_duplicates "demote")."""
    return lambda slots: columns.injection_order(slots, strengths)


def _plan_small(
    index: ItemIndex, strengths: np.ndarray, visible: np.ndarray, budget: int, now: float
) -> tuple[Selection, dict[str, int]]:
    """`plan_injection` in the strength order over a store of at most SMALL_STORE slots, in plain Python:
    numpy's per-call overhead is most of the work there. The same masks, the same order (pinned, strength,
    last access, newest, write order; float arithmetic as numpy's) and the same costs (a test checks)."""
    config, columns = index.config, index.columns
    n = len(visible)
    shown, pinned = visible.tolist(), columns.pinned[:n].tolist()
    strength = strengths.tolist()
    threshold = decay.stale_threshold(config)
    stale = [shown[s] and strength[s] < threshold and not pinned[s] for s in range(n)]
    excluded = {"stale": sum(stale), "invisible": len(index) - sum(shown)}
    if not config.prompt_section_enabled:
        return fill_budget((), np.zeros(0), budget, now), excluded
    anchor, created = columns.anchor[:n].tolist(), columns.created[:n].tolist()
    seq, line_tokens = columns.seq[:n].tolist(), columns.line_tokens[:n].tolist()
    ordered = sorted(
        (s for s in range(n) if shown[s] and not stale[s]),
        key=lambda s: (-(strength[s] + 2.0 * pinned[s]), -anchor[s], -created[s], seq[s]),
    )
    item_at, lines = columns.item_at, config.block_lines
    # Every candidate is built (a small store's are few): as _LazyCandidates builds them, less its laziness.
    candidates = [
        Candidate(
            item,
            strength[s],
            "pinned first" if item.pinned else f"strength {strength[s]:.3f}",
            decay.forget_at(item, config) if lines == "seed" else None,
        )
        for s in ordered
        for item in (item_at[s],)
    ]
    if lines == "compact":
        costs = compact_line_tokens([item_at[s] for s in ordered]).tolist()
    elif lines == "seed":
        costs = seed_line_tokens(candidates, now)
    else:
        costs = [line_tokens[s] + age_tokens(now - created[s]) for s in ordered]
    selection = fill_budget(candidates, costs, budget, now, lines)
    excluded["not_reached"] = selection.not_reached
    return selection, excluded


def _cheapest_line(index: ItemIndex, slots: np.ndarray) -> int:
    """The fewest tokens the line of one of `slots` can cost (a full line's age takes at least 2; a compact
    line is never dearer than a seed line, which holds its text, its dash and more)."""
    if index.config.block_lines != "full":
        return int(_compact_costs(index, slots).min())
    return int(index.columns.line_tokens[slots].min()) + 2


def _compact_costs(index: ItemIndex, slots: np.ndarray) -> np.ndarray:
    """Each slot's compact line tokens (`block_lines: compact`: the text and its dash, no age)."""
    item_at = index.columns.item_at
    return compact_line_tokens([item_at[slot] for slot in slots.tolist()])


def _fill(
    index: ItemIndex,
    ordered: np.ndarray,
    strengths: np.ndarray,
    budget: int,
    now: float,
    ranking: relevance.Ranking | None,
) -> Selection:
    """fill_budget over the slots `ordered`, with each line's cost from the columns (nothing rendered)."""
    columns, lines = index.columns, index.config.block_lines
    candidates = _LazyCandidates(index, ordered, strengths, ranking)
    if lines == "compact":
        costs = _compact_costs(index, np.asarray(ordered))
    elif lines == "seed":  # every line rendered: the opt-in seed format has no vectorised cost
        costs = np.asarray(seed_line_tokens(candidates, now), dtype=np.int64)
    else:
        costs = columns.line_tokens[ordered] + duration_tokens(now - columns.created[ordered])
    return fill_budget(candidates, costs, budget, now, lines)


class _LazyCandidates(Sequence[Candidate]):
    """Candidates in injection order, built only as far as the budget walk gets (usually a few hundred)."""

    def __init__(
        self,
        index: ItemIndex,
        slots: np.ndarray | list[int],
        strengths: np.ndarray,
        ranking: relevance.Ranking | None,
    ) -> None:
        self._index, self._slots, self._strengths, self._ranking = index, slots, strengths, ranking
        self._built: dict[int, Candidate] = {}  # fill_budget asks for the same candidates more than once

    def __len__(self) -> int:
        return len(self._slots)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        built = self._built.get(index)
        if built is None:
            built = self._built[index] = self._build(index)
        return built

    def _build(self, index: int) -> Candidate:
        slot = self._slots[index]
        item = self._index.columns.item_at[slot]  # inline: hot loop
        strength = float(self._strengths[slot])
        if self._ranking is None or self._index.relevance is None:
            why = "pinned first" if item.pinned else f"strength {strength:.3f}"
        else:
            why = self._ranking.explain(self._index.relevance, slot, strength, item.pinned)
        config = self._index.config
        forget_at = decay.forget_at(item, config) if config.block_lines == "seed" else None
        return Candidate(item, strength, why, forget_at)
