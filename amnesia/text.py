"""Text matching shared by recall/forget(query) and the `renew_on_inject="used"` overlap rule, and the
ranking tokeniser of `injection_order="relevance"` (also the rule-based arms' BM25 tokeniser).

Matching terms are case-folded Latin words and digit runs, plus CJK bigrams (a lone CJK character counts as a
term only when the text has no bigram). A query matches a memory when the whole query is a substring of it,
or when every non-stopword query term occurs in it (whole words for Latin, substrings for CJK).

Ranking terms (`tokenize`) are lowercase Latin words through a conservative suffix stemmer, and CJK
unigrams followed by adjacent bigrams, so that 记忆 does not match every text that merely contains 记 while a
one-character query still finds something.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

from amnesia.tokens import _CJK

_WORD = re.compile(rf"[^\W{_CJK}]+", re.UNICODE)
_CJK_RUN = re.compile(rf"[{_CJK}]+")
_STOPWORD_TEXT = """
a an and are as at be but by can did do does for from had has have he her his how i if in into is it
its me my no not of on or our she so than that the their them then there these they this to us was
we were what when where which who why will with would you your about also just now still been being
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())
MIN_DISTINCTIVE_WORD = 4
# A statement's copula (`supersede_same_subject`): English is/are/was/were as whole words, Chinese 是.
_COPULA = re.compile(r"\b(?:is|are|was|were)\b|是", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?。！？]")
_PIECE = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]+", re.UNICODE)
# Endings that look like a plural "s" but belong to the stem (class, basis, status, analysis, bus).
_KEEP_ENDINGS = ("ss", "us", "is", "ous")


def words(text: str) -> set[str]:
    return {word.casefold() for word in _WORD.findall(text)}


def cjk_bigrams(text: str) -> set[str]:
    grams: set[str] = set()
    for run in _CJK_RUN.findall(text):
        grams.update(run[i : i + 2] for i in range(len(run) - 1))
        if len(run) == 1:
            grams.add(run)
    return grams


def query_terms(query: str) -> set[str]:
    return {word for word in words(query) if word not in STOPWORDS} | cjk_bigrams(query)


def matches_query(query: str, content: str) -> bool:
    folded_query = query.casefold().strip()
    folded = content.casefold()
    if folded_query and folded_query in folded:
        return True
    terms = query_terms(query)
    if not terms:
        return False
    content_words = words(content)
    return all(term in content_words or (not _WORD.fullmatch(term) and term in folded) for term in terms)


def distinctive_terms(text: str) -> set[str]:
    """Terms that can show an answer drew on this text: content words of 4+ letters, numbers, CJK bigrams."""
    latin = {
        word
        for word in words(text)
        if word not in STOPWORDS
        and (len(word) >= MIN_DISTINCTIVE_WORD or (word.isdigit() and len(word) >= 2))
    }
    return latin | cjk_bigrams(text)


def answer_terms(text: str) -> set[str]:
    return words(text) | cjk_bigrams(text)


def drawn_on(contents: Mapping[str, str], answer: str, question: str | None = None) -> set[str]:
    """The ids (keys of `contents`) whose content an answer drew on: the answer contains one of the content's
    distinctive terms that no other content and not the question contains."""
    terms = {name: distinctive_terms(content) for name, content in contents.items()}
    said = answer_terms(answer) - (answer_terms(question) if question else set())
    used = set()
    for name, own in terms.items():
        others = set().union(*(other for key, other in terms.items() if key != name))
        if (own - others) & said:
            used.add(name)
    return used


@lru_cache(maxsize=1 << 16)  # a vocabulary repeats: most words are stemmed once
def stem(word: str) -> str:
    """Strip one conservative suffix: uses→use, studies→study, classes→class, boxes→box; class, basis
    untouched."""
    if len(word) <= 3 or not word.isalpha() or word.endswith(_KEEP_ENDINGS):
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ches", "shes", "xes", "zes")):
        return word[:-2]
    if word.endswith("s"):
        return word[:-1]
    return word


def tokenize(text: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """Ranking terms: stemmed lowercase Latin words (those in `skip` left out, before stemming); CJK
    unigrams followed by adjacent bigrams."""
    terms: list[str] = []
    for piece in _PIECE.findall(text.lower()):
        if _CJK_RUN.fullmatch(piece):
            terms.extend(piece)
            terms.extend(piece[i : i + 2] for i in range(len(piece) - 1))
        elif piece not in skip:
            terms.append(stem(piece))
    return terms


def subject_of(text: str) -> frozenset[str] | None:
    """The subject a statement "<subject> is|are|was|were|是 <value>" is about: the ranking terms (`tokenize`,
    stopwords out) of the text before its first copula, as a set. None when the text has no copula, when
    a sentence ends before it, or when either side has no term: then it states no subject."""
    copula = _COPULA.search(text)
    if copula is None:
        return None
    head, tail = text[: copula.start()], text[copula.end() :]
    if _SENTENCE_END.search(head) or not tokenize(tail, STOPWORDS):
        return None
    return frozenset(tokenize(head, STOPWORDS)) or None
