"""A documented, deterministic, CJK-aware token counter (no tokenizer download needed).

Rule: every CJK ideograph, kana or hangul syllable is one token; every other run of letters/digits is
ceil(len/4) tokens (about what BPE tokenizers give English); every other non-space character is one token.
It over-counts slightly for English prose compared with tiktoken, which keeps budgets conservative.
"""

from __future__ import annotations

import re
from itertools import repeat

_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
)
# One match per token: a letter/digit run of length n is matched as ceil(n/4) greedy pieces of at most 4, so
# counting is one C-level findall instead of a Python loop over the runs (count_tokens is a hot path).
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]{{1,4}}|[^\s\w]", re.UNICODE)
# ASCII text is counted without the regex (a third of the time: every write counts its content): each byte
# becomes its class — "a" a word character, " " whitespace, "." anything else — taken from the regex's own
# \w and \s, so the two paths cannot disagree on what a class holds. Bytes >= 128 never reach the table.
_ASCII_CLASSES = bytes(
    ord("a") if re.match(r"\w", chr(code)) else ord(" ") if re.match(r"\s", chr(code)) else ord(".")
    for code in range(256)
)


def count_tokens(text: str) -> int:
    """Tokens of `text` under the rule above."""
    if not text.isascii():
        # The memory block's separator " · " is often a prompt's only non-ASCII character; like ".", it is one
        # token that joins no run, so the text is counted as if it were a ".".
        dotted = text.replace("\u00b7", ".")
        if not dotted.isascii():
            return len(_TOKEN.findall(text))
        text = dotted
    # A word run of n classes "a" becomes n//4 "b" then n%4 "a": every "b" and "." is a token, and so is each
    # leftover run of one to three "a"s, whose extra letters ("aa" once in a run of two or three, "aaa" once
    # in a run of three) are taken off with the spaces.
    marks = text.encode().translate(_ASCII_CLASSES).replace(b"aaaa", b"b")  # ASCII: UTF-8 is the same bytes
    return len(marks) - marks.count(b" ") - marks.count(b"aa") - marks.count(b"aaa")


class _TokensByShape(dict[bytes, int]):
    """Token counts by shape (a text's ASCII character classes), counted on first sight: a lookup in C.
    Emptied when it holds SHAPES_KEPT shapes, so that ids of ever new shapes cannot grow it without bound."""

    def __missing__(self, shape: bytes) -> int:
        if len(self) >= SHAPES_KEPT:
            self.clear()
        # The classes text is counted like the text: "a" is a word character, " " a space, "." anything else.
        tokens = self[shape] = count_tokens(shape.decode("ascii"))
        return tokens


SHAPES_KEPT = 256
_TOKENS_BY_SHAPE = _TokensByShape()
_tokens_of_shape = _TOKENS_BY_SHAPE.__getitem__


def count_id_tokens(text: str) -> int:
    """count_tokens(text), cached by the text's shape (its ASCII character classes): ids come in a few shapes
    ("m-" and 12 hex digits), and every write counts one."""
    if text.isascii():
        return _tokens_of_shape(text.encode().translate(_ASCII_CLASSES))
    return count_tokens(text)


def count_id_tokens_many(texts: list[str]) -> list[int]:
    """`count_id_tokens` of each text, in C-level passes when all are ASCII (a bulk load counts thousands)."""
    if all(map(str.isascii, texts)):
        return list(
            map(_tokens_of_shape, map(bytes.translate, map(str.encode, texts), repeat(_ASCII_CLASSES)))
        )
    return list(map(count_id_tokens, texts))


def has_cjk(text: str) -> bool:
    return re.search(f"[{_CJK}]", text) is not None
