"""Tokenising shared by the rule-based arms (seed 002's BM25 tokenizer): Latin words with a
conservative suffix stemmer, CJK as unigrams plus adjacent bigrams, so that 记忆 does not match every
entry that merely contains 记 while a one-character query still recalls."""

from __future__ import annotations

import re

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_PIECE = re.compile(rf"[{_CJK}]+|[^\W{_CJK}]+", re.UNICODE)
_CJK_RUN = re.compile(rf"[{_CJK}]+")

# Words too common to say anything about a memory's subject; used only by `content_terms` (similarity rules),
# never by BM25, whose IDF already discounts them.
_ENGLISH_STOPWORDS = (
    "a an the is are was were be been am i you we they he she it its it's this that these those to of in on "
    "at for with by from as and or but not no now our my your their his her me us them do does did will "
    "would can should please remember update note so just also what which who when where how there here"
)
STOPWORDS = frozenset(_ENGLISH_STOPWORDS.split()) | frozenset("的了是在我你他她它们这那和与也就都还吗呢吧啊")
# Endings that look like a plural "s" but belong to the stem (class, basis, status, analysis, bus).
_KEEP_ENDINGS = ("ss", "us", "is", "ous")


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


def tokenize(text: str) -> list[str]:
    """Index/query terms: stemmed lowercase Latin words; CJK unigrams followed by adjacent bigrams."""
    terms: list[str] = []
    for piece in _PIECE.findall(text.lower()):
        if _CJK_RUN.fullmatch(piece):
            terms.extend(piece)
            terms.extend(piece[i : i + 2] for i in range(len(piece) - 1))
        else:
            terms.append(stem(piece))
    return terms


def content_terms(text: str) -> frozenset[str]:
    """The distinct non-stopword terms of a text: the basis of the similarity rules (dedup, supersession)."""
    return frozenset(term for term in tokenize(text) if term not in STOPWORDS)


def jaccard(left: frozenset[str], right: frozenset[str]) -> float:
    if not left and not right:
        return 1.0
    return len(left & right) / len(left | right)


def dice(left: frozenset[str], right: frozenset[str]) -> float:
    """2|A∩B| / (|A|+|B|): kinder than Jaccard to one changed value in a short statement."""
    if not left and not right:
        return 1.0
    return 2 * len(left & right) / (len(left) + len(right))
