"""The forget audit: what was forgotten, when and why, with a keyed hash instead of the content.

A bare SHA-256 of short content (a phone number, a PIN) can be reversed by brute force, so the hash is
HMAC-SHA256 with a per-store secret. `verify(text)` recomputes it: did a forgotten item have that text?
The content itself is kept only in restorable mode (Config.restorable), for restore().
"""

from __future__ import annotations

import hashlib
import secrets
from typing import Any, Literal, NamedTuple

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

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditEntry:
        return cls(**data)
