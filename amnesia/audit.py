"""The forget audit: what was forgotten, when and why, with a keyed hash instead of the content.

A bare SHA-256 of short content (a phone number, a PIN) can be reversed by brute force, so the hash is
HMAC-SHA256 with a per-store secret. `verify(text)` recomputes it: did a forgotten item have that text?
The content itself is kept only in restorable mode (Config.restorable), for restore().
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from amnesia.errors import NotFound, NotRestorable

if TYPE_CHECKING:
    from amnesia.item import MemoryItem

ForgetReason = Literal["expired", "stale", "evicted", "manual", "budget", "agent-disposed", "superseded"]
FORGET_REASONS: tuple[str, ...] = (
    "expired",
    "stale",
    "evicted",
    "manual",
    "budget",
    "agent-disposed",
    "superseded",
)
RESTORED = "restored"
SECRET_BYTES = 32
_BLOCK = 64  # SHA-256 block size


def new_secret() -> bytes:
    return secrets.token_bytes(SECRET_BYTES)


class ContentHasher:
    """HMAC-SHA256 (RFC 2104) with the key schedule done once: a sweep hashes thousands of items, and
    `hmac.digest` would redo the two key blocks for every one of them."""

    def __init__(self, secret: bytes) -> None:
        key = hashlib.sha256(secret).digest() if len(secret) > _BLOCK else secret
        key = key.ljust(_BLOCK, b"\0")
        self._inner = hashlib.sha256(bytes(byte ^ 0x36 for byte in key))
        self._outer = hashlib.sha256(bytes(byte ^ 0x5C for byte in key))

    def __call__(self, content: str) -> str:
        inner = self._inner.copy()
        inner.update(content.encode("utf-8"))
        outer = self._outer.copy()
        outer.update(inner.digest())
        return outer.hexdigest()


def content_hash(secret: bytes, content: str) -> str:
    """Keyed hash (hex HMAC-SHA256) of the content."""
    return ContentHasher(secret)(content)


class AuditEntry(NamedTuple):
    """One audit record: a forget (reason in FORGET_REASONS) or a restore (reason "restored"). Immutable; a
    named tuple rather than a frozen dataclass because a sweep builds tens of thousands at once and a frozen
    dataclass's __init__ costs about 5x as much (one object.__setattr__ per field)."""

    item_id: str
    kind: str
    reason: str
    at: float
    content_hash: str
    workspace_id: str = "default"
    scope: str = "workspace"
    owner_id: str | None = None
    key: str | None = None
    ttl: float | None = None
    content: str | None = None  # only in restorable mode
    restored_from: str | None = None  # for "restored": the forgotten item's id

    def to_dict(self) -> dict[str, Any]:
        return self._asdict()  # all scalars: no deep copy needed

    def brief(self) -> dict[str, Any]:
        """What the `forgotten` event and status' recent forgets say about a forget (no content, no ttl)."""
        return {
            "id": self.item_id,
            "reason": self.reason,
            "content_hash": self.content_hash,
            "at": self.at,
            "kind": self.kind,
            "scope": self.scope,
            "owner_id": self.owner_id,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditEntry:
        return cls(**data)


def restorable_entry(entries: Sequence[AuditEntry], item_id: str) -> AuditEntry:
    """The forget entry `restore(item_id)` brings back, from the audit entries about `item_id`; NotFound
    or NotRestorable (one line) when there is none, it kept no content, or it was restored already."""
    forgotten = [e for e in entries if e.item_id == item_id and e.reason in FORGET_REASONS]
    if not forgotten:
        raise NotFound(f"id: no forgotten memory {item_id!r} in the audit")
    entry = forgotten[-1]
    if entry.content is None:
        raise NotRestorable(
            f"restore: {item_id} was forgotten while restorable mode was off; its content is gone"
        )
    again = [e for e in entries if e.restored_from == item_id]
    if again:
        raise NotRestorable(f"restore: {item_id} was already restored as {again[-1].item_id}")
    return entry


class AuditWriter:
    """Builds one workspace's audit entries: the keyed content hash always, the content itself only in
    restorable mode (`keep_content`)."""

    def __init__(self, secret: bytes, workspace_id: str, *, keep_content: bool) -> None:
        self.hash = ContentHasher(secret)
        self.workspace_id = workspace_id
        self.keep_content = keep_content

    def forgets(self, items: Sequence[MemoryItem], reasons: Sequence[str], now: float) -> list[AuditEntry]:
        """One forget entry per item, `reasons[i]` for `items[i]`."""
        # One tight comprehension: a sweep may audit tens of thousands of items at once. `_make` builds each
        # named tuple in C (fields in AuditEntry order; restored_from is None for a forget).
        digest, workspace, keep = self.hash, self.workspace_id, self.keep_content
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

    def restored(self, forgotten: AuditEntry, new_id: str, ttl: float | None, now: float) -> AuditEntry:
        """The entry recording that `forgotten` came back as `new_id` (hash only: its content is live)."""
        return AuditEntry(
            item_id=new_id,
            kind=forgotten.kind,
            reason=RESTORED,
            at=now,
            content_hash=forgotten.content_hash,
            workspace_id=self.workspace_id,
            scope=forgotten.scope,
            owner_id=forgotten.owner_id,
            key=forgotten.key,
            ttl=ttl,
            restored_from=forgotten.item_id,
        )
