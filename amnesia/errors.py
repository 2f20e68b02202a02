"""Engine errors. Every message is one line and never echoes a refused secret or an item's content."""

from __future__ import annotations


def one_line(error: BaseException) -> str:
    """The first line of an error's message (its type name when it has none): what a user or model sees."""
    text = str(error)
    return text.splitlines()[0] if text.strip() else type(error).__name__


class AmnesiaError(Exception):
    """Base class of every error the engine raises on purpose."""


class InvalidInput(AmnesiaError, ValueError):
    """A caller passed something the engine will not accept (bad field, bad value, refused combination)."""


class SecretRefused(InvalidInput):
    """A field of a write (`field`: content, key, tags or source_ref) looks like a credential; `rule` names
    the detector that fired (never the secret)."""

    def __init__(self, rule: str, field: str = "content") -> None:
        self.rule = rule
        self.field = field
        super().__init__(
            f"{field} refused: it looks like a credential (rule: {rule}); keep secrets in a vault"
        )


class CapacityExceeded(AmnesiaError):
    """The write does not fit even after evicting every unpinned item; nothing was dropped."""


class StoreConflict(AmnesiaError):
    """A write planned on a view of the store that another process has changed since (it may have filled
    the store or written the same key): nothing was written; the engine reloads and plans the write again."""


class NotFound(AmnesiaError, LookupError):
    """No live item (or audit entry) has that id."""


class NotRestorable(AmnesiaError):
    """restore() needs `restorable=True` and an audit entry that kept the content."""


class StoreBusy(AmnesiaError):
    """The database stayed locked by another process for longer than the configured lock timeout."""


class InjectionRefused(InvalidInput):
    """Text from a tool or web page (source tool/auto) reads like instructions to the model; `rule` names the
    pattern that fired. Memory is re-read into every later prompt, so such text never enters it."""

    def __init__(self, rule: str) -> None:
        self.rule = rule
        super().__init__(
            f"content refused: untrusted text reads like a prompt injection (rule: {rule}); "
            "store the fact in your own words"
        )


class StoreFull(AmnesiaError):
    """The disk (or the database's page limit) is full: the write was rolled back; the message names the
    file."""
