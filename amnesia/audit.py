"""The forget audit: what was forgotten, when and why, with a keyed hash instead of the content.

A bare SHA-256 of short content (a phone number, a PIN) can be reversed by brute force, so the hash is
HMAC-SHA256 with a per-store secret. `verify(text)` recomputes it: did a forgotten item have that text?
The content itself is kept only in restorable mode (Config.restorable), for restore().
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import asdict, dataclass
from typing import Any, Literal

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


def new_secret() -> bytes:
    return secrets.token_bytes(SECRET_BYTES)


def content_hash(secret: bytes, content: str) -> str:
    """Keyed hash (hex HMAC-SHA256) of the content."""
    return hmac.new(secret, content.encode("utf-8"), hashlib.sha256).hexdigest()


@dataclass(frozen=True)
class AuditEntry:
    """One audit record: a forget (reason in FORGET_REASONS) or a restore (reason "restored")."""

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
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AuditEntry:
        return cls(**data)

    def matches(self, secret: bytes, text: str) -> bool:
        return hmac.compare_digest(self.content_hash, content_hash(secret, text))
