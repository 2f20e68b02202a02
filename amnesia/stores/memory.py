"""A process-local store: dicts and lists. Forgotten content is dropped with the item (nothing to scrub).

Saved items are kept by reference (the engine owns them and writes every change through); `load_items` hands
out copies, so a second engine on the same store never shares mutable state with the first. The audit log
keeps the rows the engine commits (`AuditRow`: plain tuples) and makes an `AuditEntry` of each one read."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import islice, repeat
from operator import itemgetter

from amnesia.audit import (
    AT,
    CONTENT_HASH,
    FORGET_REASONS,
    ITEM_ID,
    REASON,
    RESTORED_FROM,
    AuditEntry,
    AuditRow,
    as_entry,
    new_secret,
)
from amnesia.item import MemoryItem

_ITEM_ID, _AT = itemgetter(ITEM_ID), itemgetter(AT)


class InMemoryStore:
    forget_chunk = 512  # commits cost nothing here: the engine forgets in cache-sized chunks (see base.py)

    def __init__(self, *, secret: bytes | None = None) -> None:
        self.secret = secret if secret is not None else new_secret()
        self._items: dict[str, dict[str, MemoryItem]] = {}
        self._audit: dict[str, list[AuditRow]] = {}
        # Per workspace, (n, t): no entry among the log's first n is older than t. Every sweep prunes, and
        # most have nothing to prune: then only the entries appended since the last prune are looked at.
        self._oldest: dict[str, tuple[int, float]] = {}

    def load_items(self, workspace_id: str) -> list[MemoryItem]:
        return [replace(item) for item in self._items.get(workspace_id, {}).values()]

    def commit(
        self,
        workspace_id: str,
        *,
        forget: Sequence[AuditRow] = (),
        save: Sequence[MemoryItem] = (),
        audit: Sequence[AuditRow] = (),
        if_unchanged: bool = False,  # nothing to check: no other process writes to this store
    ) -> list[str]:
        items = self._items.get(workspace_id)
        if items is None:  # (not setdefault: its default would be a new dict on every write)
            items = self._items[workspace_id] = {}
        deleted: list[str] = []
        if forget or audit:  # most commits are a write that retires nothing: a save only
            log = self._audit.setdefault(workspace_id, [])
            # C-level passes (map): a sweep may forget tens of thousands.
            deleted = list(map(_ITEM_ID, forget))
            found = list(map(items.pop, deleted, repeat(None)))
            gone = forget
            if not all(found):  # some were gone already (another engine on this store forgot them)
                gone = [entry for entry, item in zip(forget, found, strict=True) if item is not None]
                deleted = list(map(_ITEM_ID, gone))
            log.extend(gone)
            log.extend(audit)
        for item in save:
            items[item.id] = item
        return deleted

    def audit_entries(
        self, workspace_id: str, *, limit: int | None = None, since: float | None = None
    ) -> list[AuditEntry]:
        rows = reversed(self._audit.get(workspace_id, []))
        if since is not None:
            rows = (row for row in rows if row[AT] >= since)  # type: ignore[assignment]
        if limit is not None and limit < 0:  # a slice's meaning: all but the last -limit
            return list(map(as_entry, rows))[:limit]
        return list(map(as_entry, islice(rows, limit)))  # only the entries returned are made

    def audit_for_item(self, workspace_id: str, item_id: str) -> list[AuditEntry]:
        rows = self._audit.get(workspace_id, [])
        return [as_entry(row) for row in rows if item_id in (row[ITEM_ID], row[RESTORED_FROM])]

    def audit_by_hash(self, workspace_id: str, content_hash: str) -> list[AuditEntry]:
        rows = self._audit.get(workspace_id, [])
        return [as_entry(row) for row in rows if row[CONTENT_HASH] == content_hash]

    def count_forgets(self, workspace_id: str) -> int:
        return sum(1 for row in self._audit.get(workspace_id, []) if row[REASON] in FORGET_REASONS)

    def prune_audit(self, workspace_id: str, before: float) -> int:
        log = self._audit.get(workspace_id, [])
        checked, oldest = self._oldest.get(workspace_id, (0, math.inf))
        if checked < len(log):
            oldest = min(oldest, min(map(_AT, islice(log, checked, None))))
        if before <= oldest:  # nothing older than `before`
            self._oldest[workspace_id] = (len(log), oldest)
            return 0
        kept = [row for row in log if row[AT] >= before]
        self._audit[workspace_id] = kept
        self._oldest[workspace_id] = (len(kept), min(map(_AT, kept), default=math.inf))
        return len(log) - len(kept)

    def changed_externally(self) -> bool:
        return False

    def close(self) -> None:
        return None
