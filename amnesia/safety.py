"""Credentials never enter memory (seed 004 §5.5): passwords, API keys, tokens, private keys, card numbers and
one-time codes are refused with the name of the rule that fired — never with the secret itself. Text from a
tool or web page that reads like instructions to the model (prompt injection, seed 002) is refused too:
memory is re-read into every later prompt, so it is an attack surface."""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import groupby

from amnesia.errors import InjectionRefused, SecretRefused


@dataclass(frozen=True)
class SecretRule:
    name: str
    pattern: re.Pattern[str]
    # Lower-case literals the pattern cannot match without (one of them must occur). Checked only on ASCII
    # text, where IGNORECASE matching and str.lower() agree exactly, to skip the regex search (a write path
    # runs every rule: the searches were most of `remember`'s time).
    needles: tuple[str, ...]


def _rule(name: str, pattern: str, *needles: str) -> SecretRule:
    return SecretRule(name, re.compile(pattern, re.IGNORECASE), needles)


RULES: tuple[SecretRule, ...] = (
    _rule("private-key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----", "-----begin"),
    _rule("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "akia", "asia"),
    _rule("api-key", r"\b(?:sk|pk|rk)-(?:[a-z]+-)?[A-Za-z0-9_\-]{20,}", "sk-", "pk-", "rk-"),
    _rule("api-key", r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}", "sk_", "rk_"),
    _rule("api-key", r"\bAIza[0-9A-Za-z_\-]{35}\b", "aiza"),
    _rule(
        "github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})", "gh", "github_pat_"
    ),
    _rule("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}", "xox"),
    _rule("bearer-token", r"\bbearer\s+[A-Za-z0-9._~+/\-]{16,}=*", "bearer"),
    _rule("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", "eyj"),
    _rule(
        "api-key",
        r"\b(?:api[_\- ]?key|secret[_\- ]?key|access[_\- ]?token|auth[_\- ]?token|client[_\- ]?secret|token)"
        r"\s*(?:is|[:=])\s*['\"]?[A-Za-z0-9._\-+/]{12,}",
        "api",
        "secret",
        "access",
        "auth",
        "client",
        "token",
    ),
    _rule("password", r"\b(?:password|passwd|passphrase|pwd)\s*(?:is|[:=])\s*\S{3,}", "pass", "pwd"),
    _rule("password", r"\bpin(?:\s*code)?\s*(?:is|[:=])\s*\d{4,}", "pin"),
    _rule("password", r"(?:密码|口令|密钥)\s*(?:是|为|[:=：])\s*\S{3,}", "密码", "口令", "密钥"),
    _rule(
        "one-time-code",
        r"\b(?:verification|one[- ]time|otp|2fa|security)\s+code\s*(?:is|[:=])?\s*\d{4,8}\b",
        "code",
    ),
    _rule("one-time-code", r"(?:验证码|动态码)\s*(?:是|为|[:=：])?\s*\d{4,8}", "验证码", "动态码"),
)
_NEEDLES = tuple(sorted({needle for rule in RULES for needle in rule.needles}))


# English letters, most frequent first (a byte that is not a letter counts as rarer than any).
_LETTER_FREQUENCY = b"etaoinshrdlcumwfgypbvkjxqz"


def _rarest(needle: bytes) -> int:
    """Position of the needle's rarest byte in ordinary text (the first of equals)."""

    def rarity(at: int) -> tuple[int, int]:
        rank = _LETTER_FREQUENCY.find(needle[at : at + 1])
        return (len(_LETTER_FREQUENCY) if rank < 0 else rank), -at

    return max(range(len(needle)), key=rarity)


def _literal_gate(needles: tuple[str, ...]) -> re.Pattern[bytes]:
    """One search for every ASCII literal at once. Each literal is looked for from its rarest byte: the
    literals are grouped by that byte, and each is matched forward from it, then checked whole by a lookbehind
    (`k(?:en(?<=token)|ia(?<=akia))|...`). The regex engine stops only where one of those rarer bytes occurs,
    and there tries only the literals that it can be part of, each first by its next byte (an alternative that
    starts with a literal byte is skipped at once when that byte is not there)."""
    pieces = sorted(
        (needle[cut:], needle)
        for needle in (needle.encode() for needle in needles if needle.isascii())
        for cut in (_rarest(needle),)
    )
    branches = [
        re.escape(first)
        + b"(?:"
        + b"|".join(
            re.escape(rest[1:]) + (b"(?<=" + re.escape(needle) + b")" if len(needle) > len(rest) else b"")
            for rest, needle in group
        )
        + b")"
        for first, group in groupby(pieces, key=lambda piece: piece[0][:1])
    ]
    return re.compile(b"|".join(branches))


# Most text holds none of the literals, and then no rule can match: one search on the lower-cased bytes
# says so. Only when it finds one are the literals present looked up one by one.
_NEEDLE_GATE = _literal_gate(_NEEDLES)
_CARD = re.compile(r"\b(?:\d[ \-]?){13,19}\b")
_CARD_MIN_DIGITS = 13
# ASCII lower-casing (str.lower() on ASCII text) with every digit made "0".
_FOLD = bytes.maketrans(b"ABCDEFGHIJKLMNOPQRSTUVWXYZ123456789", b"abcdefghijklmnopqrstuvwxyz000000000")


def _luhn_ok(digits: str) -> bool:
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2 == 1:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


def find_secret_rule(text: str) -> str | None:
    """The name of the first rule the text trips, or None when it looks safe to store."""
    ascii_only = text.isascii()
    rules = RULES
    if ascii_only:  # only the rules one of whose literals occurs can match
        # Lower-cased, digits as "0": no literal holds a digit, so the literals are found as in the
        # lower-cased text, and the digits are counted in one pass.
        folded = text.encode().translate(_FOLD)  # ASCII: UTF-8 gives the same bytes, with no codec lookup
        rules = () if _NEEDLE_GATE.search(folded) is None else _rules_present(folded)
    for rule in rules:
        if rule.pattern.search(text):
            return rule.name
    if ascii_only and folded.count(b"0") < _CARD_MIN_DIGITS:
        return None  # too few digits for a card number
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn_ok(digits):
            return "payment-card"
    return None


def _rules_present(folded: bytes) -> tuple[SecretRule, ...]:
    """The rules one of whose literals occurs in the folded text (see `find_secret_rule`). A function of
    its own: comprehensions over `find_secret_rule`'s locals would make it allocate closure cells on every
    call."""
    present = {needle for needle in _NEEDLES if needle.encode() in folded}
    return tuple(rule for rule in RULES if not present.isdisjoint(rule.needles))


def refuse_secrets(text: str) -> None:
    """Raise SecretRefused (naming the rule, never the secret) if the text carries a credential."""
    rule = find_secret_rule(text)
    if rule is not None:
        raise SecretRefused(rule)


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
    "injection-addressed-to-model": re.compile(
        r"\b(note|message|instructions?)\s+(to|for)\s+(the\s+)?(ai|assistant|model|llm|chatbot)\b",
        re.IGNORECASE,
    ),
    "injection-zh-ignore": re.compile(
        r"(忽略|无视|忘记)(之前|以上|先前|前面|所有)的?(指令|规则|说明|提示|设置)"
    ),
    "injection-zh-role": re.compile(r"你现在是|从现在起你是"),
}


def find_injection_rule(text: str) -> str | None:
    """The name of the first prompt-injection pattern the text trips, or None."""
    for name, pattern in INJECTION_RULES.items():
        if pattern.search(text):
            return name
    return None


def refuse_injection(text: str) -> None:
    """Raise InjectionRefused (naming the rule) if untrusted text reads like instructions to the model."""
    rule = find_injection_rule(text)
    if rule is not None:
        raise InjectionRefused(rule)
