"""Other ways of writing a value: where a text says the value without spelling it as the task does.

People and models write "5,000" or "5k" for `5000`, "2GB" or "两个G" for `2 GB`, "30 min" or "half an
hour" for `30 minutes`, "$1.50" for `1.5`, "9:15" for `09:15`, "14 June" for `June 14`, "翠竹" for
`翠竹会议室` and "星期六" for `周六`. `form_spans` and `literal_forms` find those forms; the scorer adds them
to the value's literal matches (`tasks.scoring.find_mentions`).

- Quantities: a number (digits with or without thousands separators, a `k` suffix, English number words,
  Chinese numerals) and an optional unit. The value's number must be equal; when both sides name a unit, the
  units must measure the same thing and give the same amount ("half an hour" = "30 minutes"; "2 TB" is not
  "2 GB"). A side without a unit matches any unit ("5000 rows" for `5000`).
- Clock times: the hour with or without its leading zero, ":" or "." before the minutes.
- Dates: month name (or its three-letter abbreviation) and day, in either order, day with or without "th".
- Chinese short forms: a value ending in a generic noun (会议室, 厅, 项目...) is also found by the rest of it,
  when that rest has two or more characters and is in no other candidate value; 周/星期/礼拜 are one prefix.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from functools import lru_cache

# unit word (lower case) -> (dimension, factor to the dimension's base unit)
_UNITS: dict[str, tuple[str, Decimal]] = {}


def _units(dimension: str, factor: str, *names: str) -> None:
    for name in names:
        _UNITS[name] = (dimension, Decimal(factor))


_units("time", "0.001", "ms", "msec", "millisecond", "milliseconds", "毫秒")
_units("time", "1", "s", "sec", "secs", "second", "seconds", "秒", "秒钟")
_units("time", "60", "min", "mins", "minute", "minutes", "分钟")
_units("time", "3600", "h", "hr", "hrs", "hour", "hours", "小时", "个小时")
_units("time", "86400", "day", "days", "天")
_units("time", "604800", "week", "weeks", "周", "星期")
_units("bytes", "1", "b", "byte", "bytes")
# "2G" is said for 2 GB (in Chinese above all); "m" and "t" alone are left out ("30m" is often minutes).
_units("bytes", "1e3", "kb", "kilobyte", "kilobytes")
_units("bytes", "1e6", "mb", "megabyte", "megabytes", "兆")
_units("bytes", "1e9", "gb", "g", "gigabyte", "gigabytes")
_units("bytes", "1e12", "tb", "terabyte", "terabytes")
_units("percent", "1", "%", "percent", "pct", "个百分点")
_units("money", "1", "$", "usd", "dollar", "dollars", "€", "eur", "euro", "euros", "£", "gbp", "¥")
_units("money", "1", "元", "块", "rmb", "yuan", "cny")

_ONES = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen"
)
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety"
_ENGLISH_NUMBERS = {word: index for index, word in enumerate(_ONES.split())} | {
    word: 10 * (index + 2) for index, word in enumerate(_TENS.split())
}
_ENGLISH_SCALES = {"hundred": 100, "thousand": 1000, "million": 1_000_000}
_CJK_DIGITS = {char: index for index, char in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
_CJK_SCALES = {"十": 10, "百": 100, "千": 1000, "万": 10_000, "亿": 100_000_000}

_ENGLISH_WORD = "|".join(sorted([*_ENGLISH_NUMBERS, *_ENGLISH_SCALES], key=len, reverse=True))
_UNIT_WORD = "|".join(re.escape(name) for name in sorted(_UNITS, key=len, reverse=True))
# A number as people write it. Digits: not glued to a word or another number on the left ("v3", "PAY-4412"
# stays whole because "-" before digits is refused), not followed by more digits or a ".digit" (so "3.12.1" is
# a version, not 3.12). A currency sign may lead; a unit may follow, after a space, or "个" in Chinese.
_QUANTITY = re.compile(
    r"(?<![0-9A-Za-z_.,:-])(?P<lead>[$€£¥]\s?)?"
    r"(?:(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d{1,3}(?:[ \u202f]\d{3})+|\d+(?:\.\d+)?)(?![.,]?\d)"
    rf"(?P<k>\s?[kK](?![A-Za-z]))?(?P<cjkscale>[千万])?"
    rf"|(?P<words>\b(?:{_ENGLISH_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_ENGLISH_WORD}))*\b)"
    r"|(?P<half>\bhalf\s+an?\b)"
    r"|(?P<cjk>[零〇一二两三四五六七八九十百千万亿]+))"
    rf"(?:\s?个?\s?(?P<unit>(?:{_UNIT_WORD})(?![A-Za-z])))?",
    re.IGNORECASE,
)
_TIME_VALUE = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*$")  # "3.12" is a version, not a time
_MONTHS = "january february march april may june july august september october november december".split()  # noqa: SIM905
_MONTH_WORD = "|".join(rf"{name[:3]}(?:{name[3:]})?\.?" if len(name) > 3 else name for name in _MONTHS)
_DATE_VALUE = re.compile(
    rf"^\s*(?:({_MONTH_WORD})\s+(\d{{1,2}})|(\d{{1,2}})\s+({_MONTH_WORD}))\s*$", re.IGNORECASE
)
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"
_DATE = re.compile(
    rf"\b(?:({_MONTH_WORD})\s+{_DAY}(?!\d)|{_DAY}\s+(?:of\s+)?({_MONTH_WORD}))(?![A-Za-z])", re.IGNORECASE
)
# Generic nouns a Chinese value may end with; the rest of it names the thing ("翠竹" for 翠竹会议室).
_CJK_GENERIC_SUFFIXES = tuple("会议室 会议厅 大厅 厅 室 区 楼 项目 团队 小组 系统 公司 机房".split())  # noqa: SIM905
_WEEKDAY = re.compile(r"(?:周|星期|礼拜)([一二三四五六日天])")


def _cjk_number(text: str) -> int | None:
    """The value of Chinese numerals ("四千二" = 4200, "两千" = 2000, "十五" = 15); None if not a number."""
    total = section = 0
    digit: int | None = None
    last_scale = 0
    for char in text:
        if char in _CJK_DIGITS:
            if digit is not None:
                return None  # two digits in a row ("一二") are no number
            digit = _CJK_DIGITS[char]
        else:
            scale = _CJK_SCALES[char]
            if scale >= 10_000:
                total = (total + section + (digit or 0)) * scale
                section = 0
            else:
                section += (1 if digit is None else digit) * scale
            digit, last_scale = None, scale
    if digit is not None:
        # "四千二", "一万二": a digit ending the numeral right after a scale is one step below it
        section += digit * (last_scale // 10 if last_scale >= 100 else 1)
    return total + section


def _english_number(text: str) -> int | None:
    total = current = 0
    for word in re.split(r"[\s-]+", text.lower()):
        if word == "and":
            continue
        if word in _ENGLISH_NUMBERS:
            current += _ENGLISH_NUMBERS[word]
        elif word == "hundred":
            current = max(current, 1) * 100
        else:
            total += max(current, 1) * _ENGLISH_SCALES[word]
            current = 0
    return total + current


def _number(match: re.Match[str]) -> Decimal | None:
    """The number a `_QUANTITY` match writes, or None when it writes none (a lone Chinese "一" in "一下")."""
    if match["digits"]:
        try:
            number = Decimal(re.sub(r"[, \u202f]", "", match["digits"]))
        except InvalidOperation:
            return None
        if match["k"]:
            number *= 1000
        if match["cjkscale"]:
            number *= _CJK_SCALES[match["cjkscale"]]
        return number
    if match["words"]:
        if match["words"].lower() == "one" and not match["unit"]:
            return None  # "one of the two" is a pronoun, not the number 1
        return Decimal(_english_number(match["words"]))
    if match["half"]:
        return Decimal("0.5") if match["unit"] else None
    cjk = match["cjk"]
    # A Chinese numeral stands for a number when it holds a scale (十百千万) or comes with a unit; a lone
    # digit character is too often part of a word ("一下", "统一").
    if not (set(cjk) & set(_CJK_SCALES)) and not match["unit"]:
        return None
    value = _cjk_number(cjk)
    return None if value is None else Decimal(value)


def _unit(match: re.Match[str]) -> tuple[str, Decimal] | None:
    word = (match["unit"] or "").strip().lower() or (match["lead"] or "").strip()
    if match["k"] and not match["unit"]:
        return None  # "5k" is 5000 of whatever
    return _UNITS.get(word)


@lru_cache(maxsize=4096)
def _quantity(value: str) -> tuple[Decimal, tuple[str, Decimal] | None] | None:
    """(number, unit) when the whole value is a quantity ("5000", "2 GB", "1.5", "30 minutes"), else None."""
    match = _QUANTITY.fullmatch(value.strip())
    if match is None:
        return None
    number = _number(match)
    return None if number is None else (number, _unit(match))


def _same_quantity(
    number: Decimal, unit: tuple[str, Decimal] | None, wanted: tuple[Decimal, tuple[str, Decimal] | None]
) -> bool:
    wanted_number, wanted_unit = wanted
    if unit is None or wanted_unit is None:
        return number == wanted_number
    if unit[0] != wanted_unit[0]:
        return False
    return number * unit[1] == wanted_number * wanted_unit[1]


def _quantity_spans(text: str, value: str) -> list[tuple[int, int]]:
    wanted = _quantity(value)
    if wanted is None:
        return []
    spans = []
    for match in _QUANTITY.finditer(text):
        number = _number(match)
        if number is not None and _same_quantity(number, _unit(match), wanted):
            spans.append(match.span())
    return spans


def _time_spans(text: str, value: str) -> list[tuple[int, int]]:
    parsed = _TIME_VALUE.match(value)
    if parsed is None:
        return []
    hour, minute = int(parsed[1]), parsed[2]
    forms = [rf"0?{hour}[:.]{minute}(?!\d)(?!\s?[ap]\.?m\b)" if hour <= 12 else rf"{hour}[:.]{minute}(?!\d)"]
    if hour <= 12:
        forms.append(rf"0?{hour}[:.]{minute}\s?a\.?m\b\.?" if hour < 12 else rf"12[:.]{minute}\s?p\.?m\b\.?")
    else:
        forms.append(
            rf"0?{hour - 12}(?:[:.]{minute})?\s?p\.?m\b\.?"
            if minute == "00"
            else rf"0?{hour - 12}[:.]{minute}\s?p\.?m\b\.?"
        )
    if hour < 12 and minute == "00":
        forms.append(rf"0?{hour}\s?a\.?m\b\.?")
    pattern = re.compile(rf"(?<![\d:.])(?:{'|'.join(forms)})", re.IGNORECASE)
    return [match.span() for match in pattern.finditer(text)]


def _month(word: str) -> int:
    return next(index for index, name in enumerate(_MONTHS) if name.startswith(word.lower().rstrip(".")[:3]))


def _date_spans(text: str, value: str) -> list[tuple[int, int]]:
    parsed = _DATE_VALUE.match(value)
    if parsed is None:
        return []
    wanted = (_month(parsed[1] or parsed[4]), int(parsed[2] or parsed[3]))
    spans = []
    for match in _DATE.finditer(text):
        month, day = (match[1], match[2]) if match[1] else (match[4], match[3])
        if (_month(month), int(day)) == wanted:
            spans.append(match.span())
    return spans


@lru_cache(maxsize=4096)
def literal_forms(value: str, others: tuple[str, ...]) -> tuple[str, ...]:
    """Other spellings of a Chinese value, found like the value itself: its short form without a generic
    suffix ("翠竹" for 翠竹会议室) when no other candidate in `others` contains it, and its weekday written
    with the other prefixes (星期六 and 礼拜六 for 周六)."""
    forms: list[str] = []
    stripped = value.strip()
    for suffix in _CJK_GENERIC_SUFFIXES:
        core = stripped[: -len(suffix)]
        if stripped.endswith(suffix) and len(core) >= 2 and re.search(r"[\u4e00-\u9fff]", core):
            if not any(core in other for other in others if other != value):
                forms.append(core)
            break
    for form in [stripped, *forms]:
        for prefix in ("周", "星期", "礼拜"):
            variant = _WEEKDAY.sub(lambda match, prefix=prefix: prefix + match[1], form)
            if variant != form and variant not in forms:
                forms.append(variant)
    return tuple(form for form in forms if form != stripped)


def form_spans(text: str, value: str) -> list[tuple[int, int]]:
    """Where `text` writes the value as a quantity, clock time or date in another way (module docstring);
    spans may repeat the value's literal matches."""
    return _quantity_spans(text, value) + _time_spans(text, value) + _date_spans(text, value)


@lru_cache(maxsize=4096)
def has_forms(value: str) -> bool:
    """Whether the value can be written in other ways `form_spans` finds (a quantity, a time or a date)."""
    return _quantity(value) is not None or bool(_TIME_VALUE.match(value)) or bool(_DATE_VALUE.match(value))
