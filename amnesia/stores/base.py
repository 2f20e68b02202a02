"""The storage interface. A store keeps items and audit entries per workspace; every change goes through
`commit`, one atomic transaction in which the audit entries of forgotten items are written *before* their
content is deleted (seed 000 §6.9: crash-safe order), so no content is ever gone without its audit line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from amnesia.audit import AuditEntry, AuditRow
from amnesia.item import MemoryItem


@runtime_checkable
class Store(Protocol):
    secret: bytes  # HMAC key of the audit's content hashes (persisted by durable stores)
    # Optional, not part of the protocol's checks: `forget_chunk = N` on a store whose commits are cheap lets
    # the engine forget a large sweep in commits of N items (faster: each chunk stays in the CPU cache).
    # Without it every sweep is one commit.

    def load_items(self, workspace_id: str) -> list[MemoryItem]:
        """Live items of the workspace, in write order."""
        ...

    def commit(
        self,
        workspace_id: str,
        *,
        forget: Sequence[AuditRow] = (),
        save: Sequence[MemoryItem] = (),
        audit: Sequence[AuditRow] = (),
        if_unchanged: bool = False,
    ) -> list[str]:
        """Atomically: for each `forget` entry (an `AuditRow`: AuditEntry's fields as a plain tuple, or an
        AuditEntry) whose item still exists, append the entry and delete the item
        (a second delete is a no-op: no entry, not returned); then append `audit`; then upsert `save`.
        Returns the ids actually deleted. With `if_unchanged`, first raise `StoreConflict` (writing nothing)
        if another process committed since this store last loaded or looked (`changed_externally`): the
        caller planned the write (capacity, supersession) on what it had loaded, and checking inside the
        write transaction is what keeps two processes from both filling the last free bytes."""
        ...

    def audit_entries(
        self, workspace_id: str, *, limit: int | None = None, since: float | None = None
    ) -> list[AuditEntry]:
        """Newest first."""
        ...

    def audit_for_item(self, workspace_id: str, item_id: str) -> list[AuditEntry]:
        """Entries about `item_id`: its forget, or restores whose `restored_from` is it."""
        ...

    def audit_by_hash(self, workspace_id: str, content_hash: str) -> list[AuditEntry]: ...

    def count_forgets(self, workspace_id: str) -> int: ...

    def prune_audit(self, workspace_id: str, before: float) -> int:
        """Delete audit entries older than `before`; returns how many."""
        ...

    def changed_externally(self) -> bool:
        """True when another process committed since this store last looked (the engine then reloads)."""
        ...

    def close(self) -> None: ...
