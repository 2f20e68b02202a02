"""A process-local store: dicts and lists. Forgotten content is dropped with the item (nothing to scrub).

Saved items are kept by reference (the engine owns them and writes every change through); `load_items` hands
out copies, so a second engine on the same store never shares mutable state with the first."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import islice, repeat
from operator import attrgetter, itemgetter

from amnesia.audit import FORGET_REASONS, AuditEntry, new_secret
from amnesia.item import MemoryItem

_ITEM_ID = attrgetter("item_id")
_AT = itemgetter(AuditEntry._fields.index("at"))  # a field of a named tuple: by position is cheapest


class InMemoryStore:
    forget_chunk = 512  # commits cost nothing here: the engine forgets in cache-sized chunks (see base.py)

    def __init__(self, *, secret: bytes | None = None) -> None:
        self.secret = secret if secret is not None else new_secret()
        self._items: dict[str, dict[str, MemoryItem]] = {}
        self._audit: dict[str, list[AuditEntry]] = {}
        # Per workspace, (n, t): no entry among the log's first n is older than t. Every sweep prunes, and
        # most have nothing to prune: then only the entries appended since the last prune are looked at.
        self._oldest: dict[str, tuple[int, float]] = {}

    def load_items(self, workspace_id: str) -> list[MemoryItem]:
        return [replace(item) for item in self._items.get(workspace_id, {}).values()]

    def commit(
        self,
        workspace_id: str,
        *,
        forget: Sequence[AuditEntry] = (),
        save: Sequence[MemoryItem] = (),
        audit: Sequence[AuditEntry] = (),
        if_unchanged: bool = False,  # nothing to check: no other process writes to this store
    ) -> list[str]:
        items = self._items.setdefault(workspace_id, {})
        deleted: list[str] = []
        if forget or audit:  # most commits are a write that retires nothing: a save only
            log = self._audit.setdefault(workspace_id, [])
            # C-level passes (map): a sweep may forget tens of thousands.
            deleted = list(map(_ITEM_ID, forget))
            found = list(map(items.pop, deleted, repeat(None)))
            gone = forget
            if not all(found):  # some were gone already (another engine on this store forgot them)
                gone = [entry for entry, item in zip(forget, found, strict=True) if item is not None]
                deleted = [entry.item_id for entry in gone]
            log.extend(gone)
            log.extend(audit)
        for item in save:
            items[item.id] = item
        return deleted

    def audit_entries(
        self, workspace_id: str, *, limit: int | None = None, since: float | None = None
    ) -> list[AuditEntry]:
        entries = [e for e in reversed(self._audit.get(workspace_id, [])) if since is None or e.at >= since]
        return entries if limit is None else entries[:limit]

    def audit_for_item(self, workspace_id: str, item_id: str) -> list[AuditEntry]:
        return [e for e in self._audit.get(workspace_id, []) if item_id in (e.item_id, e.restored_from)]

    def audit_by_hash(self, workspace_id: str, content_hash: str) -> list[AuditEntry]:
        return [e for e in self._audit.get(workspace_id, []) if e.content_hash == content_hash]

    def count_forgets(self, workspace_id: str) -> int:
        return sum(1 for e in self._audit.get(workspace_id, []) if e.reason in FORGET_REASONS)

    def prune_audit(self, workspace_id: str, before: float) -> int:
        log = self._audit.get(workspace_id, [])
        checked, oldest = self._oldest.get(workspace_id, (0, math.inf))
        if checked < len(log):
            oldest = min(oldest, min(map(_AT, islice(log, checked, None))))
        if before <= oldest:  # nothing older than `before`
            self._oldest[workspace_id] = (len(log), oldest)
            return 0
        kept = [e for e in log if e.at >= before]
        self._audit[workspace_id] = kept
        self._oldest[workspace_id] = (len(kept), min(map(_AT, kept), default=math.inf))
        return len(log) - len(kept)

    def changed_externally(self) -> bool:
        return False

    def close(self) -> None:
        return None
