"""The one gate every memory write of the retrieval arm passes (seed 002): a security scan for
prompt-injection phrasing (memory is re-read into future prompts, so it is an attack surface) and
credentials (seed 004 §5.5). Returns the name of the rule that fired, never the matched text."""

from __future__ import annotations

import re

from amnesia.safety import find_secret_rule

INJECTION_RULES: dict[str, re.Pattern[str]] = {
    "injection-ignore-previous": re.compile(
        r"\b(ignore|disregard|forget|override)\b.{0,20}\b(previous|prior|above|earlier|all)\b.{0,20}"
        r"\b(instructions?|rules?|prompts?|messages?)\b",
        re.IGNORECASE,
    ),
    "injection-role-override": re.compile(r"\byou are now\b|\bact as (the )?system\b", re.IGNORECASE),
    "injection-system-prompt": re.compile(
        r"\b(reveal|print|show|leak)\b.{0,20}\bsystem prompt\b", re.IGNORECASE
    ),
    "injection-chat-markup": re.compile(
        r"<\|(im_start|im_end|system)\|>|\[/?INST\]|<</?SYS>>", re.IGNORECASE
    ),
    "injection-new-instructions": re.compile(r"\bnew (system )?instructions?\s*:", re.IGNORECASE),
    "injection-zh-ignore": re.compile(r"(忽略|无视|忘记)(之前|以上|先前|前面|所有)的?(指令|规则|说明|提示)"),
    "injection-zh-role": re.compile(r"你现在是|从现在起你是"),
}


def scan(text: str) -> str | None:
    """The first rule the text trips (`credential:<rule>` or `injection-...`), or None when it may be
    stored."""
    secret_rule = find_secret_rule(text)
    if secret_rule is not None:
        return f"credential:{secret_rule}"
    for name, pattern in INJECTION_RULES.items():
        if pattern.search(text):
            return name
    return None
