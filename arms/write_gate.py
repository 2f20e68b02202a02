"""The one gate every memory write of the retrieval arm passes (seed 002): a security scan for
prompt-injection phrasing (memory is re-read into future prompts, so it is an attack surface) and
credentials (seed 004 §5.5). Returns the name of the rule that fired, never the matched text."""

from __future__ import annotations

from amnesia.safety import find_injection_rule, find_secret_rule


def scan(text: str) -> str | None:
    """The first rule the text trips (`credential:<rule>` or `injection-...`), or None when it may be
    stored."""
    secret_rule = find_secret_rule(text)
    if secret_rule is not None:
        return f"credential:{secret_rule}"
    return find_injection_rule(text)
