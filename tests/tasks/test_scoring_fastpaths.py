"""The scorer's shortcuts against the plain way: value mentions proposed by `str.find` on the folded text and
checked by the pattern, whole words checked around a match instead of by look-arounds in each value's
pattern, and the clause before a mention found by scanning back in windows, give the mentions (values,
places, negation) that scanning every pattern, look-arounds included, over the whole text gives; a negation
cue is found in a clause's last stretch of words where the search of the whole clause finds it."""

from __future__ import annotations

import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from amnesia.tokens import has_cjk
from tasks import scoring
from tasks.scoring import Mention, find_mentions

# Letters that match ASCII ones case-insensitively ("İ", "ı", "ſ", the Kelvin sign), the block's " · ",
# clause breaks (punctuation, "but", "now", CJK words) and negation cues, so that every branch is met.
PIECES = st.sampled_from([
    "oolong", "Oolong", "OOLONG", "milk oolong", "lapsang", "pytest", "PyTest", "sky", "ski", "İ", "ı",
    "ſ", "\u212a", "K", "k", "s", "i", " · ", " ", "  ", ".", ",", ";", ":", "!", "?", "\n", "，", "。",
    "、", " but ", " now ", "However ", "rather", "但是", "但", "而是", "现在", "乌龙茶", "正山小种",
    "不是", "not ", "no longer ", "isn't ", "used to be ", "switched from ", " was vetoed", " before.",
    "has passed", "- [m-0001] fact · written 5d ago · ", "x", "_", "é", "É", "ß",
])  # fmt: skip
VALUES = st.lists(
    st.sampled_from(["oolong", "milk oolong", "lapsang", "pytest", "sky", "ski", "k", "s", "乌龙茶",
                     "正山小种", "ſky", "\u212aey", "İt", " oolong ", "", "  ", "k k"]),
    max_size=4,
)  # fmt: skip


def _plain_pattern(value: str) -> re.Pattern[str]:
    """A value's pattern as it was: the whole-word look-arounds inside it, for a Latin value."""
    escaped, word = re.escape(value.strip()), scoring._LATIN_WORD_CHAR.pattern
    if has_cjk(value):
        return re.compile(escaped, re.IGNORECASE)
    return re.compile(rf"(?<!{word}){escaped}(?!{word})", re.IGNORECASE)


def _plain_clause_before(text: str, start: int) -> str:
    breaks = list(scoring._CLAUSE_BREAK.finditer(text, 0, start))
    return text[breaks[-1].end() : start] if breaks else text[:start]


def _plain_mentions(text: str, values: list[str], not_asserting: tuple[str, ...]) -> list[Mention]:
    """find_mentions as it was: each value's pattern over the whole text, each clause from the start (the
    overlap and negation step after the matches is the scorer's own, shared)."""
    found = [
        (value, match.start(), match.end())
        for value in values
        if value.strip()
        for match in _plain_pattern(value).finditer(text)
    ]
    original = scoring._clause_before
    scoring._clause_before = _plain_clause_before  # type: ignore[assignment]
    try:
        return scoring._mentions_of_matches(text, found, not_asserting)
    finally:
        scoring._clause_before = original  # type: ignore[assignment]


@settings(max_examples=400, deadline=None)
@given(pieces=st.lists(PIECES, max_size=40), values=VALUES, not_asserting=st.lists(PIECES, max_size=2))
@example(pieces=["x", "乌龙茶", "k"], values=["乌龙茶"], not_asserting=[])  # CJK: found inside Latin words
@example(pieces=["ſ", "k k k"], values=["k k"], not_asserting=[])  # a whole word starts inside a part of one
def test_mentions_are_those_of_the_plain_scan(pieces, values, not_asserting):
    text = "".join(pieces)
    assert find_mentions(text, values, tuple(not_asserting)) == _plain_mentions(
        text, values, tuple(not_asserting)
    )


@settings(max_examples=300, deadline=None)
@given(pieces=st.lists(PIECES | st.text(max_size=3), max_size=120), at=st.integers(min_value=0))
def test_the_clause_before_is_that_of_the_plain_scan(pieces, at):
    """Long texts too (the windows grow), arbitrary characters between the pieces."""
    text = "".join(pieces)
    start = at % (len(text) + 1)
    assert scoring._clause_before(text, start) == _plain_clause_before(text, start)


def test_only_four_other_characters_match_an_ascii_letter():
    """`_folded_in_place` relies on it: under IGNORECASE an ASCII letter matches its two cases and, among all
    other characters, only "İ", "ı", "ſ" and the Kelvin sign."""
    others = "".join(chr(code) for code in range(128, 0x110000) if not 0xD800 <= code < 0xE000)
    matched = set(re.compile("[a-z]", re.IGNORECASE).findall(others))
    for letter in "abcdefghijklmnopqrstuvwxyz":
        matched |= set(re.compile(letter, re.IGNORECASE).findall(others))
    assert matched == {"İ", "ı", "ſ", "\u212a"}


# Negation cues, the characters a `_LATIN_NEGATION` match may hold besides letters and spaces (apostrophes,
# hyphens), and characters it may not hold, so that the match starts before, at and after such a character.
CLAUSE_PIECES = PIECES | st.sampled_from([
    "n't ", "don't ", "isn't", "won't ", "well-", "-", "'", "re-", "-not ", "'not ", " not", "never ",
    "previously ", "at first ", "in the past ", "old value ", "moved away from ", "rather than ", "to ",
    "(", ")", '"', "·", "#", "/", "NOT ", "No Longer ", "ſwitched from ",
])  # fmt: skip


@settings(max_examples=500, deadline=None)
@given(pieces=st.lists(CLAUSE_PIECES, max_size=30))
def test_a_negation_is_found_where_the_search_of_the_whole_clause_finds_it(pieces):
    """`_negation_start`: searching the clause's words from there, on their own, finds the match searching
    all of the clause finds; `_latin_negated` (its answer kept for each stretch of words) says so."""
    clause = "".join(pieces)
    plain = scoring._LATIN_NEGATION.search(clause)
    start = scoring._negation_start(clause)
    found = scoring._LATIN_NEGATION.search(clause[start:])
    assert (found and (found.start() + start, found.end() + start)) == (plain and plain.span())
    assert scoring._latin_negated(clause) == (plain is not None)
