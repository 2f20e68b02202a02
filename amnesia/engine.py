"""`Amnesia`: the memory bus (seed 000 §5.1, §6.2). Plug memories in with a shelf life, inject the strongest
ones within a hard token budget, and unplug what expires, decays, is superseded or is told to go — physically
deleted and audited with a keyed hash.

The engine keeps the workspace's live items in a dict plus numpy columns (`ItemColumns`) so reads over 10^5
items stay in milliseconds; the store is written through on every change. Every read path (inspect, touch,
recall, plugs, status, preview, select) first forgets what is due, so expiry never waits for a sweep.
A store shared with other processes is reloaded when it reports an external change.
"""

from __future__ import annotations

import math
import secrets
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from amnesia import decay
from amnesia.audit import FORGET_REASONS, RESTORED, AuditEntry, ContentHasher
from amnesia.clock import Clock, SystemClock
from amnesia.columns import ItemColumns
from amnesia.config import Config
from amnesia.durations import parse_duration
from amnesia.errors import CapacityExceeded, InvalidInput, NotFound, NotRestorable
from amnesia.events import EventBus, Listener
from amnesia.item import KINDS, SCOPES, SOURCES, MemoryItem, check_choice, normalize_tags, validate_item
from amnesia.safety import refuse_injection, refuse_secrets
from amnesia.selection import Candidate, Selection, duration_tokens, fill_budget
from amnesia.stores.base import Store
from amnesia.stores.memory import InMemoryStore
from amnesia.text import answer_terms, distinctive_terms, matches_query
from amnesia.tokens import count_tokens
from amnesia.views import (
    ForgetSummary,
    Injection,
    InjectionPlan,
    MemoryView,
    PlugDetail,
    PlugView,
    StatusView,
    SweepResult,
)

_DEFAULT = object()  # "argument not given" (None is a meaningful ttl: no expiry, pinned only)
RECENT_FORGETS = 5
HEAD_CANDIDATES = 1024  # injection candidates sorted up front; the rest only if the budget still has room


def random_id() -> str:
    return "m-" + secrets.token_hex(6)


class Amnesia:
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
        self._hash = ContentHasher(self.store.secret)
        self._last_injection: dict[str, Any] | None = None
        self._load()

    # ------------------------------------------------------------------ state
    def _load(self) -> None:
        self._items: dict[str, MemoryItem] = {}
        self._ids_by_key: dict[str, set[str]] = {}
        self._columns = ItemColumns(
            auto_expire=self.config.auto_expire, rank_only=not decay.forgets_by_time(self.config)
        )
        self._bytes = 0
        for item in self.store.load_items(self.workspace_id):
            self._cache(item)

    def _cache(self, item: MemoryItem) -> None:
        previous = self._items.get(item.id)
        self._bytes += item.size_bytes - (previous.size_bytes if previous else 0)
        self._items[item.id] = item
        if item.key is not None:
            self._ids_by_key.setdefault(item.key, set()).add(item.id)
        self._columns.upsert(item)

    def _sync(self) -> None:
        if self.store.changed_externally():
            self._load()

    def on(self, event: str, callback: Listener) -> Callable[[], None]:
        """Subscribe to "written" | "forgotten" | "injected" | "touched"; returns an unsubscribe callable."""
        return self._events.on(event, callback)

    # ------------------------------------------------------------------ writing
    def remember(
        self,
        content: str,
        *,
        kind: str = "fact",
        ttl: float | str | object | None = _DEFAULT,
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
    ) -> MemoryView:
        """Plug a memory in. `ttl` is seconds or a duration string ("7d"); None only with pin=True."""
        self._sync()
        now = self.clock.now()
        item = self._build_item(
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
            now,
        )
        retired = self._supersession_targets(item)
        evicted = self._make_room(item, retired, now)
        return self._write(item, retired, evicted, now)

    plug = remember

    def _build_item(
        self,
        content: Any,
        kind: str,
        ttl: Any,
        pin: bool,
        curve: str | None,
        tags: Any,
        source: str,
        scope: str,
        owner_id: str | None,
        key: str | None,
        supersedes: str | None,
        expires_at: float | None,
        source_ref: dict[str, Any] | None,
        now: float,
    ) -> MemoryItem:
        if not isinstance(content, str):
            raise InvalidInput(f"content: expected a string, got {type(content).__name__}")
        try:
            content.encode("utf-8")
        except UnicodeEncodeError as error:  # lone surrogates: undecodable bytes smuggled into a str
            raise InvalidInput(f"content: not valid UTF-8 text (character {error.start})") from None
        refuse_secrets(content)
        check_choice("kind", kind, KINDS)
        check_choice("source", source, SOURCES)
        check_choice("scope", scope, SCOPES)
        if source != "user":  # text a tool or web page produced must not smuggle instructions into prompts
            refuse_injection(content)
        if not isinstance(pin, bool):
            raise InvalidInput(f"pin: expected true or false, got {pin!r}")
        if pin and source == "auto":
            raise InvalidInput("pin: memories from an untrusted source (auto) cannot be pinned")
        seconds = self._resolve_ttl(ttl, pin)
        if source == "auto" and (seconds is None or seconds > self.config.untrusted_max_ttl):
            seconds = self.config.untrusted_max_ttl  # untrusted text gets a short shelf life
        if expires_at is not None and (
            isinstance(expires_at, bool) or not isinstance(expires_at, (int, float))
        ):
            raise InvalidInput(f"expires_at: expected a time in seconds, got {expires_at!r}")
        if source_ref is not None and not isinstance(source_ref, dict):
            raise InvalidInput("source_ref: expected a mapping")
        item_id = self._new_id()
        if item_id in self._items:
            raise InvalidInput(f"id: the id factory returned {item_id!r}, which is already in use")
        item = MemoryItem(
            id=item_id,
            content=content,
            kind=kind,  # type: ignore[arg-type]
            scope=scope,  # type: ignore[arg-type]
            workspace_id=self.workspace_id,
            owner_id=owner_id,
            source=source,  # type: ignore[arg-type]
            created_at=now,
            last_accessed_at=now,
            ttl=seconds,
            pinned=pin,
            curve=curve or self.config.default_curve,  # type: ignore[arg-type]
            tags=normalize_tags(tags),
            source_ref=source_ref,
            key=key.strip() if isinstance(key, str) else key,
            supersedes=supersedes,
            expires_at=None if expires_at is None else float(expires_at),
            tokens=count_tokens(content),
            size_bytes=len(content.encode("utf-8")),
        )
        validate_item(item, max_item_bytes=self.config.max_item_bytes)
        return item

    def _resolve_ttl(self, ttl: Any, pin: bool) -> float | None:
        if ttl is _DEFAULT:
            return None if pin else self.config.default_ttl
        if ttl is None:
            return None
        try:
            seconds = parse_duration(ttl, field="ttl")
        except ValueError as error:
            raise InvalidInput(str(error)) from None
        if seconds <= 0:
            raise InvalidInput(f"ttl: must be positive, got {ttl!r}")
        return seconds

    def _supersession_targets(self, item: MemoryItem) -> list[MemoryItem]:
        targets: list[MemoryItem] = []
        if item.supersedes is not None:
            target = self._items.get(item.supersedes)
            if target is None:
                raise NotFound(f"supersedes: no live memory with id {item.supersedes!r}")
            targets.append(target)
        if item.key is not None:
            chosen = {target.id for target in targets}
            for other_id in sorted(self._ids_by_key.get(item.key, ())):
                other = self._items[other_id]
                if other.scope == item.scope and other.owner_id == item.owner_id and other_id not in chosen:
                    targets.append(other)
        if item.untrusted:
            for target in targets:
                if target.source == "user":
                    raise InvalidInput(
                        f"key: an untrusted (auto) write cannot supersede the user's memory {target.id}"
                    )
        return targets

    def _make_room(self, item: MemoryItem, retired: Sequence[MemoryItem], now: float) -> list[MemoryItem]:
        """Unpinned items to evict (weakest first) so the write fits max_store_bytes; refuse if it cannot."""
        limit = self.config.max_store_bytes
        freed = sum(target.size_bytes for target in retired)
        if self._bytes - freed + item.size_bytes <= limit:
            return []
        self._forget_due(now)  # what is due goes first, under its own reason
        freed = sum(target.size_bytes for target in retired if target.id in self._items)
        deficit = self._bytes - freed + item.size_bytes - limit
        if deficit <= 0:
            return []
        strengths = self._strengths(now)
        retired_ids = {target.id for target in retired}
        victims: list[MemoryItem] = []
        for slot in self._columns.eviction_order(strengths):
            candidate = self._items[self._columns.ids[slot]]  # type: ignore[index]
            if candidate.id in retired_ids:
                continue
            victims.append(candidate)
            deficit -= candidate.size_bytes
            if deficit <= 0:
                return victims
        raise CapacityExceeded(
            f"capacity: a {item.size_bytes}-byte memory does not fit max_store_bytes ({limit}) even after "
            "evicting every unpinned memory; nothing was dropped — unpin or forget something first"
        )

    def _write(
        self, item: MemoryItem, retired: list[MemoryItem], evicted: list[MemoryItem], now: float
    ) -> MemoryView:
        gone = [*retired, *evicted]
        entries = self._audit_entries(gone, ["superseded"] * len(retired) + ["evicted"] * len(evicted), now)
        deleted = set(self.store.commit(self.workspace_id, forget=entries, save=[item]))
        self._after_forget([e for e in entries if e.item_id in deleted])
        self._cache(item)
        view = self._memory_view(
            item,
            superseded=tuple(old.id for old in retired),
            evicted=tuple(old.id for old in evicted),
        )
        if self._events.has_listeners("written"):
            self._events.emit("written", view.to_dict())
        return view

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
    ) -> ForgetSummary:
        """Unplug by id, or by every given filter at once (query AND tags AND key AND scope AND owner), or
        everything with all=True and confirm=True. The only path that removes pinned memories."""
        self._sync()
        check_choice("reason", reason, FORGET_REASONS)
        if scope is not None:
            check_choice("scope", scope, SCOPES)
        wanted_tags = set(normalize_tags(tags)) if tags else set()
        has_filter = (
            query is not None or wanted_tags or key is not None or scope is not None or owner_id is not None
        )
        if all and not confirm:
            raise InvalidInput("all: forgetting everything needs confirm=True")
        if id is None and not has_filter and not all:
            raise InvalidInput(
                "forget: give an id, a query, tags, a key, a scope/owner, or all=True with confirm=True"
            )
        if query is not None and (not isinstance(query, str) or not query.strip()):
            raise InvalidInput("query: must be a non-empty string")
        if id is not None:
            targets = [self._items[id]] if id in self._items else []
        else:  # all=True with filters narrows "everything" to what matches them
            targets = [
                item
                for item in self._items.values()
                if (query is None or matches_query(query, item.content))
                and (not wanted_tags or wanted_tags.intersection(item.tags))
                and (key is None or item.key == key)
                and (scope is None or item.scope == scope)
                and (owner_id is None or item.owner_id == owner_id)
            ]
        ids = self._forget_items(targets, reason, self.clock.now())
        return ForgetSummary(len(ids), tuple(ids), reason)

    unplug = forget

    def end_agent(self, owner_id: str) -> ForgetSummary:
        """An agent ended: unplug its session/team memories (reason agent-disposed) unless promoted."""
        self._sync()
        if not owner_id:
            raise InvalidInput("owner_id: required")
        targets = [i for i in self._items.values() if i.scope != "workspace" and i.owner_id == owner_id]
        ids = self._forget_items(targets, "agent-disposed", self.clock.now())
        return ForgetSummary(len(ids), tuple(ids), "agent-disposed")

    def _audit_entries(
        self, items: Sequence[MemoryItem], reasons: Sequence[str], now: float
    ) -> list[AuditEntry]:
        # One tight comprehension: a sweep may audit tens of thousands of items at once. `_make` builds each
        # named tuple in C (fields in AuditEntry order; restored_from is None for a forget).
        digest, workspace, keep = self._hash, self.workspace_id, self.config.restorable
        make = AuditEntry._make
        return [
            make(
                (
                    item.id,
                    item.kind,
                    why,
                    now,
                    digest(item.content),
                    workspace,
                    item.scope,
                    item.owner_id,
                    item.key,
                    item.ttl,
                    item.content if keep else None,
                    None,
                )
            )
            for item, why in zip(items, reasons, strict=True)
        ]

    def _forget_items(
        self, items: Sequence[MemoryItem], reason: str | Sequence[str], now: float
    ) -> list[str]:
        if not items:
            return []
        reasons = [reason] * len(items) if isinstance(reason, str) else list(reason)
        entries = self._audit_entries(items, reasons, now)
        deleted = self.store.commit(self.workspace_id, forget=entries)
        if len(deleted) != len(entries):  # another process forgot some first
            kept = set(deleted)
            entries = [e for e in entries if e.item_id in kept]
        self._after_forget(entries)
        return [e.item_id for e in entries]

    def _after_forget(self, entries: Sequence[AuditEntry]) -> None:
        gone = [entry.item_id for entry in entries]
        pop = self._items.pop
        removed = [pop(item_id) for item_id in gone]
        self._bytes -= sum([item.size_bytes for item in removed])
        for item in removed:
            if item.key is not None:
                self._ids_by_key[item.key].discard(item.id)
        self._columns.remove_many(gone)
        if self._events.has_listeners("forgotten"):
            for entry in entries:
                self._events.emit("forgotten", _forget_payload(entry))

    def _strengths(self, now: float) -> np.ndarray:
        return self._columns.strengths(now, self.config.decay_k, self.config.auto_expire)

    def _forget_due(self, now: float) -> tuple[np.ndarray, list[str], dict[str, int]]:
        """Forget every due item; returns the strengths (dead slots: see `alive`), ids and reason counts."""
        strengths = self._strengths(now)
        if not self.config.auto_expire:
            return strengths, [], {}
        due, expired = self._columns.due(now, strengths, self.config.forgotten_strength)
        slots = np.flatnonzero(due)
        if len(slots) == 0:
            return strengths, [], {}
        ids, items = self._columns.ids, self._items
        due_items = [items[ids[slot]] for slot in slots.tolist()]  # type: ignore[index]
        reasons = ["expired" if hard else "stale" for hard in expired[slots].tolist()]
        forgotten = self._forget_items(due_items, reasons, now)
        counts = {why: reasons.count(why) for why in ("expired", "stale") if why in reasons}
        return strengths, forgotten, counts

    def _live(self, item_id: str, now: float) -> MemoryItem | None:
        """The item, or None if it is gone or was due (then it is forgotten now)."""
        item = self._items.get(item_id)
        if item is None:
            return None
        why = decay.due_reason(item, now, self.config)
        if why is not None:
            self._forget_items([item], why, now)
            return None
        return item

    # ------------------------------------------------------------------ touching
    def _touch(self, item: MemoryItem, now: float, reason: str) -> None:
        current = decay.strength(item, now, self.config)
        item.strength = decay.boost(current, self.config)
        item.last_accessed_at = now
        item.access_count += 1
        item.status = "active"
        promote_at = self.config.promote_after_accesses
        if promote_at and item.access_count == promote_at and item.ttl is not None:
            cap = self.config.untrusted_max_ttl if item.untrusted else math.inf
            item.ttl = min(item.ttl * self.config.promote_ttl_factor, cap)
        self._columns.upsert(item)
        if self._events.has_listeners("touched"):
            self._events.emit(
                "touched",
                {
                    "id": item.id,
                    "strength": item.strength,
                    "reason": reason,
                    "at": now,
                    "access_count": item.access_count,
                    "ttl": item.ttl,
                },
            )

    def _touch_all(self, items: Sequence[MemoryItem], now: float, reason: str) -> None:
        for item in items:
            self._touch(item, now, reason)
        if items:
            self.store.commit(self.workspace_id, save=items)

    def touch(self, id: str) -> PlugView | None:
        """A recall hit: restart the decay clock and boost strength (revives a stale memory)."""
        self._sync()
        now = self.clock.now()
        item = self._live(id, now)
        if item is None:
            return None
        self._touch_all([item], now, "recall")
        return self._plug_view(item, now)

    def recall(
        self,
        query: str,
        *,
        owner_id: str | None = None,
        limit: int | None = None,
        include_workspace: bool = True,
    ) -> list[PlugView]:
        """Live memories (stale included) visible to the caller that match `query`, strongest first; each is
        touched (full renewal, whatever renew_on_inject says)."""
        self._sync()
        if not isinstance(query, str) or not query.strip():
            raise InvalidInput("query: must be a non-empty string")
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidInput(f"limit: expected a positive integer, got {limit!r}")
        now = self.clock.now()
        strengths, _, _ = self._forget_due(now)
        visible = self._columns.visible(owner_id, include_workspace)
        ordered = self._columns.injection_order(np.flatnonzero(visible), strengths)
        hits: list[MemoryItem] = []
        for slot in ordered:
            item = self._items[self._columns.ids[slot]]  # type: ignore[index]
            if matches_query(query, item.content):
                hits.append(item)
                if limit is not None and len(hits) >= limit:
                    break
        self._touch_all(hits, now, "recall")
        return [self._plug_view(item, now) for item in hits]

    # ------------------------------------------------------------------ injection
    def _plan(
        self, budget_tokens: int | None, owner_id: str | None, include_workspace: bool, now: float
    ) -> tuple[Selection, int, dict[str, int]]:
        budget = self.config.max_injected_tokens if budget_tokens is None else budget_tokens
        if isinstance(budget, bool) or not isinstance(budget, int) or budget < 0:
            raise InvalidInput(f"budget_tokens: expected a non-negative integer, got {budget_tokens!r}")
        strengths, _, _ = self._forget_due(now)
        visible = self._columns.visible(owner_id, include_workspace)
        n = self._columns.used
        stale = visible & (strengths < decay.stale_threshold(self.config)) & ~self._columns.pinned[:n]
        excluded = {"stale": int(stale.sum()), "invisible": len(self._items) - int(visible.sum())}
        if not self.config.prompt_section_enabled:
            return fill_budget((), np.zeros(0), budget, now), budget, excluded
        columns = self._columns
        head, rest = columns.strongest(np.flatnonzero(visible & ~stale), strengths, HEAD_CANDIDATES)
        ordered = columns.injection_order(head, strengths)  # more than HEAD_CANDIDATES when ties are wide
        selection = self._fill(ordered[:HEAD_CANDIDATES], strengths, budget, now)
        later = np.concatenate([ordered[HEAD_CANDIDATES:], rest])
        unsorted = len(later)
        # Later candidates rank below every one walked so far: they matter only if one could still fit.
        if unsorted and (
            selection.remaining >= int(columns.line_tokens[later].min()) + 2 or columns.pinned[later].any()
        ):
            everything = np.concatenate([ordered, columns.injection_order(rest, strengths)])
            selection, unsorted = self._fill(everything, strengths, budget, now), 0
        excluded["not_reached"] = selection.not_reached + unsorted
        return selection, budget, excluded

    def _fill(self, ordered: np.ndarray, strengths: np.ndarray, budget: int, now: float) -> Selection:
        columns = self._columns
        forget_times = columns.forget_times(self.config.forgotten_strength, self.config.decay_k, ordered)
        remaining = np.where(np.isfinite(forget_times), forget_times - now, 0.0)
        costs = (
            columns.line_tokens[ordered]
            + duration_tokens(now - columns.created[ordered])
            + np.where(np.isfinite(forget_times), duration_tokens(remaining), 0)
        )
        return fill_budget(_LazyCandidates(self, ordered, strengths, forget_times), costs, budget, now)

    def preview(
        self, budget_tokens: int | None = None, *, owner_id: str | None = None, include_workspace: bool = True
    ) -> InjectionPlan:
        """Dry run of select_for_injection: the block and why each candidate was or was not taken. Touches
        nothing (due memories are still forgotten: expiry holds on every read)."""
        self._sync()
        now = self.clock.now()
        selection, budget, excluded = self._plan(budget_tokens, owner_id, include_workspace, now)
        return InjectionPlan(
            block=selection.block,
            tokens=selection.tokens,
            budget_tokens=budget,
            items=_item_refs(selection),
            decisions=selection.decisions,
            pinned_overflow=selection.pinned_overflow,
            excluded=excluded,
            at=now,
        )

    def select_for_injection(
        self, budget_tokens: int | None = None, *, owner_id: str | None = None, include_workspace: bool = True
    ) -> Injection:
        """The memory block for one model call: pinned first, then strength desc, then last access desc; whole
        items only, within the budget; stale memories never. Touches what it injects when renew_on_inject is
        "full" (the seed's rule: an injection is an access)."""
        self._sync()
        now = self.clock.now()
        selection, budget, excluded = self._plan(budget_tokens, owner_id, include_workspace, now)
        chosen = [candidate.item for candidate in selection.chosen]
        mode = self.config.renew_on_inject
        if mode == "full":
            self._touch_all(chosen, now, "inject")
        injection = Injection(
            block=selection.block,
            tokens=selection.tokens,
            budget_tokens=budget,
            items=_item_refs(selection),
            at=now,
            renew_on_inject=mode,
            pinned_overflow=selection.pinned_overflow,
            details={
                "skipped": sum(1 for d in selection.decisions if d.decision == "skipped"),
                "excluded": excluded,
                "pinned_overflow": list(selection.pinned_overflow),
            },
        )
        self._last_injection = {
            "count": len(chosen),
            "tokens": selection.tokens,
            "budget_tokens": budget,
            "at": now,
        }
        self._events.emit(
            "injected",
            {
                **self._last_injection,
                "items": [dict(ref) for ref in injection.items],
                "block": injection.block,
            },
        )
        return injection

    def report_answer(
        self, injection: Injection, answer_text: str, *, question: str | None = None
    ) -> list[str]:
        """With renew_on_inject="used": renew the injected memories the answer drew on. An item counts as used
        when the answer contains one of its distinctive terms (a content word of 4+ letters, a number,
        or a CJK bigram) that neither another injected item nor the question contains. Returns the renewed
        ids."""
        self._sync()
        if self.config.renew_on_inject != "used" or not injection.items:
            return []
        now = self.clock.now()
        injected = [self._items[ref["id"]] for ref in injection.items if ref["id"] in self._items]
        terms = {item.id: distinctive_terms(item.content) for item in injected}
        said = answer_terms(answer_text or "") - (answer_terms(question) if question else set())
        used: list[MemoryItem] = []
        for item in injected:
            others = set().union(*(terms[o.id] for o in injected if o.id != item.id))
            if (terms[item.id] - others) & said and self._live(item.id, now) is not None:
                used.append(item)
        self._touch_all(used, now, "answer")
        return [item.id for item in used]

    # ------------------------------------------------------------------ reading
    def inspect(self, id: str) -> PlugDetail | None:
        self._sync()
        now = self.clock.now()
        item = self._live(id, now)
        if item is None:
            return None
        current = decay.strength(item, now, self.config)
        forget_at = decay.forget_at(item, self.config)
        return PlugDetail(
            id=item.id,
            kind=item.kind,
            scope=item.scope,
            owner_id=item.owner_id,
            workspace_id=item.workspace_id,
            status=decay.status(item, now, self.config),
            strength=current,
            base_strength=item.strength,
            pinned=item.pinned,
            tokens=item.tokens,
            size_bytes=item.size_bytes,
            content=item.content,
            source=item.source,
            untrusted=item.untrusted,
            curve=item.curve,
            ttl=item.ttl,
            created_at=item.created_at,
            last_accessed_at=item.last_accessed_at,
            access_count=item.access_count,
            expires_at=forget_at,
            stale_at=self._stale_at(item),
            hard_expires_at=item.expires_at,
            remaining=None if forget_at is None else max(0.0, forget_at - now),
            tags=item.tags,
            key=item.key,
            supersedes=item.supersedes,
            source_ref=item.source_ref,
        )

    def _stale_at(self, item: MemoryItem) -> float | None:
        if item.pinned or item.ttl is None or not self.config.auto_expire or item.curve == "flat":
            return None
        if not decay.forgets_by_time(self.config):  # rank mode has no stale state
            return None
        fraction = decay.idle_fraction(
            item.strength, item.curve, self.config.stale_strength, self.config.decay_k
        )
        return item.last_accessed_at + item.ttl * fraction

    def plugs(self, scope: str | None = None) -> list[PlugView]:
        """Every live memory of the workspace (all scopes unless `scope` is given), in write order."""
        self._sync()
        if scope is not None:
            check_choice("scope", scope, SCOPES)
        now = self.clock.now()
        self._forget_due(now)
        return [self._plug_view(i, now) for i in self._items.values() if scope is None or i.scope == scope]

    def status(self) -> StatusView:
        self._sync()
        now = self.clock.now()
        strengths, _, _ = self._forget_due(now)
        columns, n = self._columns, self._columns.used
        alive = columns.alive[:n]
        stale = alive & ~columns.pinned[:n] & (strengths < decay.stale_threshold(self.config))
        times = columns.forget_times(self.config.forgotten_strength, self.config.decay_k)
        next_expiry = (
            float(times.min()) if self.config.auto_expire and n and np.isfinite(times.min()) else None
        )
        recent = [
            _forget_payload(entry)
            for entry in self.store.audit_entries(self.workspace_id, limit=RECENT_FORGETS * 2)
            if entry.reason in FORGET_REASONS
        ][:RECENT_FORGETS]
        return StatusView(
            counts={
                "active": int(alive.sum() - stale.sum()),
                "stale": int(stale.sum()),
                "forgotten": self.store.count_forgets(self.workspace_id),
                "pinned": int((alive & columns.pinned[:n]).sum()),
            },
            tokens=int(columns.tokens[:n][alive].sum()),
            bytes=self._bytes,
            next_expiry_at=next_expiry,
            recent_forgets=tuple(recent),
            last_injection=dict(self._last_injection) if self._last_injection else None,
        )

    def audit(self, limit: int | None = 20, since: float | None = None) -> list:
        """Newest first. Entries carry a keyed content hash, never the content (unless restorable)."""
        self._sync()
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 0):
            raise InvalidInput(f"limit: expected a non-negative integer, got {limit!r}")
        if since is not None and (isinstance(since, bool) or not isinstance(since, (int, float))):
            raise InvalidInput(f"since: expected a time in seconds, got {since!r}")
        now = self.clock.now()
        self._forget_due(now)  # an item that is due now belongs in the audit now, not after the next sweep
        self._prune_audit(now)
        return self.store.audit_entries(self.workspace_id, limit=limit, since=since)

    def verify(self, text: str) -> list[AuditEntry]:
        """Forget entries whose item had exactly this content (recomputes the keyed hash)."""
        if not isinstance(text, str):
            raise InvalidInput("text: expected a string")
        self._sync()
        self._forget_due(self.clock.now())
        entries = self.store.audit_by_hash(self.workspace_id, self._hash(text))
        return [entry for entry in entries if entry.reason in FORGET_REASONS]

    def _prune_audit(self, now: float) -> int:
        return self.store.prune_audit(self.workspace_id, now - self.config.audit_retention)

    # ------------------------------------------------------------------ maintenance
    def sweep(self) -> SweepResult:
        """Settle every memory: forget what is due, record which are now stale, prune old audit entries."""
        self._sync()
        now = self.clock.now()
        strengths, ids, counts = self._forget_due(now)
        columns, n = self._columns, self._columns.used
        stale = columns.alive[:n] & ~columns.pinned[:n] & (strengths < decay.stale_threshold(self.config))
        changed = np.flatnonzero(columns.alive[:n] & (stale != columns.marked_stale[:n]))
        updated = []
        for slot in changed:
            item = self._items[columns.ids[slot]]  # type: ignore[index]
            item.status = "stale" if stale[slot] else "active"
            columns.marked_stale[slot] = bool(stale[slot])
            updated.append(item)
        if updated:
            self.store.commit(self.workspace_id, save=updated)
        pruned = self._prune_audit(now)
        return SweepResult(
            at=now,
            settled=len(self._items) + len(ids),
            forgotten=len(ids),
            by_reason=counts,
            ids=tuple(ids),
            stale=int(stale.sum()),
            audit_pruned=pruned,
        )

    def promote(self, id: str) -> PlugView:
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
            self._columns.upsert(item)
        return self._plug_view(item, now)

    def restore(self, id: str) -> MemoryView:
        """Plug a forgotten memory back in from the audit (restorable mode): new id, fresh ttl, audited."""
        self._sync()
        if not self.config.restorable:
            raise NotRestorable(
                "restore: restorable mode is off (Config.restorable=False); the content was deleted"
            )
        entries = self.store.audit_for_item(self.workspace_id, id)
        forgotten = [e for e in entries if e.item_id == id and e.reason in FORGET_REASONS]
        if not forgotten:
            raise NotFound(f"id: no forgotten memory {id!r} in the audit")
        entry = forgotten[-1]
        if entry.content is None:
            raise NotRestorable(
                f"restore: {id} was forgotten while restorable mode was off; its content is gone"
            )
        again = [e for e in entries if e.restored_from == id]
        if again:
            raise NotRestorable(f"restore: {id} was already restored as {again[-1].item_id}")
        view = self.remember(
            entry.content,
            kind=entry.kind,
            ttl=entry.ttl if entry.ttl is not None else self.config.default_ttl,
            scope=entry.scope,
            owner_id=entry.owner_id,
            key=entry.key,
        )
        restored = AuditEntry(
            item_id=view.id,
            kind=entry.kind,
            reason=RESTORED,
            at=self.clock.now(),
            content_hash=entry.content_hash,
            workspace_id=self.workspace_id,
            scope=entry.scope,
            owner_id=entry.owner_id,
            key=entry.key,
            ttl=view.ttl,
            restored_from=id,
        )
        self.store.commit(self.workspace_id, audit=[restored])
        return view

    def close(self) -> None:
        self.store.close()

    # ------------------------------------------------------------------ views
    def _memory_view(
        self, item: MemoryItem, *, superseded: tuple[str, ...] = (), evicted: tuple[str, ...] = ()
    ) -> MemoryView:
        return MemoryView(
            id=item.id,
            content=item.content,
            kind=item.kind,
            ttl=item.ttl,
            pinned=item.pinned,
            curve=item.curve,
            strength=item.strength,
            key=item.key,
            scope=item.scope,
            owner_id=item.owner_id,
            source=item.source,
            tokens=item.tokens,
            created_at=item.created_at,
            expires_at=decay.forget_at(item, self.config),
            tags=item.tags,
            untrusted=item.untrusted,
            superseded=superseded,
            evicted=evicted,
            hard_expires_at=item.expires_at,
        )

    def _plug_view(self, item: MemoryItem, now: float) -> PlugView:
        return PlugView(
            id=item.id,
            kind=item.kind,
            scope=item.scope,
            owner_id=item.owner_id,
            status=decay.status(item, now, self.config),
            strength=decay.strength(item, now, self.config),
            pinned=item.pinned,
            tokens=item.tokens,
            content=item.content,
            created_at=item.created_at,
            last_accessed_at=item.last_accessed_at,
            expires_at=decay.forget_at(item, self.config),
            untrusted=item.untrusted,
        )


class _LazyCandidates(Sequence[Candidate]):
    """Candidates in injection order, built only as far as the budget walk gets (usually a few hundred)."""

    def __init__(self, engine: Amnesia, slots: np.ndarray, strengths: np.ndarray, forget_times: Any) -> None:
        self._engine, self._slots, self._strengths, self._forget_times = (
            engine,
            slots,
            strengths,
            forget_times,
        )

    def __len__(self) -> int:
        return len(self._slots)

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        slot = self._slots[index]
        item = self._engine._items[self._engine._columns.ids[slot]]  # type: ignore[index]
        when = float(self._forget_times[index])
        return Candidate(item, float(self._strengths[slot]), None if math.isinf(when) else when)


def _item_refs(selection: Selection) -> tuple[dict[str, Any], ...]:
    refs = {d.id: d.tokens for d in selection.decisions if d.decision == "injected"}
    return tuple({"id": c.item.id, "tokens": refs[c.item.id]} for c in selection.chosen)


def _forget_payload(entry: AuditEntry) -> dict[str, Any]:
    return {
        "id": entry.item_id,
        "reason": entry.reason,
        "content_hash": entry.content_hash,
        "at": entry.at,
        "kind": entry.kind,
        "scope": entry.scope,
        "owner_id": entry.owner_id,
    }
