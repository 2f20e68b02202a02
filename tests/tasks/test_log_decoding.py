"""The log reader's JSON shortcut (`tasks.logschema._loads`): orjson's decoding, guarded, gives what
`json.loads` gives (the same value, of the same types, with keys in the same order) or raises what it raises,
for every line a log can hold: JSON that a writer produced, numbers spelled any way JSON allows, integers past
64 bits, NaN and infinities, lone surrogates, and damaged lines."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from tasks.logschema import _loads

# Integers on both sides of orjson's range (-2**63 .. 2**64 - 1) and of the guard's digit counts.
EDGES = [2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63), -(2**63) - 1, 10**19 - 1, 10**19, -(10**18), -(10**19)]
INTEGERS = st.integers() | st.integers(min_value=-(2**70), max_value=2**70) | st.sampled_from(EDGES)
# Every code point, lone surrogates included (json writes them as \\ud800 escapes, or raw with surrogatepass).
TEXT = st.text(st.characters(exclude_categories=()), max_size=8)
SCALARS = st.none() | st.booleans() | INTEGERS | st.floats() | TEXT
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


@st.composite
def number_literals(draw: st.DrawFn) -> bytes:
    """A JSON number spelled any way the grammar allows (long mantissas, leading zeros in the exponent), or
    one of its near misses."""
    digits = st.text("0123456789", min_size=1, max_size=30)
    whole = draw(digits).lstrip("0") or "0"
    fraction = draw(st.none() | digits)
    signs = st.sampled_from(["", "+", "-"])
    exponent = draw(st.none() | st.tuples(st.sampled_from(["e", "E"]), signs, digits))
    spelled = draw(st.sampled_from(["", "-"])) + whole
    spelled += f".{fraction}" if fraction is not None else ""
    spelled += "".join(exponent) if exponent is not None else ""
    return spelled.encode()


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    """A line as a writer (json or orjson-like compact) would write it, or a number in a container."""
    if draw(st.booleans()):
        separators = draw(st.sampled_from([(",", ":"), (", ", ": "), (",", ": ")]))
        text = json.dumps(draw(VALUES), ensure_ascii=draw(st.booleans()), separators=separators)
        return text.encode("utf-8", "surrogatepass")
    template = draw(st.sampled_from([b"%s", b"[%s]", b'{"seq":%s}', b"[1, %s ,-2]", b"  %s\n"]))
    return template % draw(number_literals())


# Bytes that damage a line in the ways that matter: NUL (json may take the line for UTF-16), a BOM, UTF-8 of
# a surrogate, invalid UTF-8, number and string characters, structure, whitespace JSON does not allow.
DAMAGE = st.sampled_from([b"\x00", b"\xef\xbb\xbf", b"\xed\xa0\x80", b"\xff", b"-", b"0", b"9", b"e",
                          b".", b'"', b"\\", b"\\u", b",", b"}", b"]", b" ", b"\t", b"\x0c", b"NaN",
                          b"1e400"])  # fmt: skip


@st.composite
def damaged_lines(draw: st.DrawFn) -> bytes:
    """A line with a few bytes inserted, removed or doubled."""
    line = draw(lines())
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(line)))
        end = draw(st.integers(at, min(len(line), at + 4)))
        edit = draw(st.sampled_from(["insert", "remove", "double"]))
        if edit == "insert":
            line = line[:at] + draw(DAMAGE) + line[at:]
        elif edit == "remove":
            line = line[:at] + line[end:]
        else:
            line = line[:end] + line[at:end] + line[end:]
    return line


def _outcome(decode: Any, line: bytes) -> tuple[Any, ...]:
    """What decoding `line` gives: the value's repr (types, float spelling and key order included), or the
    error's type and message."""
    try:
        return ("value", repr(decode(line)))
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        return ("error", type(error), str(error))


@settings(max_examples=600, deadline=None)
@given(lines() | damaged_lines())
@example(b"18446744073709551616")  # past orjson's range: it would give a float
@example(b"[-9223372036854775809]")
@example(b'{"seq":0,"wall_seconds":0.00012345678901234567}')  # 20 digits in a float: tested, not json's
@example(b"\xef\xbb\xbf{}")  # json takes the BOM, orjson does not
@example(b"[1e400, NaN]")
@example(b'"\\ud800"')
def test_loads_decodes_as_json_does(line: bytes) -> None:
    assert _outcome(_loads, line) == _outcome(json.loads, line)
