"""The rule-based parts of seed 004's memory layers around the claim store (`arms/claims.py`): what may
become a claim (admission, §5.2 and §5.5), which named entities a claim is about (the entity pages of the
bank, §7.2), and the calendar dates of the diaries (§3.1).

Everything here is a deterministic stand-in for what the seed does with a model or a background pipeline; each
function says what it can and cannot tell.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from amnesia.safety import find_secret_rule
from arms.textnorm import content_terms

# §5.2: tool calls and diagnostics belong in work files, not in memory. Recognised by their form only: a
# traceback, a stack frame, a log line (level or timestamp first), a shell prompt with a command.
_DIAGNOSTIC = re.compile(
    r"Traceback \(most recent call last\)|^\s*File \"[^\"]+\", line \d+|^\s*at [\w.$]+\([\w.]+:\d+\)"
    r"|^\s*\[?(?:ERROR|WARN|WARNING|DEBUG|TRACE|FATAL)\]?[:\] ]"
    r"|^\s*\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?\S*\s+\S"
    r"|^\s*\$ \S",
    re.MULTILINE,
)
# §5.2 "write for the next conversation": fewer content terms than this cannot stand alone.
MIN_CONTENT_TERMS = 2

ADMISSION_PROMPT = (
    "Should this statement be kept in a user's long-term memory? Keep durable understanding: who the user "
    "is, who and what they care about, preferences, decisions, commitments, and outcomes that change their "
    "situation. Do not keep routine progress, tool calls, diagnostics or transient task state. "
    "Answer yes or no.\nSTATEMENT: "
)


def refusal(content: str, rules: str) -> tuple[str, str] | None:
    """(reason, rule name) when `content` may not become a claim under `rules` (`credentials`: only the
    credential rules of amnesia.safety, which also refuse payment cards and one-time codes; `rules`: also
    diagnostics and statements too thin to stand alone), or None when it is admitted."""
    rule = find_secret_rule(content)  # also §5.5's one-time data: card numbers, verification codes
    if rule is not None:
        return "credentials never enter a claim", rule
    if rules == "credentials":
        return None
    if _DIAGNOSTIC.search(content):
        return "tool calls and diagnostics belong in work files", "diagnostic"
    if len(content_terms(content)) < MIN_CONTENT_TERMS:
        return "too little context to be understood in a later conversation", "no-context"
    return None


# Entities (§7.2's people and groups pages): capitalised Latin-script words that do not open a sentence, and
# runs of them ("Harbour Office"). No rule tells a person from a team or a place, and names in CJK script are
# not found (that needs a model or a dictionary): a stand-in for the seed's Relationships pipeline.
_NAME = re.compile(r"(?<![\w\-./@])[A-Z][a-z][\w'’-]*(?:\s+[A-Z][a-z][\w'’-]*)*")
_POSSESSIVE = re.compile(r"['’]s?$")
_SENTENCE_START = re.compile(r"(?:^|[.!?。！？]\s*|\n\s*)$")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october")
_NOT_NAMES = frozenset([*_WEEKDAYS, *(d + "s" for d in _WEEKDAYS), *_MONTHS, "november", "december", "user"])


def entities_of(text: str) -> tuple[str, ...]:
    """The named entities a statement mentions, in order of first mention, without duplicates."""
    found: dict[str, None] = {}
    for match in _NAME.finditer(text):
        if _SENTENCE_START.search(text[: match.start()]):
            continue
        words = [_POSSESSIVE.sub("", w) for w in match.group().split() if w.casefold() not in _NOT_NAMES]
        if words:
            found.setdefault(" ".join(words), None)
    return tuple(found)


def mentions(text: str, entity: str) -> bool:
    """Whether `text` names `entity` (whole words, any case)."""
    return re.search(rf"(?<!\w){re.escape(entity)}(?!\w)", text, re.IGNORECASE) is not None


def slug(entity: str) -> str:
    """The entity's page file name (without `.md`)."""
    return re.sub(r"[^\w]+", "-", entity.casefold()).strip("-")


def day_of(at: float) -> str:
    """The diary date (`YYYY-MM-DD`, UTC) of a simulated time (Unix seconds)."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d")


def clock_of(at: float) -> str:
    """`HH:MM` (UTC) of a simulated time, as in the diary headings."""
    return datetime.fromtimestamp(at, UTC).strftime("%H:%M")


def iso_of(at: float) -> str:
    """ISO 8601 (UTC, seconds) of a simulated time: the date of a claim's source message."""
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
