"""Column arrays (numpy) mirroring the live items of one workspace, so that decay, selection and sweeps run
vectorised: 10^5 items are settled in a few milliseconds instead of a Python loop per item.

Slots are reused after removal; `seq` records write order (the final, deterministic tie-break)."""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Iterator
from itertools import repeat
from operator import attrgetter

import numpy as np

from amnesia.decay import CURVE_CODES, decayed, idle_forget_after
from amnesia.item import MemoryItem
from amnesia.selection import static_line_tokens, static_line_tokens_many

SCOPE_CODES: dict[str, int] = {"workspace": 0, "session": 1, "team": 2}
NO_OWNER = -1
# New items are written into the columns when a column is next read, or once FILL_EVERY of them wait: up to
# ONE_BY_ONE one by one, more in one numpy assignment per column. One by one costs a few microseconds per
# item; at once about one, plus tens of microseconds per fill (an engine that reads after every write fills
# one item at a time), while the items just written are still in the CPU cache.
ONE_BY_ONE = 32
FILL_EVERY = 1024

# The columns, in `_writers` order: (name, dtype, value of a free slot that was never used).
_NUMERIC: tuple[tuple[str, type, object], ...] = (
    ("alive", bool, False),
    ("base", np.float64, 0.0),
    ("anchor", np.float64, 0.0),
    ("ttl", np.float64, math.inf),
    ("expires", np.float64, math.inf),
    ("created", np.float64, 0.0),
    ("curve", np.int8, 0),
    ("pinned", bool, False),
    ("no_decay", bool, False),
    ("tokens", np.int64, 0),
    ("size", np.int64, 0),
    ("scope", np.int8, 0),
    ("owner", np.int64, NO_OWNER),
    ("marked_stale", bool, False),
    ("seq", np.int64, 0),  # SEQ and LINE_TOKENS, last: written for a new item only
    ("line_tokens", np.int64, 0),
)
SEQ, LINE_TOKENS = 14, 15
_OBJECTS = ("hashes",)
_NAMES = tuple("_" + name for name in (*(name for name, _, _ in _NUMERIC), *_OBJECTS))  # stored arrays
INITIAL_CAPACITY = 64  # slots of a new store (doubled when full)
PURGE_SLACK = 1024  # stale slot_of entries are purged once they outnumber the live by more than this


def _empty_columns(capacity: int) -> list[np.ndarray]:
    """The columns of `capacity` never-used slots, in `_NAMES` order."""
    columns = [np.full(capacity, fill, dtype=dtype) for _, dtype, fill in _NUMERIC]
    return columns + [np.full(capacity, None, dtype=object) for _ in _OBJECTS]


def _read_only(columns: list[np.ndarray]) -> tuple[np.ndarray, ...]:
    for column in columns:
        column.flags.writeable = False
    return tuple(columns)


# A new store's columns, copied rather than filled: a replay builds an engine per pair, and copying is several
# times cheaper than np.full. Read-only: only ever copied.
_INITIAL_COLUMNS = _read_only(_empty_columns(INITIAL_CAPACITY))


def _column(name: str, doc: str) -> property:
    """A column, read through this property: new items' values are filled in first (`_fill_new`)."""
    stored = attrgetter("_" + name)

    def read(self: ItemColumns) -> np.ndarray:
        if self._new_slots:
            self._fill_new()
        return stored(self)

    return property(read, doc=doc)


class ItemColumns:
    """One numpy array per item field the engine computes on, indexed by slot. A new item gets its slot (and
    its `slot_of` entry) at once, and its values when a column is next read: a run of writes fills the
    columns in one numpy assignment each instead of a dozen scalar writes per item."""

    alive = _column("alive", "True for a slot holding a live item")
    base = _column("base", "base strength (MemoryItem.strength)")
    anchor = _column("anchor", "last_accessed_at: the decay clock's start")
    ttl = _column("ttl", "seconds (inf: none)")
    expires = _column("expires", "the hard deadline expires_at (inf: none)")
    created = _column("created", "created_at")
    curve = _column("curve", "decay curve, as CURVE_CODES")
    pinned = _column("pinned", "pinned")
    no_decay = _column("no_decay", "pinned or without a ttl: never decays")
    tokens = _column("tokens", "tokens of the content")
    size = _column("size", "content bytes")
    scope = _column("scope", "scope, as SCOPE_CODES")
    owner = _column("owner", "owner_id, as a code (NO_OWNER: none)")
    marked_stale = _column("marked_stale", "status recorded as stale")
    seq = _column("seq", "write order (the final tie-break)")
    line_tokens = _column("line_tokens", "tokens of the item's block line less its age")
    hashes = _column("hashes", "the audit's keyed hash of its content, when it was handed one")

    def __init__(
        self, *, auto_expire: bool = True, rank_only: bool = False, capacity: int = INITIAL_CAPACITY
    ) -> None:
        self.auto_expire = auto_expire  # whether unpinned items are ever forgotten (forget_times)
        self.rank_only = rank_only  # decay_mode "rank": decay orders, only a hard expires_at forgets
        self.used = 0  # slots in use or freed: the arrays' meaningful prefix
        # The item in each slot (None: a free slot), set at once (not when the columns are filled in): a
        # plain list, as it is read one slot at a time far more often than gathered.
        self.item_at: list[MemoryItem | None] = []
        # The slot of every live id, in write order (the order `ItemIndex.items` lists them in). `free_slots`
        # may leave the entries of the ids it frees in place (a sweep then deletes thousands of items without
        # one dict deletion each): such a stale entry is recognised by `item_at[slot]` no longer holding its
        # id (`live_slot`), and stale entries are purged once they outnumber the live. An id that comes back
        # goes last (`insert`), as in a dict it was deleted from.
        self.slot_of: dict[str, int] = {}
        self._stale = 0  # stale entries in slot_of
        self._free: list[int] = []
        self._owner_codes: dict[str, int] = {}
        self._next_seq = 0
        # New items whose values are not in the columns yet, in write order: their slots and content hashes
        # (their items are `item_at[slot]`: a pending slot is filled in before anything frees or rewrites it).
        self._new_slots: list[int] = []
        self._new_hashes: list[str | None] = []
        self.capacity = 0
        self._allocate(capacity)

    def _allocate(self, capacity: int) -> None:
        # The stored arrays directly: growing fills nothing in (new items' slots are below the old capacity or
        # are filled in later, into the new arrays).
        if capacity == INITIAL_CAPACITY:
            columns = [empty.copy() for empty in _INITIAL_COLUMNS]
        else:
            columns = _empty_columns(capacity)
        for name, new in zip(_NAMES, columns, strict=True):
            if self.capacity:
                new[: self.capacity] = getattr(self, name)[: self.capacity]
            setattr(self, name, new)
        self.capacity = capacity
        # One writer per numeric column, in _NUMERIC order, for writing one item: a memoryview item
        # assignment costs about half a numpy scalar one. (The views are rebuilt with the arrays.)
        self._writers = tuple(memoryview(getattr(self, "_" + name)) for name, _, _ in _NUMERIC)

    def __len__(self) -> int:
        return len(self.slot_of) - self._stale

    def live_slot(self, item_id: str) -> int | None:
        """The slot of the live item `item_id` (None: no live item has that id)."""
        slot = self.slot_of.get(item_id)
        if slot is None:
            return None
        item = self.item_at[slot]
        return slot if item is not None and item.id == item_id else None

    def live_items(self) -> list[MemoryItem]:
        """The live items in write order."""
        if not self._stale:  # every entry is live: one C-level pass
            return list(map(self.item_at.__getitem__, self.slot_of.values()))  # type: ignore[arg-type]
        return [item for _, _, item in self._live_entries()]

    def _live_entries(self) -> Iterator[tuple[str, int, MemoryItem]]:
        """(id, slot, item) of each live item, in write order: `slot_of` less its stale entries."""
        item_at = self.item_at
        for item_id, slot in self.slot_of.items():
            item = item_at[slot]
            if item is not None and item.id == item_id:
                yield item_id, slot, item

    def owner_code(self, owner_id: str | None) -> int:
        if owner_id is None:
            return NO_OWNER
        return self._owner_codes.setdefault(owner_id, len(self._owner_codes))

    def upsert(self, item: MemoryItem, content_hash: str | None = None) -> int:
        """Write `item`'s fields into its slot (a new id gets a new slot and the next write-order number);
        `content_hash`, the audit's keyed hash of its content, is kept with it when given."""
        slot = self.live_slot(item.id)
        if slot is None:  # not indexed (or a stale entry)
            return self.insert(item, content_hash)
        if self._new_slots:  # the item's slot may wait to be filled in (from the item as it was then)
            self._fill_new()
        self._write(slot, item)  # an item indexed already: rewrite its values
        self.item_at[slot] = item
        if content_hash is not None:
            self._hashes[slot] = content_hash
        return slot

    def insert(self, item: MemoryItem, content_hash: str | None = None) -> int:
        """`upsert` of an item whose id is not indexed (a write): a new slot, the next write-order number."""
        item_id = item.id
        if self._free:
            slot = self._free.pop()
            self.item_at[slot] = item
        else:
            slot = self.used
            if slot >= self.capacity:
                self._allocate(2 * self.capacity)
            self.used = slot + 1
            self.item_at.append(item)
        slot_of = self.slot_of
        known = len(slot_of)
        slot_of[item_id] = slot  # no lookup first (most ids are new): the length says if one was there
        if len(slot_of) == known:  # a stale entry: the id was removed, and comes back, last in write order
            del slot_of[item_id]
            slot_of[item_id] = slot
            self._stale -= 1
        new_slots = self._new_slots
        new_slots.append(slot)
        self._new_hashes.append(content_hash)
        if len(new_slots) >= FILL_EVERY:
            self._fill_new()
        return slot

    def _fill_new(self) -> None:
        """Write the new items' values into the columns (before anything reads them)."""
        slots, hashes = self._new_slots, self._new_hashes
        self._new_slots, self._new_hashes = [], []
        items = list(map(self.item_at.__getitem__, slots))
        if len(slots) <= ONE_BY_ONE:
            writers, sequence = self._writers, self._next_seq
            for slot, item, content_hash in zip(slots, items, hashes, strict=True):
                self._hashes[slot] = content_hash
                writers[SEQ][slot] = sequence
                sequence += 1
                # What the block line says besides its age (id, kind, pin, source, content) never changes
                # for an id, so it is counted once, not on every touch.
                writers[LINE_TOKENS][slot] = static_line_tokens(item)
                self._write(slot, item)
        else:
            self._write_many(np.array(slots, dtype=np.intp), items, hashes)
        self._next_seq += len(slots)

    def _write(self, slot: int, item: MemoryItem) -> None:
        """Write the fields of one item that can change (all but seq and line_tokens) into `slot`."""
        (
            alive,
            base,
            anchor,
            ttl,
            expires,
            created,
            curve,
            pinned,
            no_decay,
            tokens,
            size,
            scope,
            owner,
            stale,
        ) = self._writers[:SEQ]
        alive[slot] = True
        base[slot] = item.strength
        anchor[slot] = item.last_accessed_at
        seconds = item.ttl
        ttl[slot] = math.inf if seconds is None else seconds
        deadline = item.expires_at
        expires[slot] = math.inf if deadline is None else deadline
        created[slot] = item.created_at
        curve[slot] = CURVE_CODES[item.curve]
        pinned[slot] = item.pinned
        no_decay[slot] = item.pinned or seconds is None
        tokens[slot] = item.tokens
        size[slot] = item.size_bytes
        scope[slot] = SCOPE_CODES[item.scope]
        owner[slot] = NO_OWNER if item.owner_id is None else self.owner_code(item.owner_id)
        stale[slot] = item.status == "stale"

    def _write_many(self, slots: np.ndarray, items: list[MemoryItem], hashes: list[str | None]) -> None:
        """`_fill_new` for many new items: each column in one numpy assignment (`_write`'s values exactly: a
        test compares the two). The values are read row by row in one comprehension, where attribute reads
        are cheapest, and turned into columns by zip."""
        count = len(items)
        inf, curves, scopes, owner_code = math.inf, CURVE_CODES, SCOPE_CODES, self.owner_code
        rows = [
            (  # _NUMERIC's order, from base to marked_stale
                item.strength,
                item.last_accessed_at,
                inf if item.ttl is None else item.ttl,
                inf if item.expires_at is None else item.expires_at,
                item.created_at,
                curves[item.curve],
                item.pinned,
                item.pinned or item.ttl is None,
                item.tokens,
                item.size_bytes,
                scopes[item.scope],
                NO_OWNER if item.owner_id is None else owner_code(item.owner_id),
                item.status == "stale",
            )
            for item in items
        ]
        for (name, dtype, _), values in zip(_NUMERIC[1:SEQ], zip(*rows, strict=True), strict=True):
            getattr(self, "_" + name)[slots] = np.fromiter(values, dtype, count)
        self._alive[slots] = True
        self._seq[slots] = np.arange(self._next_seq, self._next_seq + count)
        self._line_tokens[slots] = static_line_tokens_many(items)
        self._hashes[slots] = np.fromiter(hashes, object, count)

    def pop_slots(self, item_ids: list[str]) -> np.ndarray:
        """Take the live `item_ids` out of `slot_of`; returns their slots (to free: `free_slots`)."""
        return np.fromiter(map(self.slot_of.pop, item_ids), dtype=np.intp, count=len(item_ids))

    def free_slots(self, slots: np.ndarray, *, stale_entries: bool) -> None:
        """Free live `slots` (their numeric values stay until reused). `stale_entries`: their ids are still in
        `slot_of` (not taken out by `pop_slots`: a sweep), and their entries are now stale."""
        self.alive[slots] = False
        self.hashes[slots] = None
        freed = slots.tolist()
        item_at = self.item_at
        deque(map(item_at.__setitem__, freed, repeat(None)), maxlen=0)  # the items' content goes with them
        self._free.extend(freed)
        if stale_entries:
            self._stale += len(freed)
            if self._stale > len(self) + PURGE_SLACK:  # purge: amortised, one pass per as many removals
                self.slot_of = {item_id: slot for item_id, slot, _ in self._live_entries()}
                self._stale = 0

    def strengths(self, now: float, decay_k: float, auto_expire: bool) -> np.ndarray:
        n = self.used
        if not auto_expire:
            return self.base[:n].copy()
        return decayed(
            self.base[:n],
            now - self.anchor[:n],
            self.ttl[:n],
            self.curve[:n],
            self.no_decay[:n],
            decay_k,
            zero_at_ttl=not self.rank_only,
        )

    def due_small(
        self, now: float, strengths: np.ndarray, forgotten_strength: float
    ) -> list[tuple[int, bool]]:
        """`due` on a few slots (numpy's per-call cost is most of a small store's sweep): (slot, expired) of
        each due slot, in slot order, from the same comparisons on the same float64 values."""
        n, now = self.used, float(now)  # float64 arithmetic, as numpy's on the columns
        alive, pinned, expires = self.alive[:n].tolist(), self.pinned[:n].tolist(), self.expires[:n].tolist()
        live = [s for s in range(n) if alive[s] and not pinned[s]]
        if self.rank_only:  # only the hard deadline forgets
            return [(s, True) for s in live if now >= expires[s]]
        anchor, ttl, no_decay = self.anchor[:n].tolist(), self.ttl[:n].tolist(), self.no_decay[:n].tolist()
        strength = strengths.tolist()
        found = []
        for s in live:
            expired = now >= expires[s] or now - anchor[s] >= ttl[s]
            if expired or (strength[s] < forgotten_strength and not no_decay[s]):
                found.append((s, expired))
        return found

    def due(
        self, now: float, strengths: np.ndarray, forgotten_strength: float
    ) -> tuple[np.ndarray, np.ndarray]:
        """(due, expired) masks: due items must go; expired ones with reason "expired", the rest "stale"."""
        n = self.used
        live = ~self.pinned[:n]
        live &= self.alive[:n]
        expired = now >= self.expires[:n]
        if self.rank_only:  # only the hard deadline forgets
            expired &= live
            return expired, expired
        # In place where it can be: a sweep of 10^5 items pays for every new array.
        expired |= now - self.anchor[:n] >= self.ttl[:n]
        expired &= live
        due = strengths < forgotten_strength
        due &= ~self.no_decay[:n]
        due &= live
        due |= expired
        return due, expired

    def visible(
        self, owner_id: str | None, include_workspace: bool, team_id: str | None = None
    ) -> np.ndarray:
        """The live slots a caller sees (`amnesia.caller.Caller.sees`): workspace ones when
        `include_workspace`, the session ones `owner_id` owns, the team ones `team_id` owns."""
        n = self.used
        if self._new_slots:  # their owners get their codes when they are filled in
            self._fill_new()
        mask = self.alive[:n] & (self.scope[:n] == 0) if include_workspace else np.zeros(n, dtype=bool)
        for scope, owner in (("session", owner_id), ("team", team_id)):
            if owner is not None and owner in self._owner_codes:
                mask |= (
                    self.alive[:n]
                    & (self.scope[:n] == SCOPE_CODES[scope])
                    & (self.owner[:n] == self._owner_codes[owner])
                )
        return mask

    def injection_order(self, slots: np.ndarray, strengths: np.ndarray) -> np.ndarray:
        """`slots` sorted pinned first, then strength desc, last access desc, newest first, write order."""
        primary = strengths[slots] + 2.0 * self.pinned[slots]
        order = np.lexsort((self.seq[slots], -self.created[slots], -self.anchor[slots], -primary))
        return slots[order]

    def strongest(
        self, slots: np.ndarray, strengths: np.ndarray, count: int
    ) -> tuple[np.ndarray, np.ndarray]:
        """Split `slots` into the `count` that come first in injection order and the rest, without sorting
        everything: one partition per sort key, descending into the ties at the cut only when needed (a store
        written in one instant is all ties on strength)."""
        if len(slots) <= count:
            return slots, slots[:0]
        keys = (  # larger first, in injection-order priority
            strengths + 2.0 * self.pinned[: len(strengths)],
            self.anchor[: len(strengths)],
            self.created[: len(strengths)],
            -self.seq[: len(strengths)],
        )
        chosen: list[np.ndarray] = []
        pool, wanted = slots, count
        for key in keys:
            values = key[pool]
            if values.min() == values.max():  # all tied on this key: the next one decides (two passes, not
                continue  # a partition and two copies of the pool)
            cut = np.partition(values, len(values) - wanted)[len(values) - wanted]
            chosen.append(pool[values > cut])
            pool, wanted = pool[values == cut], wanted - int((values > cut).sum())
            if len(pool) <= wanted:
                break
        chosen.append(pool[:wanted])  # seq is unique, so the pool fits exactly by now
        head = np.concatenate(chosen)
        outside = np.ones(len(strengths), dtype=bool)  # a mask, not setdiff1d's sort of every slot
        outside[head] = False
        return head, slots[outside[slots]]

    def eviction_order(self, strengths: np.ndarray) -> np.ndarray:
        """Unpinned live slots, weakest first (then least recently used, then oldest write)."""
        n = self.used
        slots = np.flatnonzero(self.alive[:n] & ~self.pinned[:n])
        order = np.lexsort((self.seq[slots], self.anchor[slots], strengths[slots]))
        return slots[order]

    def forget_times(
        self, forgotten_strength: float, decay_k: float, slots: np.ndarray | None = None
    ) -> np.ndarray:
        """When each unpinned live item (of `slots`, default all) will be forgotten untouched (inf: never)."""
        at = slice(0, self.used) if slots is None else slots
        if self.rank_only:
            when = self.expires[at]
        else:
            idle = idle_forget_after(self.base[at], self.ttl[at], self.curve[at], forgotten_strength, decay_k)
            when = np.minimum(self.anchor[at] + idle, self.expires[at])
        return np.where(self.alive[at] & ~self.pinned[at] & self.auto_expire, when, np.inf)
