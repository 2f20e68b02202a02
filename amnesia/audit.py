"""The forget audit: what was forgotten, when and why, with a keyed hash instead of the content.

A bare SHA-256 of short content (a phone number, a PIN) can be reversed by brute force, so the hash is
HMAC-SHA256 with a per-store secret. `verify(text)` recomputes it: did a forgotten item have that text?
The content itself is kept only in restorable mode (Config.restorable), for restore().
"""

from __future__ import annotations

import copy
import hashlib
import secrets
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

from amnesia.checks import shown
from amnesia.errors import NotFound, NotRestorable
from amnesia.item import UNSET

if TYPE_CHECKING:
    from amnesia.item import MemoryItem

RESTORE_FIELDS = ("source", "pinned", "curve", "tags", "source_ref", "expires_at", "supersedes")
# What an entry written before restore_fields existed is restored with: its trust is unknown, so untrusted.
LEGACY_RESTORE_FIELDS: dict[str, Any] = {
    "source": "auto",
    "pinned": False,
    "curve": None,
    "tags": (),
    "source_ref": None,
    "expires_at": None,
    "supersedes": None,
}

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
# RFC 2104's ipad and opad XORed into every key byte, as translation tables (one C call per engine, which a
# replay builds for every pair, instead of a Python loop over 64 bytes).
_INNER_PAD = bytes(byte ^ 0x36 for byte in range(256))
_OUTER_PAD = bytes(byte ^ 0x5C for byte in range(256))


def new_secret() -> bytes:
    return secrets.token_bytes(SECRET_BYTES)


def keyed_hasher(secret: bytes) -> Callable[[str], str]:
    """HMAC-SHA256 (RFC 2104) of a text, hex, under `secret`, with the key schedule done once: every write
    hashes its content (see `Amnesia._write`), and `hmac.digest` would redo the two key blocks each time. A
    closure rather than an object with __call__: calling one costs half as much, and writes are a hot path."""
    key = hashlib.sha256(secret).digest() if len(secret) > _BLOCK else secret
    key = key.ljust(_BLOCK, b"\0")
    inner_start = hashlib.sha256(key.translate(_INNER_PAD))
    outer_start = hashlib.sha256(key.translate(_OUTER_PAD))

    def digest(content: str) -> str:
        inner = inner_start.copy()
        inner.update(content.encode())  # UTF-8
        outer = outer_start.copy()
        outer.update(inner.digest())
        return outer.hexdigest()

    return digest


def key_hash(digest: Callable[[str], str], key: str) -> str:
    """The audit's record of a subject key outside restorable mode: `key:` and the keyed hash of the key,
    told apart from a content hash of the same text by the "\\0key\\0" it is hashed after."""
    return "key:" + digest("\0key\0" + key)


def content_hash(secret: bytes, content: str) -> str:
    """Keyed hash (hex HMAC-SHA256) of the content."""
    return keyed_hasher(secret)(content)


class AuditEntry(NamedTuple):
    """One audit record: a forget (reason in FORGET_REASONS) or a restore (reason "restored"). Immutable; a
    named tuple rather than a frozen dataclass because a frozen dataclass's __init__ costs about 5x as much
    (one object.__setattr__ per field). Stores hand these out; the engine hands stores `AuditRow`s."""

    item_id: str
    kind: str
    reason: str
    at: float
    content_hash: str
    workspace_id: str = "default"
    scope: str = "workspace"
    owner_id: str | None = None
    key: str | None = None  # the subject key in restorable mode; else `key:<keyed hash>` (see key_hash)
    ttl: float | None = None
    content: str | None = None  # only in restorable mode
    restored_from: str | None = None  # for "restored": the forgotten item's id
    # Only in restorable mode: the item's other fields (RESTORE_FIELDS), so that restore() brings it back as
    # it was — an untrusted memory stays untrusted, a pinned one pinned.
    restore_fields: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        data = self._asdict()
        if self.restore_fields is not None:  # the only mutable field: callers get their own copy
            data["restore_fields"] = copy.deepcopy(self.restore_fields)
        return data

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


# An audit entry as the engine hands it to a store: a plain tuple of AuditEntry's fields, in their order
# (an AuditEntry is one too). A sweep audits tens of thousands of items at once, and making each tuple a
# named tuple as well cost as much again as building it: stores make the AuditEntry when one is read.
AuditRow = tuple[Any, ...]
ITEM_ID, REASON, AT, CONTENT_HASH, RESTORED_FROM = map(
    AuditEntry._fields.index, ("item_id", "reason", "at", "content_hash", "restored_from")
)
as_entry: Callable[[AuditRow], AuditEntry] = AuditEntry._make  # type: ignore[assignment]


def restorable_entry(entries: Sequence[AuditEntry], item_id: str, now: float) -> AuditEntry:
    """The forget entry `restore(item_id)` brings back, from the audit entries about `item_id`; NotFound
    or NotRestorable (one line) when there is none, it kept no content, it was restored already, or its hard
    deadline has passed."""
    forgotten = [e for e in entries if e.item_id == item_id and e.reason in FORGET_REASONS]
    if not forgotten:
        raise NotFound(f"id: no forgotten memory {item_id!r} in the audit")
    entry = forgotten[-1]
    if entry.content is None:
        raise NotRestorable(
            f"restore: {shown(item_id)} was forgotten while restorable mode was off; its content is gone"
        )
    again = [e for e in entries if e.restored_from == item_id]
    if again:
        raise NotRestorable(f"restore: {shown(item_id)} was already restored as {shown(again[-1].item_id)}")
    deadline = (entry.restore_fields or {}).get("expires_at")
    if deadline is not None and deadline <= now:
        raise NotRestorable(f"restore: {shown(item_id)}'s hard deadline (expires_at {deadline}) has passed")
    return entry


def restore_arguments(entry: AuditEntry) -> dict[str, Any]:
    """The fields `restore` writes the memory back with: everything it had except its id and its clock. An
    entry from before the fields were recorded has no trust information, so it comes back untrusted (auto)."""
    kept = entry.restore_fields if entry.restore_fields is not None else LEGACY_RESTORE_FIELDS
    pinned = bool(kept["pinned"])
    return {
        "content": entry.content,
        "kind": entry.kind,
        # No ttl and not pinned only for a legacy pinned entry: it comes back unpinned with the default ttl.
        "ttl": entry.ttl if entry.ttl is not None or pinned else UNSET,
        "pin": pinned,
        "curve": kept["curve"],
        "tags": kept["tags"],
        "source": kept["source"],
        "scope": entry.scope,
        "owner_id": entry.owner_id,
        "key": entry.key,
        "supersedes": kept["supersedes"],
        "expires_at": kept["expires_at"],
        "source_ref": copy.deepcopy(kept["source_ref"]),
    }


def _restore_fields(item: MemoryItem) -> dict[str, Any]:
    kept = {name: getattr(item, name) for name in RESTORE_FIELDS}
    kept["tags"] = list(item.tags)  # JSON-able, like the rest
    kept["source_ref"] = copy.deepcopy(item.source_ref)
    return kept


class AuditWriter:
    """Builds one workspace's audit entries: the keyed content hash always, the content itself only in
    restorable mode (`keep_content`)."""

    def __init__(self, secret: bytes, workspace_id: str, *, keep_content: bool) -> None:
        self.hash = keyed_hasher(secret)
        self.workspace_id = workspace_id
        self.keep_content = keep_content

    def forgets(
        self,
        items: Sequence[MemoryItem],
        reasons: Sequence[str],
        now: float,
        hashes: Sequence[str | None] | None = None,
    ) -> list[AuditRow]:
        """One forget entry per item, as an `AuditRow`: `reasons[i]` for `items[i]`; `hashes[i]`, if given and
        not None, is the content hash of `items[i]` computed when it was written (the others are hashed
        now)."""
        # One tight comprehension of plain tuples: a sweep may audit tens of thousands of items at once.
        # Fields in AuditEntry order, restored_from None for a forget.
        digest, workspace, keep = self.hash, self.workspace_id, self.keep_content
        key_of = self.key_for_audit
        return [
            (
                item.id,
                item.kind,
                why,
                now,
                known or digest(item.content),
                workspace,
                item.scope,
                item.owner_id,
                None if item.key is None else key_of(item.key),
                item.ttl,
                item.content if keep else None,
                None,
                _restore_fields(item) if keep else None,
            )
            for item, why, known in zip(items, reasons, hashes or [None] * len(items), strict=True)
        ]

    def key_for_audit(self, key: str) -> str:
        """What a forget entry records of the memory's subject key: the key itself in restorable mode (restore
        writes it back), else its keyed hash like the content's, so that a key that named something the user
        asked to forget is not left readable (`key_hash` recomputes it)."""
        return key if self.keep_content else key_hash(self.hash, key)

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
