"""The one gate every memory write of the retrieval arm passes (seed 002): a security scan for
prompt-injection phrasing (memory is re-read into future prompts, so it is an attack surface) and
credentials (seed 004 §5.5). The rules are the engine's (`amnesia.safety`: its credential rules and its
injection patterns), so the arm refuses every credential the engine refuses, in the same fields (content,
key, tags). Returns the name of the rule that fired, never the matched text.

The seed defends both sides: the scan runs on every write, and again when an entry is read back into a
prompt, where a tripped entry shows as a `[BLOCKED: rule]` placeholder instead of its text (`shown`)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from amnesia.safety import find_injection_rule, find_secret_rule


@lru_cache(maxsize=8192)  # the read side rescans the same entries on every injection
def scan(text: str) -> str | None:
    """The first rule the text trips (`credential:<rule>` or `injection-...`), or None when it may be
    stored."""
    secret_rule = find_secret_rule(text)
    if secret_rule is not None:
        return f"credential:{secret_rule}"
    return find_injection_rule(text)


def scan_write(content: str, key: str | None = None, tags: Iterable[str] = ()) -> str | None:
    """The first rule a write trips: its content (credentials and injection), then its key and its tags
    (credentials, as the engine scans them); None when it may be stored."""
    rule = scan(content)
    if rule is not None:
        return rule
    for extra in (key, *tags):
        secret_rule = find_secret_rule(extra) if extra else None
        if secret_rule is not None:
            return f"credential:{secret_rule}"
    return None


def shown(text: str) -> str:
    """The text as it may reach a prompt: itself, or `[BLOCKED: rule]` when it trips the scan on the way
    out (an entry stored before a rule existed, or edited outside the gate)."""
    rule = scan(text)
    return text if rule is None else f"[BLOCKED: {rule}]"
