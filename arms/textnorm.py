"""Tokenising shared by the rule-based arms (seed 002's BM25 tokenizer): the engine's ranking tokeniser
(`amnesia.text.tokenize`: Latin words with a conservative suffix stemmer, CJK as unigrams plus adjacent
bigrams), plus the stopwords and set similarities of the similarity rules."""

from __future__ import annotations

from amnesia.text import stem, tokenize

# Words too common to say anything about a memory's subject; used only by `content_terms` (similarity rules),
# never by BM25, whose IDF already discounts them.
_ENGLISH_STOPWORDS = (
    "a an the is are was were be been am i you we they he she it its it's this that these those to of in on "
    "at for with by from as and or but not no now our my your their his her me us them do does did will "
    "would can should please remember update note so just also what which who when where how there here"
)
__all__ = ["STOPWORDS", "content_terms", "dice", "jaccard", "stem", "tokenize"]

STOPWORDS = frozenset(_ENGLISH_STOPWORDS.split()) | frozenset("的了是在我你他她它们这那和与也就都还吗呢吧啊")


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
