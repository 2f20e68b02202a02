"""`Amnesia`: the memory bus (seed 000 §5.1, §6.2). Plug memories in with a shelf life, inject the strongest
ones within a hard token budget, and unplug what expires, decays, is superseded or is told to go — physically
deleted and audited with a keyed hash.

This class is the facade: it orders the steps of each operation — sync with the store, forget what is due,
decide, commit, update the index, emit events — and leaves the work to the modules that own it:
argument checks (`checks`, `item.new_item`), the live items and their numpy columns (`index.ItemIndex`), audit
entries (`audit.AuditWriter`), injection planning (`planning`, `selection`) and the returned views (`views`).
Every read path (inspect, plugs, status, preview, select, audit) first forgets what is due, so expiry never
waits for a sweep; recall and touch first revive what they hit (seed §5.3), then forget the rest. A store
shared with other processes is reloaded when it reports an external change.
"""

from __future__ import annotations

import functools
import secrets
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import compress
from typing import Any

import numpy as np

from amnesia import decay, views
from amnesia.audit import (
    FORGET_REASONS,
    ITEM_ID,
    AuditEntry,
    AuditRow,
    AuditWriter,
    as_entry,
    restorable_entry,
    restore_arguments,
)
from amnesia.caller import Caller
from amnesia.checks import check_choice, check_count, check_query, check_time
from amnesia.clock import Clock, SystemClock
from amnesia.config import Config
from amnesia.errors import InvalidInput, NotFound, NotRestorable, StoreBusy, StoreConflict
from amnesia.events import EventBus, Listener, injected_payload, touched_payload
from amnesia.index import ForgetFilter, ItemIndex
from amnesia.item import SCOPES, UNSET, MemoryItem, new_item
from amnesia.planning import plan_injection, resolve_budget
from amnesia.selection import Selection, with_notes, with_renewal
from amnesia.stores.base import Store
from amnesia.stores.memory import InMemoryStore
from amnesia.text import drawn_on

RECENT_FORGETS = 5
WRITE_ATTEMPTS = 100  # plans of one write, each after another process changed the store under the last
_ATTEMPTS = range(WRITE_ATTEMPTS)
# What most writes retire, evict and audit: one shared empty tuple, not three new lists per write.
_NONE: tuple[Any, ...] = ()


def random_id() -> str:
    """A fresh memory id: "m-" and 12 random hex digits."""
    return "m-" + secrets.token_hex(6)


def _deleted(entries: Sequence[AuditRow], deleted: list[str]) -> list[bool]:
    """Whether the store deleted each of the forget `entries` (`deleted`: the ids it did; another process may
    have forgotten some first). A function of its own: a comprehension over a set local to a method would make
    that method allocate a closure cell on every call, and `_write` runs on every write."""
    kept = set(deleted)
    return [entry[ITEM_ID] in kept for entry in entries]


class Amnesia:
    """One workspace's memory over a store; every public method is one operation on it."""

    def __init__(
        self,
        store: Store | None = None,
        config: Config | None = None,
        clock: Clock | None = None,
        workspace_id: str = "default",
        *,
        id_factory: Callable[[], str] | None = None,
    ) -> None:
        self.store: Store = store if store is not None else InMemoryStore()
        self.config = config or Config()
        self.clock: Clock = clock or SystemClock()
        self.workspace_id = workspace_id
        self._new_id = id_factory or random_id
        self._events = EventBus()
        self._auditor = AuditWriter(self.store.secret, workspace_id, keep_content=self.config.restorable)
        self._last_injection: dict[str, Any] | None = None
        self._load()

    # ------------------------------------------------------------------ state
    def _load(self) -> None:
        self._index = ItemIndex(self.store.load_items(self.workspace_id), self.config)

    @property
    def _items(self) -> Mapping[str, MemoryItem]:
        """The live items by id, in write order (read-only: the index owns them)."""
        return self._index.items

    def _sync(self) -> None:
        if self.store.changed_externally():
            self._load()

    def _fresh_id(self) -> str:
        item_id = self._new_id()
        # Most ids were never indexed: a C-level lookup in the slot map (stale entries included) says so.
        if item_id in self._index.columns.slot_of and item_id in self._index.items:
            raise InvalidInput(f"id: the id factory returned {item_id!r}, which is already in use")
        return item_id

    def on(self, event: str, callback: Listener) -> Callable[[], None]:
        """Subscribe to "written" | "forgotten" | "injected" | "touched"; returns an unsubscribe callable."""
        return self._events.on(event, callback)

    # ------------------------------------------------------------------ writing
    def remember(
        self,
        content: str,
        *,
        kind: str = "fact",
        ttl: float | str | object | None = UNSET,
        pin: bool = False,
        curve: str | None = None,
        tags: Iterable[str] | None = (),
        source: str = "user",
        scope: str = "workspace",
        owner_id: str | None = None,
        key: str | None = None,
        supersedes: str | None = None,
        expires_at: float | None = None,
        source_ref: dict[str, Any] | None = None,
    ) -> views.MemoryView:
        """Plug a memory in. `ttl` is seconds or a duration string ("7d"); None only with pin=True."""
        if self.store.changed_externally():  # _sync, inline: every write asks
            self._load()
        now = self.clock.now()
        item = new_item(  # by position: 17 keywords cost a microsecond of matching names on every write
            self.config,
            self._fresh_id,
            content,
            kind,
            ttl,
            pin,
            curve,
            tags,
            source,
            scope,
            owner_id,
            key,
            supersedes,
            expires_at,
            source_ref,
            self.workspace_id,
            now,
        )
        if self.config.expiry_from_text:
            self._cap_by_text(item)
        return self._plug(item, item.supersedes, now)

    def _cap_by_text(self, item: MemoryItem) -> None:
        """expiry_from_text: a text that states its own end ("until Friday") makes that end the item's hard
        deadline when it comes before the ttl's expiry (and before any deadline the caller gave); it is then
        forgotten like any item whose deadline passed (audited "expired")."""
        from amnesia.deadlines import text_deadline  # the reader's tables load only for engines that use it

        found = text_deadline(item, self.config.calendar_utc_offset)
        if found is not None:
            item.expires_at = found.end

    def _plug(self, item: MemoryItem, retire_id: str | None, now: float) -> views.MemoryView:
        """Write a checked item: retire what it supersedes, evict to make room, commit, index, announce.
        The plan is made on the loaded items; if another process changed the store before the commit (it
        may have taken the free bytes or written the same key), the commit refuses and the write is
        planned again on a fresh load."""
        for _ in _ATTEMPTS:
            # Most writes supersede nothing and fit (`overflow` <= 0 with nothing retired): two tests
            # instead of two calls. (Unkeyed items stating a subject can be superseded by one that states
            # the same: supersede_same_subject.)
            index = self._index
            simple = retire_id is None and item.key is None and not index.ids_by_subject
            retired: Sequence[MemoryItem] = _NONE if simple else index.supersession_targets(item, retire_id)
            fits = simple and index.bytes + item.size_bytes <= self.config.max_store_bytes
            evicted = _NONE if fits else self._make_room(item, retired, now)
            entries: Sequence[AuditRow] = _NONE
            if retired or evicted:  # most writes retire and evict nothing
                reasons = ["superseded"] * len(retired) + ["evicted"] * len(evicted)
                gone = [*retired, *evicted]
                entries = self._auditor.forgets(gone, reasons, now, index.known_hashes(gone))
            try:  # the write itself, inline (a call per write less)
                deleted = self.store.commit(
                    self.workspace_id, forget=entries, save=(item,), if_unchanged=True
                )
                if entries:
                    self._after_forget(list(compress(entries, _deleted(entries, deleted))), deleted)
                # Hashed now, while it is written, so that forgetting it later (most often in a sweep, with
                # thousands of others) only looks its hash up.
                index.add(item, self._auditor.hash(item.content))
                view = views.memory_view(item, self.config, retired, evicted)  # by position: every write
                if self._events.listeners["written"]:
                    self._events.emit("written", view.to_dict())
                return view
            except StoreConflict:
                self._load()
        raise StoreBusy(f"write: the store changed under every one of {WRITE_ATTEMPTS} attempts; retry later")

    plug = remember

    def _make_room(self, item: MemoryItem, retired: Sequence[MemoryItem], now: float) -> list[MemoryItem]:
        """Unpinned items to evict (weakest first) so the write fits max_store_bytes; refuse if it cannot."""
        if self._index.overflow(item, retired) <= 0:
            return []
        strengths, _, _ = self._forget_due(now)  # what is due goes first, under its own reason
        return self._index.eviction_victims(item, retired, strengths)

    # ------------------------------------------------------------------ forgetting
    def forget(
        self,
        id: str | None = None,
        *,
        query: str | None = None,
        tags: Iterable[str] | None = None,
        key: str | None = None,
        scope: str | None = None,
        owner_id: str | None = None,
        all: bool = False,
        confirm: bool = False,
        reason: str = "manual",
        caller: Caller | None = None,
    ) -> views.ForgetSummary:
        """Unplug by id, or by every given filter at once (query AND tags AND key AND scope AND owner), or
        everything with all=True and confirm=True. The only path that removes pinned memories. With a
        `caller`, only what it could recall: an id it cannot see forgets nothing, as an unknown id does."""
        self._sync()
        check_choice("reason", reason, FORGET_REASONS)
        wanted = ForgetFilter.parse(id, query, tags, key, scope, owner_id, everything=all, confirm=confirm)
        if id is not None:
            targets = [self._index.items[id]] if id in self._index.items else []
        else:  # all=True with filters narrows "everything" to what matches them
            targets = self._index.matching(wanted)
        if caller is not None:
            targets = [item for item in targets if caller.sees(item.scope, item.owner_id)]
        ids = self._forget_items(targets, reason, self.clock.now())
        return views.ForgetSummary(len(ids), tuple(ids), reason)

    unplug = forget

    def end_agent(self, owner_id: str) -> views.ForgetSummary:
        """An agent ended: unplug its session memories (reason agent-disposed) unless promoted. A team's
        memories outlive any one member: `end_team` unplugs them."""
        return self._dispose("session", owner_id, "owner_id")

    def end_team(self, team_id: str) -> views.ForgetSummary:
        """A team was disposed (seed §6.10, `agent/disposed` of a team): unplug the memories its members
        shared (scope team, owner `team_id`; reason agent-disposed) unless promoted."""
        return self._dispose("team", team_id, "team_id")

    def _dispose(self, scope: str, owner_id: str, field: str) -> views.ForgetSummary:
        self._sync()
        if not isinstance(owner_id, str) or not owner_id:
            raise InvalidInput(f"{field}: required (a non-empty string), got {owner_id!r}")
        targets = [i for i in self._index.items.values() if i.scope == scope and i.owner_id == owner_id]
        ids = self._forget_items(targets, "agent-disposed", self.clock.now())
        return views.ForgetSummary(len(ids), tuple(ids), "agent-disposed")

    def _forget_items(
        self,
        items: Sequence[MemoryItem],
        reason: str | Sequence[str],
        now: float,
        hashes: Sequence[str | None] | None = None,
        slots: np.ndarray | None = None,
    ) -> list[str]:
        """Forget live `items` (audited, then deleted); `hashes`: their known audit hashes (default: looked
        up); `slots`: their column slots, if known. Returns the ids deleted."""
        if not items:
            return []
        reasons = [reason] * len(items) if isinstance(reason, str) else reason
        if hashes is None:
            hashes = self._index.known_hashes(items)
        entries = self._auditor.forgets(items, reasons, now, hashes)
        deleted = self.store.commit(self.workspace_id, forget=entries)
        if len(deleted) != len(entries):  # another process forgot some first
            kept = _deleted(entries, deleted)
            if slots is not None:
                slots = slots[kept]
            entries = list(compress(entries, kept))
        self._after_forget(entries, deleted, slots)
        return deleted

    def _after_forget(
        self, entries: Sequence[AuditRow], deleted: list[str], slots: np.ndarray | None = None
    ) -> None:
        """Drop what the store deleted (`deleted`: the ids of `entries`, in their order; `slots`: their
        slots, if known) and announce it."""
        if not entries:  # most writes retire nothing: skip the column update
            return
        self._index.remove(deleted, slots)
        if self._events.listeners["forgotten"]:
            for entry in entries:
                self._events.emit("forgotten", as_entry(entry).brief())

    def _forget_due(self, now: float) -> tuple[np.ndarray, list[str], dict[str, int]]:
        """Forget every due item; returns the strengths (dead slots: see `alive`), ids and reason counts."""
        strengths = self._index.strengths(now)
        due = self._index.due(now, strengths)
        if not len(due.slots):
            return strengths, [], {}
        # A store whose commits cost nothing (in memory) forgets in chunks: each chunk's items are audited,
        # deleted and freed while they are still in the CPU cache (a 10^4-item sweep of 10^5: ~30% faster).
        # A durable store forgets everything in one transaction, as its commits are what cost.
        chunk = getattr(self.store, "forget_chunk", None) or len(due.slots)
        forgotten: list[str] = []
        for start in range(0, len(due.slots), chunk):
            slots = due.slots[start : start + chunk]
            items, hashes = self._index.at_slots(slots)
            forgotten += self._forget_items(items, due.reasons[start : start + chunk], now, hashes, slots)
        counts = {why: due.reasons.count(why) for why in ("expired", "stale") if why in due.reasons}
        return strengths, forgotten, counts

    def _live(self, item_id: str, now: float) -> MemoryItem | None:
        """The item, or None if it is gone or was due (then it is forgotten now)."""
        item = self._index.items.get(item_id)
        if item is None:
            return None
        why = decay.due_reason(item, now, self.config)
        if why is not None:
            self._forget_items([item], why, now)
            return None
        return item

    # ------------------------------------------------------------------ touching
    def _touch_all(self, items: Sequence[MemoryItem], now: float, reason: str) -> None:
        for item in items:
            self._index.touch(item, now)
            if self._events.listeners["touched"]:
                self._events.emit("touched", touched_payload(item, reason, now))
        if items:
            self.store.commit(self.workspace_id, save=items)

    def _revivable(self, item: MemoryItem, now: float) -> bool:
        """Whether a recall hit on `item` may revive it (seed §5.3): it is live, or due but not yet swept —
        still stored — and due only by idleness or decay. A hard `expires_at` is a deadline no access moves:
        an item past it is never revived."""
        return decay.due_reason(item, now, self.config) is None or not decay.past_deadline(item, now)

    def touch(self, id: str) -> views.PlugView | None:
        """A recall hit: restart the decay clock and boost strength. Revives a stale memory, and one that is
        due but not yet swept (seed §5.3) unless its hard deadline has passed (then it is forgotten now)."""
        self._sync()
        now = self.clock.now()
        item = self._index.items.get(id)
        if item is None:
            return None
        if not self._revivable(item, now):
            self._forget_items([item], "expired", now)
            return None
        self._touch_all([item], now, "recall")
        return views.plug_view(item, now, self.config)

    def recall(
        self,
        query: str,
        *,
        owner_id: str | None = None,
        limit: int | None = None,
        include_workspace: bool = True,
        team_id: str | None = None,
    ) -> list[views.PlugView]:
        """Stored memories visible to the caller (`amnesia.caller.Caller`: `owner_id`'s session, the
        workspace unless `include_workspace` is False, team `team_id`'s) that match `query`, strongest first;
        each is touched (full renewal, whatever renew_on_inject says). Seed §5.3: a hit revives a stale
        memory, and one that is due but not yet swept; it comes back active. What is due and not hit — or
        past its hard deadline — is forgotten after the hits are renewed."""
        self._sync()
        check_query(query)
        if limit is not None:
            check_count("limit", limit, minimum=1)
        now = self.clock.now()
        strengths = self._index.strengths(now)
        revivable = functools.partial(self._revivable, now=now)
        hits = self._index.recall_hits(
            query, strengths, owner_id, include_workspace, limit, revivable, team_id=team_id
        )
        self._touch_all(hits, now, "recall")
        self._forget_due(now)
        return [views.plug_view(item, now, self.config) for item in hits]

    # ------------------------------------------------------------------ injection
    def _plan(
        self,
        budget_tokens: int | None,
        owner_id: str | None,
        include_workspace: bool,
        team_id: str | None,
        now: float,
        query: str | None,
    ) -> tuple[Selection, dict[str, int], int, str | None, tuple[MemoryItem, ...]]:
        """The selection, what was left out, the budget, the query it was ranked by (None: the strength
        order — no query, a blank one, or injection_order "strength") and what the injection renews (nothing
        unless renew_on_inject is "full")."""
        budget = resolve_budget(budget_tokens, self.config.max_injected_tokens)
        if query is not None and not isinstance(query, str):
            raise InvalidInput(f"query: expected a string or None, got {type(query).__name__}")
        ranked_by = query if query and query.strip() and self._index.relevance is not None else None
        strengths, _, _ = self._forget_due(now)  # the budget is checked first: a refused call forgets nothing
        selection, excluded = plan_injection(
            self._index, strengths, budget, owner_id, include_workspace, now, ranked_by, team_id
        )
        renewed: tuple[MemoryItem, ...] = ()
        if self.config.renew_on_inject == "full":  # "used": report_answer renews; "none": nothing does
            renewing = selection
            if self._renews_by_strength(ranked_by):
                # The query changes what the model sees, not which memories live longer: what is renewed
                # is what the strength order (seed §6.4) would inject at this budget.
                renewing, _ = plan_injection(
                    self._index, strengths, budget, owner_id, include_workspace, now, None, team_id
                )
            renewed = tuple([candidate.item for candidate in renewing.chosen])
        return selection, excluded, budget, ranked_by, renewed

    def _renews_by_strength(self, ranked_by: str | None) -> bool:
        """Whether an injection ranked by `ranked_by` renews the strength order's picks instead of its own
        (relevance_renewal "strength", under renew_on_inject "full")."""
        config = self.config
        return (
            ranked_by is not None
            and config.relevance_renewal == "strength"
            and config.renew_on_inject == "full"
        )

    def preview(
        self,
        budget_tokens: int | None = None,
        *,
        owner_id: str | None = None,
        include_workspace: bool = True,
        query: str | None = None,
        team_id: str | None = None,
    ) -> views.InjectionPlan:
        """Dry run of select_for_injection: the block and why each candidate was or was not taken, and why it
        ranks where it does. Touches nothing (due memories are still forgotten: expiry holds on every
        read)."""
        self._sync()
        now = self.clock.now()
        selection, excluded, budget, ranked_by, renewed = self._plan(
            budget_tokens, owner_id, include_workspace, team_id, now, query
        )
        if self._renews_by_strength(ranked_by):
            selection = with_renewal(selection, {item.id for item in renewed})
        if self.config.expiry_from_text:
            selection = self._with_text_deadlines(selection)
        return views.plan_view(selection, budget, excluded, now, ranked_by)

    def _with_text_deadlines(self, selection: Selection) -> Selection:
        """`selection` with the reason of each decision about an item whose text set its deadline naming that
        deadline and the words that stated it."""
        from amnesia.deadlines import deadline_note

        items, offset = self._index.items, self.config.calendar_utc_offset
        notes = {}
        for decision in selection.decisions:
            note = deadline_note(items[decision.id], offset) if decision.id in items else None
            if note is not None:
                notes[decision.id] = note
        return with_notes(selection, notes)

    def select_for_injection(
        self,
        budget_tokens: int | None = None,
        *,
        owner_id: str | None = None,
        include_workspace: bool = True,
        query: str | None = None,
        team_id: str | None = None,
    ) -> views.Injection:
        """The memory block for one model call: pinned first, then strength desc, then last access desc; whole
        items only, within the budget; stale memories never. With injection_order "relevance", `query` (the
        user's current message) ranks the unpinned candidates by BM25 relevance combined with strength
        (`amnesia.relevance`); without one, or in the default "strength" order, it is not used. Touches what
        it injects when renew_on_inject is "full" (the seed's rule: an injection is an access) — or, ranked
        by a query with relevance_renewal "strength", what the strength order would inject."""
        self._sync()
        now = self.clock.now()
        selection, excluded, budget, ranked_by, renewed = self._plan(
            budget_tokens, owner_id, include_workspace, team_id, now, query
        )
        mode = self.config.renew_on_inject
        if mode == "full":
            self._touch_all(renewed, now, "inject")
        injection = views.injection_view(selection, budget, excluded, mode, now, ranked_by is not None)
        self._last_injection = {
            "count": len(selection.chosen),
            "tokens": selection.tokens,
            "budget_tokens": budget,
            "at": now,
        }
        if self._events.listeners["injected"]:  # the payload copies every item ref: only when heard
            self._events.emit("injected", injected_payload(self._last_injection, injection))
        return injection

    def report_answer(
        self, injection: views.Injection, answer_text: str, *, question: str | None = None
    ) -> list[str]:
        """With renew_on_inject="used": renew the injected memories the answer drew on. An item counts as used
        when the answer contains one of its distinctive terms (a content word of 4+ letters, a number,
        or a CJK bigram) that neither another injected item nor the question contains. Returns the renewed
        ids."""
        self._sync()
        if self.config.renew_on_inject != "used" or not injection.items:
            return []
        now = self.clock.now()
        items = self._index.items
        injected = [items[ref["id"]] for ref in injection.items if ref["id"] in items]
        drawn = drawn_on({item.id: item.content for item in injected}, answer_text or "", question)
        used = [item for item in injected if item.id in drawn and self._live(item.id, now) is not None]
        self._touch_all(used, now, "answer")
        return [item.id for item in used]

    # ------------------------------------------------------------------ reading
    def inspect(self, id: str) -> views.PlugDetail | None:
        """Everything about one live memory, or None when there is none with that id."""
        self._sync()
        now = self.clock.now()
        item = self._live(id, now)
        return None if item is None else views.plug_detail(item, now, self.config)

    def plugs(self, scope: str | None = None) -> list[views.PlugView]:
        """Every live memory of the workspace (all scopes unless `scope` is given), in write order."""
        self._sync()
        if scope is not None:
            check_choice("scope", scope, SCOPES)
        now = self.clock.now()
        self._forget_due(now)
        live = self._index.items.values()
        return [views.plug_view(i, now, self.config) for i in live if scope is None or i.scope == scope]

    def status(self, caller: Caller | None = None) -> views.StatusView:
        """Counts per state, tokens and bytes, the next expiry, the last forgets and the last injection. With
        a `caller`, the last forgets are only those it could see; the counts stay store-wide numbers."""
        self._sync()
        now = self.clock.now()
        strengths, _, _ = self._forget_due(now)
        recent = [
            entry.brief()
            for entry in self._audit_seen_by(caller, RECENT_FORGETS * 2, None)
            if entry.reason in FORGET_REASONS
        ][:RECENT_FORGETS]
        index = self._index
        return views.StatusView(
            counts=index.counts(strengths, forgotten=self.store.count_forgets(self.workspace_id)),
            tokens=index.tokens(),
            bytes=index.bytes,
            next_expiry_at=index.next_expiry(),
            recent_forgets=tuple(recent),
            last_injection=dict(self._last_injection) if self._last_injection else None,
        )

    def audit(self, limit: int | None = 20, since: float | None = None, caller: Caller | None = None) -> list:
        """Newest first. Entries carry a keyed content hash, never the content (unless restorable). With a
        `caller`, only entries about memories it could have recalled, and their content only while
        restorable mode is on."""
        self._sync()
        if limit is not None:
            check_count("limit", limit, minimum=0)
        if since is not None:
            check_time("since", since)
        now = self.clock.now()
        self._forget_due(now)  # an item that is due now belongs in the audit now, not after the next sweep
        self._prune_audit(now)
        entries = self._audit_seen_by(caller, limit, since)
        if caller is not None and not self.config.restorable:  # kept from a restorable past: not shown
            entries = [entry._replace(content=None, restore_fields=None) for entry in entries]
        return entries

    def _audit_seen_by(self, caller: Caller | None, limit: int | None, since: float | None) -> list:
        """The newest `limit` audit entries `caller` may see (None: all), reading the store in growing
        pages: another agent's forgets may fill any page."""
        if caller is None or limit is None or limit == 0:
            entries = self.store.audit_entries(self.workspace_id, limit=limit, since=since)
            return entries if caller is None else [e for e in entries if caller.sees(e.scope, e.owner_id)]
        page = limit
        while True:
            entries = self.store.audit_entries(self.workspace_id, limit=page, since=since)
            seen = [entry for entry in entries if caller.sees(entry.scope, entry.owner_id)]
            if len(seen) >= limit or len(entries) < page:
                return seen[:limit]
            page *= 4

    def verify(self, text: str) -> list[AuditEntry]:
        """Forget entries whose item had exactly this content (recomputes the keyed hash)."""
        if not isinstance(text, str):
            raise InvalidInput("text: expected a string")
        self._sync()
        self._forget_due(self.clock.now())
        entries = self.store.audit_by_hash(self.workspace_id, self._auditor.hash(text))
        return [entry for entry in entries if entry.reason in FORGET_REASONS]

    def _prune_audit(self, now: float) -> int:
        return self.store.prune_audit(self.workspace_id, now - self.config.audit_retention)

    # ------------------------------------------------------------------ maintenance
    def sweep(self) -> views.SweepResult:
        """Settle every memory: forget what is due, record which are now stale, prune old audit entries."""
        self._sync()
        now = self.clock.now()
        strengths, ids, counts = self._forget_due(now)
        stale, updated = self._index.restale(strengths)
        if updated:
            self.store.commit(self.workspace_id, save=updated)
        pruned = self._prune_audit(now)
        return views.SweepResult(
            at=now,
            settled=len(self._index) + len(ids),
            forgotten=len(ids),
            by_reason=counts,
            ids=tuple(ids),
            stale=stale,
            audit_pruned=pruned,
        )

    def promote(self, id: str) -> views.PlugView:
        """Session/team memory -> workspace scope, so it outlives the agent that wrote it."""
        self._sync()
        now = self.clock.now()
        item = self._live(id, now)
        if item is None:
            raise NotFound(f"id: no live memory {id!r}")
        if item.scope != "workspace":
            item.scope = "workspace"
            item.owner_id = None
            self.store.commit(self.workspace_id, save=[item])
            self._index.update(item)
        return views.plug_view(item, now, self.config)

    def restore(self, id: str, caller: Caller | None = None) -> views.MemoryView:
        """Plug a forgotten memory back in from the audit (restorable mode) as it was — content, kind, scope,
        key, source (trust), pin, tags, curve, ttl, deadline — with a new id and a fresh clock; audited. Its
        key supersedes what now holds it; its recorded `supersedes` id is kept but retires nothing. With a
        `caller`, only a memory it could have recalled: any other id is NotFound, as an unknown one is."""
        self._sync()
        if not self.config.restorable:
            raise NotRestorable(
                "restore: restorable mode is off (Config.restorable=False); the content was deleted"
            )
        now = self.clock.now()
        about = self.store.audit_for_item(self.workspace_id, id)
        if caller is not None:
            about = [entry for entry in about if caller.sees(entry.scope, entry.owner_id)]
        entry = restorable_entry(about, id, now)
        arguments = restore_arguments(entry) | {"workspace_id": self.workspace_id, "now": now}
        view = self._plug(new_item(self.config, self._fresh_id, **arguments), None, now)
        restored = self._auditor.restored(entry, view.id, view.ttl, now)
        self.store.commit(self.workspace_id, audit=[restored])
        return view

    def close(self) -> None:
        """Close the store."""
        self.store.close()
