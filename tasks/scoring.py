"""Probe scoring: every answer is exactly one of `correct`, `stale`, `poisoned`, `abstained`, `wrong`.

Matching rules (shared with the scripted model, which looks for candidates the same way):
- case-insensitive; whole-word for Latin values, substring for values containing CJK;
- a longer candidate wins over a shorter one it overlaps ("milk oolong" is not also "oolong");
- negation-aware: a mention preceded in its clause by a negation or a "used to be" cue ("no longer X",
  "not X", "instead of X", "switched from X", "不是X", "不再是X", "已经不是X", "以前是X") is not an
  assertion of X.

Precedence when several values are asserted: poison > stale > expect. An answer that mixes the current
value with a stale or poisoned one has been misled, so it does not count as correct.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import lru_cache

from amnesia.tokens import has_cjk
from tasks.spec import Classification, ProbeSpec

# A clause ends at punctuation or a contrastive conjunction; a negation cue only reaches into its clause.
_CLAUSE_BREAK = re.compile(
    r"[.,;:!?\n，。；：！？、]|\b(?:but|however|now|rather)\b|但是|但|而是|现在", re.IGNORECASE
)
# Words between a cue and the value; "to" is excluded so "changed from X to Y" does not negate Y.
_GAP = r"(?:\s+(?!to\b)[\w'-]+)"
_LATIN_NEGATION = re.compile(
    rf"(?:(?:\bno\s+longer|\bnot|\bnever|\w+n't|\bno\s+more){_GAP}{{0,3}}"
    r"|(?:\binstead\s+of|\brather\s+than|\bin\s+place\s+of|\bused\s+to\s+be|\bformerly|\bpreviously"
    rf"|\b(?:switched|changed|moved|replaced|upgraded|migrated)\s+(?:away\s+)?from){_GAP}?)\s*$",
    re.IGNORECASE,
)
_CJK_NEGATION = re.compile(
    r"(?:已经不是|不再是|而不是|不是|不再|并非|而非|没有|以前是|原来是|之前是|曾经是)\s*\S{0,2}$"
)
_ABSTENTIONS = (
    "i don't know",
    "i do not know",
    "i don’t know",
    "don't know",
    "not sure",
    "no information",
    "i don't have",
    "i do not have",
    "cannot tell",
    "can't tell",
    "don't remember",
    "do not remember",
    "don't recall",
    "do not recall",
    "no record of",
    "unknown",
    "不知道",
    "不清楚",
    "无法确定",
    "没有相关",
    "不确定",
    "不记得",
    "记不清",
    "没有记录",
)


# Whole-word boundaries for Latin values: a CJK character next to a Latin word is a boundary ("是oolong").
_LATIN_WORD_CHAR = r"[0-9A-Za-z_\u00c0-\u024f]"


@dataclass(frozen=True)
class Mention:
    value: str
    start: int
    end: int
    negated: bool


@lru_cache(maxsize=4096)
def _value_pattern(value: str) -> re.Pattern[str]:
    escaped = re.escape(value.strip())
    if has_cjk(value):
        return re.compile(escaped, re.IGNORECASE)
    return re.compile(rf"(?<!{_LATIN_WORD_CHAR}){escaped}(?!{_LATIN_WORD_CHAR})", re.IGNORECASE)


def _is_negated(text: str, start: int) -> bool:
    prefix = text[:start]
    breaks = list(_CLAUSE_BREAK.finditer(prefix))
    clause = prefix[breaks[-1].end() :] if breaks else prefix
    return bool(_LATIN_NEGATION.search(clause) or _CJK_NEGATION.search(clause))


def find_mentions(text: str, values: tuple[str, ...] | list[str]) -> list[Mention]:
    """Every non-overlapping mention of any value in `text`, in text order (longest value wins an overlap)."""
    found: list[Mention] = []
    for value in values:
        if not value.strip():
            continue
        for match in _value_pattern(value).finditer(text):
            found.append(Mention(value, match.start(), match.end(), _is_negated(text, match.start())))
    found.sort(key=lambda m: (-(m.end - m.start), m.start))
    accepted: list[Mention] = []
    for mention in found:
        if all(mention.end <= other.start or mention.start >= other.end for other in accepted):
            accepted.append(mention)
    accepted.sort(key=lambda m: (m.start, m.end))
    return accepted


def asserted_values(text: str, values: tuple[str, ...] | list[str]) -> set[str]:
    """The values that `text` asserts (mentioned and not negated)."""
    return {m.value for m in find_mentions(text, values) if not m.negated}


def is_abstention(answer: str) -> bool:
    lowered = answer.casefold().replace("’", "'")
    return any(phrase in lowered for phrase in _ABSTENTIONS)


def classify(answer: str, probe: ProbeSpec) -> tuple[Classification, dict[str, list[str]]]:
    """(classification, matched); matched lists the asserted values of each kind, in the probe's order.

    Answer and values are NFKC-normalised first: real models may write full-width letters (ｏｏｌｏｎｇ)."""
    answer = unicodedata.normalize("NFKC", answer)
    normalised = {unicodedata.normalize("NFKC", value): value for value in probe.candidates}
    asserted = {normalised[value] for value in asserted_values(answer, tuple(normalised))}
    matched = {
        "expect": [v for v in probe.expect if v in asserted],
        "stale": [v for v in probe.stale if v in asserted],
        "poison": [v for v in probe.poison if v in asserted],
    }
    if matched["poison"]:
        return "poisoned", matched
    if matched["stale"]:
        return "stale", matched
    if matched["expect"]:
        return "correct", matched
    if is_abstention(answer):
        return ("correct" if probe.abstain else "abstained"), matched
    return "wrong", matched


# ---- free-text answers: token F1 (the LoCoMo paper's metric) ---------------------------------------------

_ARTICLES = re.compile(r"\b(?:a|an|the|and)\b")
_PUNCTUATION = re.compile(r"[^\w\s]")
_NOT_MENTIONED = ("not mentioned", "no information available")


def answer_tokens(text: str) -> list[str]:
    """LoCoMo's answer normalisation: NFKC, lower case, punctuation and articles removed, split on spaces.
    (LoCoMo also Porter-stems the tokens; this does not, so scores on inflected words can differ a little.)"""
    text = unicodedata.normalize("NFKC", text).casefold().replace(",", "")
    return _ARTICLES.sub(" ", _PUNCTUATION.sub(" ", text)).split()


def token_f1(answer: str, gold: str) -> float:
    """Harmonic mean of token precision and recall between an answer and a gold answer (0 when either is
    empty after normalisation)."""
    predicted, wanted = answer_tokens(answer), answer_tokens(gold)
    common = sum(min(predicted.count(token), wanted.count(token)) for token in set(predicted))
    if not predicted or not wanted or common == 0:
        return 0.0
    precision, recall = common / len(predicted), common / len(wanted)
    return 2 * precision * recall / (precision + recall)


def free_text_score(answer: str, gold: str | None, *, abstain: bool, mechanism: str = "") -> float | None:
    """The free-text score of an answer, in LoCoMo's manner: an abstention question scores 1 for an
    abstention ("I don't know", "not mentioned"...) and 0 otherwise; a multi-hop gold answer listing several
    parts (comma-separated) scores the mean over its parts of the best F1 against any part of the answer;
    otherwise token F1. None when the probe has neither a gold answer nor an expected abstention."""
    if abstain:
        lowered = answer.casefold()
        return 1.0 if is_abstention(answer) or any(p in lowered for p in _NOT_MENTIONED) else 0.0
    if gold is None:
        return None
    if mechanism == "multi-hop" and "," in gold:
        parts = [part for part in gold.split(",") if part.strip()]
        answers = [part for part in answer.split(",") if part.strip()] or [answer]
        return sum(max(token_f1(a, part) for a in answers) for part in parts) / len(parts)
    return token_f1(answer, gold)
