"""`ItemIndex`: the live items of one workspace, kept three ways — by id (`LiveItems`, a view of the
columns' slots), by `key`, and as numpy columns (`ItemColumns`) — plus their content bytes (and, with
`supersede_same_subject`, the unkeyed ones by subject). It answers the engine's questions about them (what is
due, what a write supersedes, what to evict, what matches a forget) but never talks to the store: the engine
commits first and then tells the index what changed."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, ValuesView
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from amnesia import decay
from amnesia.checks import check_choice, check_query, shown
from amnesia.columns import ItemColumns
from amnesia.errors import CapacityExceeded, InvalidInput, NotFound
from amnesia.item import SCOPES, MemoryItem, normalize_tags
from amnesia.relevance import RelevanceIndex
from amnesia.text import matches_query, subject_of

if TYPE_CHECKING:
    from amnesia.config import Config


@dataclass(frozen=True)
class ForgetFilter:
    """What `forget` matches when it gets no id: items that meet every given filter at once."""

    query: str | None = None  # the content matches this text (see amnesia.text.matches_query)
    tags: frozenset[str] = frozenset()  # the item carries at least one of these tags
    key: str | None = None  # the item's key is this
    scope: str | None = None  # the item's scope is this
    owner_id: str | None = None  # the item's owner is this

    @classmethod
    def parse(
        cls,
        item_id: str | None,
        query: Any,
        tags: Any,
        key: str | None,
        scope: str | None,
        owner_id: str | None,
        *,
        everything: bool,
        confirm: bool,
    ) -> ForgetFilter:
        """Check a forget request: an id, a filter, or everything (confirmed)."""
        if scope is not None:
            check_choice("scope", scope, SCOPES)
        wanted = frozenset(normalize_tags(tags)) if tags else frozenset()
        chosen = cls(query, wanted, key, scope, owner_id)
        if everything and not confirm:
            raise InvalidInput("all: forgetting everything needs confirm=True")
        if item_id is None and chosen == cls() and not everything:
            raise InvalidInput(
                "forget: give an id, a query, tags, a key, a scope/owner, or all=True with confirm=True"
            )
        if query is not None:
            check_query(query)
        return chosen


_NO_SLOTS = np.zeros(0, dtype=np.intp)  # nothing due: one shared array (so read-only)
_NO_SLOTS.flags.writeable = False
SMALL_STORE = 16  # up to this many slots, due and stale items are found in plain Python (numpy's call cost)
# Why a due item goes, by whether it expired (an object array: gathering from it hands out these very
# strings, not one new string per item).
_DUE_REASONS = np.array(["stale", "expired"], dtype=object)
_WHY = tuple(_DUE_REASONS.tolist())  # the same, for a small store's Python path


class DueItems(NamedTuple):
    """What `ItemIndex.due` finds: the column slots of the items to forget now, in slot order, and why."""

    slots: np.ndarray
    reasons: list[str]  # "expired" (idle a whole ttl, or past its deadline) or "stale" (decayed out)


class LiveItems(Mapping[str, MemoryItem]):
    """The live items by id, in write order: a read-only view of the columns' id -> slot map and their
    item-by-slot list. One map serves both (no dict of items beside it): a write inserts one dict entry
    instead of two, and a sweep deletes none (see `ItemColumns.free_slots`)."""

    __slots__ = ("_columns",)

    def __init__(self, columns: ItemColumns) -> None:
        self._columns = columns

    def get(self, item_id: str, default: Any = None) -> Any:
        columns = self._columns
        slot = columns.live_slot(item_id)
        return default if slot is None else columns.item_at[slot]

    def __getitem__(self, item_id: str) -> MemoryItem:
        item = self.get(item_id)
        if item is None:
            raise KeyError(item_id)
        return item  # type: ignore[no-any-return]

    def __contains__(self, item_id: object) -> bool:
        return isinstance(item_id, str) and self._columns.live_slot(item_id) is not None

    def __iter__(self) -> Iterator[str]:
        return (item.id for item in self._columns.live_items())

    def __len__(self) -> int:
        return len(self._columns)

    def values(self) -> ValuesView[MemoryItem]:
        return _LiveValues(self)

    def list(self) -> list[MemoryItem]:
        """The live items, in write order."""
        return self._columns.live_items()


class _LiveValues(ValuesView[MemoryItem]):
    """`LiveItems.values()`: the items in one pass over the slot map (not one lookup per id)."""

    _mapping: LiveItems

    def __iter__(self) -> Iterator[MemoryItem]:
        return iter(self._mapping.list())

    def __reversed__(self) -> Iterator[MemoryItem]:
        return reversed(self._mapping.list())


class ItemIndex:
    """Live items by id (write order), ids by key, numpy columns, and the total content bytes."""

    def __init__(self, items: Iterable[MemoryItem], config: Config) -> None:
        self.config = config
        self.ids_by_key: dict[str, set[str]] = {}
        # Unkeyed live items by the subject they state ("<subject> is <value>"), kept only with
        # supersede_same_subject (no cost otherwise).
        self.ids_by_subject: dict[frozenset[str], set[str]] | None = (
            {} if config.supersede_same_subject else None
        )
        self.columns = ItemColumns(
            auto_expire=config.auto_expire, rank_only=not decay.forgets_by_time(config)
        )
        self.items = LiveItems(self.columns)
        self.bytes = 0  # content bytes of the live items: what max_store_bytes counts
        # BM25 postings of the live items, kept only for injection_order="relevance" (no cost otherwise).
        self.relevance = RelevanceIndex() if config.injection_order == "relevance" else None
        for item in items:
            self.add(item)

    def __len__(self) -> int:
        return len(self.columns)

    def add(self, item: MemoryItem, content_hash: str | None = None) -> None:
        """Index a new item: one whose id no live item has (`content_hash`: its audit hash if known)."""
        self.bytes += item.size_bytes
        if item.key is not None:
            self.ids_by_key.setdefault(item.key, set()).add(item.id)
        elif self.ids_by_subject is not None:
            subject = subject_of(item.content)
            if subject is not None:
                self.ids_by_subject.setdefault(subject, set()).add(item.id)
        # The hash is kept: forgetting the item (a sweep may forget tens of thousands) then hashes nothing.
        slot = self.columns.insert(item, content_hash)
        if self.relevance is not None:
            self.relevance.add(slot, item.content)

    def update(self, item: MemoryItem) -> None:
        """Re-index a live item whose fields changed (its content, and so its subject, never does)."""
        self.bytes += item.size_bytes - self.items[item.id].size_bytes
        if item.key is not None:
            self.ids_by_key.setdefault(item.key, set()).add(item.id)
        self.columns.upsert(item)

    def remove(self, item_ids: list[str], slots: np.ndarray | None = None) -> None:
        """Drop items the store has deleted (`slots`: their column slots, in the same order, if known)."""
        # C-level passes (map, numpy) rather than one Python loop doing all: a sweep may remove tens of
        # thousands.
        columns = self.columns
        known = slots is not None
        if slots is None:
            slots = columns.pop_slots(item_ids)
        if self.ids_by_key or self.relevance is not None or self.ids_by_subject:
            removed = self.at_slots(slots)[0]
            for item in [item for item in removed if item.key is not None]:
                self.ids_by_key[item.key].discard(item.id)
            if self.ids_by_subject:
                self._drop_subjects([item for item in removed if item.key is None])
            if self.relevance is not None:
                for slot, item in zip(slots.tolist(), removed, strict=True):
                    self.relevance.remove(slot, item.content)
        # Slots known to the caller (a sweep) leave their ids' entries in the slot map, stale.
        columns.free_slots(slots, stale_entries=known)
        self.bytes -= int(columns.size[slots].sum())  # the freed slots keep their values until reused

    def _drop_subjects(self, removed: list[MemoryItem]) -> None:
        """Take removed unkeyed items out of `ids_by_subject` (a subject no live item states goes too)."""
        by_subject = self.ids_by_subject
        assert by_subject is not None
        for item in removed:
            subject = subject_of(item.content)
            holders = by_subject.get(subject) if subject is not None else None
            if holders is not None:
                holders.discard(item.id)
                if not holders:
                    del by_subject[subject]

    def known_hashes(self, items: Sequence[MemoryItem]) -> list[str | None]:
        """The audit hash kept for each of the live `items` (None: not known, e.g. loaded from the store)."""
        slot_of, hashes = self.columns.slot_of, self.columns.hashes  # slot_of is right for every live id
        return [hashes[slot] if (slot := slot_of.get(item.id)) is not None else None for item in items]

    def at(self, slot: int) -> MemoryItem:
        """The item in column slot `slot` (a live slot)."""
        return self.columns.item_at[slot]  # type: ignore[return-value]

    def strengths(self, now: float) -> np.ndarray:
        """Current strength of every slot (dead slots included: mask with `columns.alive`)."""
        return self.columns.strengths(now, self.config.decay_k, self.config.auto_expire)

    def stale_mask(self, strengths: np.ndarray) -> np.ndarray:
        """Live, unpinned slots whose strength is below the stale threshold."""
        columns, n = self.columns, self.columns.used
        return columns.alive[:n] & ~columns.pinned[:n] & (strengths < decay.stale_threshold(self.config))

    def due(self, now: float, strengths: np.ndarray) -> DueItems:
        """The items that must be forgotten now (see `at_slots` for the items themselves)."""
        if not self.config.auto_expire:
            return DueItems(_NO_SLOTS, [])
        if self.columns.used <= SMALL_STORE:
            found = self.columns.due_small(now, strengths, self.config.forgotten_strength)
            if not found:  # most sweeps and injections
                return DueItems(_NO_SLOTS, [])
            slots = np.array([slot for slot, _ in found], dtype=np.intp)
            return DueItems(slots, [_WHY[expired] for _, expired in found])
        due, expired = self.columns.due(now, strengths, self.config.forgotten_strength)
        # Methods, not np.flatnonzero and friends: their Python wrappers are most of a small store's sweep.
        slots = due.nonzero()[0]
        if not len(slots):  # most sweeps
            return DueItems(slots, [])
        return DueItems(slots, _DUE_REASONS[expired[slots].astype(np.intp)].tolist())

    def at_slots(self, slots: np.ndarray) -> tuple[list[MemoryItem], list[str | None]]:
        """The items in live `slots` and their known audit hashes (see `known_hashes`)."""
        items = list(map(self.columns.item_at.__getitem__, slots.tolist()))
        return items, self.columns.hashes[slots].tolist()  # type: ignore[return-value]

    def supersession_targets(self, item: MemoryItem, retire_id: str | None) -> list[MemoryItem]:
        """What a new write retires: the item `retire_id` (the write's `supersedes`), then the same key's
        items in its scope/owner; with supersede_same_subject, a write with neither retires the unkeyed items
        of its scope/owner that state the same subject (`same_subject_targets`). An untrusted write may not
        retire the user's own memory."""
        targets: list[MemoryItem] = []
        if retire_id is None and item.key is None:  # most writes
            return self.same_subject_targets(item)
        if retire_id is not None:
            target = self.items.get(retire_id)
            if target is None:
                raise NotFound(f"supersedes: no live memory with id {retire_id!r}")
            targets.append(target)
        if item.key is not None:
            chosen = {target.id for target in targets}
            for other_id in sorted(self.ids_by_key.get(item.key, ())):
                other = self.items[other_id]
                if other.scope == item.scope and other.owner_id == item.owner_id and other_id not in chosen:
                    targets.append(other)
        if item.untrusted:
            for target in targets:
                if target.source == "user":
                    raise InvalidInput(
                        "key: an untrusted (auto) write cannot supersede the user's memory "
                        f"{shown(target.id)}"
                    )
        return targets

    def same_subject_targets(self, item: MemoryItem) -> list[MemoryItem]:
        """The live unkeyed items of `item`'s scope and owner that state the subject `item` states (see
        `amnesia.text.subject_of`), oldest first: "The CI provider is circleci." retires "The CI provider is
        drone.". An untrusted write passes over the user's memories (it is not refused: the user named no
        target). Empty unless supersede_same_subject."""
        if self.ids_by_subject is None or (subject := subject_of(item.content)) is None:
            return []
        same = [self.items[other_id] for other_id in self.ids_by_subject.get(subject, ())]
        return sorted(
            (
                other
                for other in same
                if other.scope == item.scope
                and other.owner_id == item.owner_id
                and not (item.untrusted and other.source == "user")
            ),
            key=lambda other: self.columns.seq[self.columns.slot_of[other.id]],
        )

    def overflow(self, item: MemoryItem, retired: Sequence[MemoryItem]) -> int:
        """Bytes over max_store_bytes once `item` is written and the live ones of `retired` are gone."""
        freed = sum([target.size_bytes for target in retired if target.id in self.items]) if retired else 0
        return self.bytes - freed + item.size_bytes - self.config.max_store_bytes

    def eviction_victims(
        self, item: MemoryItem, retired: Sequence[MemoryItem], strengths: np.ndarray
    ) -> list[MemoryItem]:
        """Unpinned items to evict, weakest first, so that `item` fits; CapacityExceeded if even evicting
        every unpinned item would not make room (then nothing is dropped)."""
        deficit = self.overflow(item, retired)
        if deficit <= 0:
            return []
        retired_ids = {target.id for target in retired}
        victims: list[MemoryItem] = []
        for slot in self.columns.eviction_order(strengths):
            candidate = self.at(slot)
            if candidate.id in retired_ids:
                continue
            victims.append(candidate)
            deficit -= candidate.size_bytes
            if deficit <= 0:
                return victims
        raise CapacityExceeded(
            f"capacity: a {item.size_bytes}-byte memory does not fit max_store_bytes "
            f"({self.config.max_store_bytes}) even after evicting every unpinned memory; nothing was dropped "
            "— unpin or forget something first"
        )

    def matching(self, wanted: ForgetFilter) -> list[MemoryItem]:
        """Live items that meet every filter of `wanted` (an unset filter lets everything through)."""
        query, tags, key, scope, owner_id = (
            wanted.query,
            wanted.tags,
            wanted.key,
            wanted.scope,
            wanted.owner_id,
        )
        return [
            item
            for item in self.items.list()
            if (query is None or matches_query(query, item.content))
            and (not tags or tags.intersection(item.tags))
            and (key is None or item.key == key)
            and (scope is None or item.scope == scope)
            and (owner_id is None or item.owner_id == owner_id)
        ]

    def recall_hits(
        self,
        query: str,
        strengths: np.ndarray,
        owner_id: str | None,
        include_workspace: bool,
        limit: int | None,
        eligible: Callable[[MemoryItem], bool] | None = None,
        team_id: str | None = None,
    ) -> list[MemoryItem]:
        """Stored items visible to the caller (`ItemColumns.visible`) matching `query` (and `eligible`, if
        given), in injection order, at most `limit`."""
        visible = self.columns.visible(owner_id, include_workspace, team_id)
        hits: list[MemoryItem] = []
        for slot in self.columns.injection_order(np.flatnonzero(visible), strengths):
            item = self.at(slot)
            if matches_query(query, item.content) and (eligible is None or eligible(item)):
                hits.append(item)
                if limit is not None and len(hits) >= limit:
                    break
        return hits

    def touch(self, item: MemoryItem, now: float) -> None:
        """A use: boost the strength (to at least the stale threshold: a use makes an item active, seed §5.3),
        restart the decay clock and, on the N-th access with promote_after_accesses, stretch the ttl (never
        past the untrusted cap)."""
        config = self.config
        item.strength = decay.revived(decay.strength(item, now, config), config)
        item.last_accessed_at = now
        item.access_count += 1
        item.status = "active"
        promote_at = config.promote_after_accesses
        if promote_at and item.access_count == promote_at and item.ttl is not None:
            cap = config.untrusted_max_ttl if item.untrusted else math.inf
            item.ttl = min(item.ttl * config.promote_ttl_factor, cap)
        self.columns.upsert(item)

    def restale(self, strengths: np.ndarray) -> tuple[int, list[MemoryItem]]:
        """Record which items are now stale: (how many are, the items whose stale mark changed)."""
        columns, n = self.columns, self.columns.used
        if n <= SMALL_STORE:
            return self._restale_small(strengths)
        stale = self.stale_mask(strengths)
        changed = (columns.alive[:n] & (stale != columns.marked_stale[:n])).nonzero()[0]
        updated = [self._mark_stale(slot, bool(stale[slot])) for slot in changed]
        return int(np.count_nonzero(stale)), updated

    def _restale_small(self, strengths: np.ndarray) -> tuple[int, list[MemoryItem]]:
        """`restale` on a few slots, in plain Python (the same masks: `stale_mask`'s comparison)."""
        columns, n = self.columns, self.columns.used
        alive, pinned, was_stale = (
            column[:n].tolist() for column in (columns.alive, columns.pinned, columns.marked_stale)
        )
        strength = strengths.tolist()
        threshold = decay.stale_threshold(self.config)
        count, updated = 0, []
        for slot in range(n):
            if not alive[slot]:
                continue
            stale = not pinned[slot] and strength[slot] < threshold
            count += stale
            if stale != was_stale[slot]:
                updated.append(self._mark_stale(slot, stale))
        return count, updated

    def _mark_stale(self, slot: int, stale: bool) -> MemoryItem:
        """Set the item at `slot` stale (or active again) and its column mark; return the item."""
        item = self.at(slot)
        item.status = "stale" if stale else "active"
        self.columns.marked_stale[slot] = stale
        return item

    def counts(self, strengths: np.ndarray, *, forgotten: int) -> dict[str, int]:
        """The status counts: live items active, stale and pinned, and `forgotten` (counted by the store)."""
        columns, n = self.columns, self.columns.used
        alive = columns.alive[:n]
        stale = self.stale_mask(strengths)
        return {
            "active": int(alive.sum() - stale.sum()),
            "stale": int(stale.sum()),
            "forgotten": forgotten,
            "pinned": int((alive & columns.pinned[:n]).sum()),
        }

    def tokens(self) -> int:
        """Tokens of every live item's content."""
        columns, n = self.columns, self.columns.used
        return int(columns.tokens[:n][columns.alive[:n]].sum())

    def next_expiry(self) -> float | None:
        """When the next item will be forgotten untouched (None: no item ever will)."""
        columns, n = self.columns, self.columns.used
        times = columns.forget_times(self.config.forgotten_strength, self.config.decay_k)
        return float(times.min()) if self.config.auto_expire and n and np.isfinite(times.min()) else None
