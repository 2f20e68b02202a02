"""Text deadlines (`expiry_from_text`): the end a memory's own text states — "until Friday", "through 3 June",
"for the next 3 days", "直到周三", "到周五为止", "本周内" — read as a time on the engine's clock.

The calendar. Clock seconds are Unix seconds (what `SystemClock` gives; a `SimulatedClock` at 0.0 is
1970-01-01 00:00 UTC, a Thursday), read `utc_offset` hours east of UTC (`Config.calendar_utc_offset`, default
0). Nothing here reads the wall clock: the same text written at the same clock time always gives the same end.

The grammar (English case-insensitive; Chinese as written). An end is found in three shapes:

- a *marker* followed by a *time point*. English markers: until, till, til, 'til, up until, up till,
  through, thru. Chinese: 直到, 一直到, 持续到, 延续到, 截至, 截止(到), 至 — or 到 … 为止.
- a *span from now*: "for the next|coming [N] hours|days|weeks|months" (N a number or one … twelve, "a",
  "an"; none: one), "for the rest of today|the day|the week|this week|the month|this month|the year";
  未来/接下来/今后 N 小时|天|周|星期|个月(内); N 小时|天|周|星期|个月 内 or 之内.
- a *within-period* phrase: 本周内, 这周内, 本月内, 这个月内, 今天内, 今天之内, 当天内, 本年内, 今年内.

Time points: today, tonight, end of (the) day, EOD, COB; tomorrow; a weekday (Mon … Sun, full or 3-4
letters), "this <weekday>", "next <weekday>"; (the) weekend, this/next weekend; (the) end of (the|this|next)
week|month|year, EOW, EOM; next week|month|year; a date — "3 June", "3rd of June", "June 3", "June 3rd",
each with an optional year, "2026-12-04", a year alone ("2027"); Chinese 今天, 今日, 今晚, 当天, 明天, 明日,
明晚, 后天, 周X / 星期X / 礼拜X (X 一 … 六, 日, 天) with optional 本/这/下, 周末 with 本/这/下, 月底, 本月底,
下个月底, 年底, 今年底, 明年底, 下周, 下个月, M月D日|号 with an optional YYYY年 (Arabic or Chinese numerals).

What a point means, by one rule: the end is the *latest* time the text can mean, so a memory is never
forgotten while its text may still hold.

- A day named ("until Friday", "through 3 June") ends at the midnight after it: "until Friday" is read
  inclusively ("through Friday"), not as "up to the start of Friday".
- A bare weekday is the next such day after the write day: "until Friday" written on a Friday means the
  Friday a week later (a writer who meant today would say "today"). "this Friday" is the Friday of the
  write's week (Monday to Sunday); if that day is past, there is no end. "next Friday" and 下周五 are the
  Friday of the following week.
- A date without a year is its next occurrence on or after the write day; a stated date or year that has
  already passed gives no end (the text may be telling what happened).
- A week runs Monday to Sunday: "the end of the week", "the weekend" and 周末 end at the midnight after
  Sunday. "next week|month|year" ends with that period.
- "for the next N hours" ends N hours after the write; N days, weeks or months end at the midnight after
  the day they reach.
- Several ends in one text: the latest counts (the memory holds as long as any part of it does).

Left alone (no end): a marker with no point after it ("until further notice", "until then", "until I say
so"); time-of-day points ("until 5pm": the reader works in days); numeric dates other than ISO ("12/04" is
4 December or 12 April); "by", "before", 之前 and 前 (a deadline for doing something, not the end of what the
text says); English clauses in the past tense — was, were, had or did earlier in the same clause ("we were
in Paris until Friday"); 直到 … 才 ("not until … did": when something happened); "截至今天/今日/目前/现在"
(as of now).
"""

from __future__ import annotations

import calendar
import math
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from amnesia.item import MemoryItem

EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
DAY = 86_400.0
HOUR = 3_600.0

WEEKDAYS_EN: dict[str, int] = {
    "monday": 0,
    "mon": 0,
    "tuesday": 1,
    "tue": 1,
    "tues": 1,
    "wednesday": 2,
    "wed": 2,
    "thursday": 3,
    "thu": 3,
    "thur": 3,
    "thurs": 3,
    "friday": 4,
    "fri": 4,
    "saturday": 5,
    "sunday": 6,
}
MONTHS_EN: dict[str, int] = {
    **{name.lower(): number for number, name in enumerate(calendar.month_name) if name},
    **{name.lower(): number for number, name in enumerate(calendar.month_abbr) if name},
    "sept": 9,
}
NUMBERS_EN: dict[str, int] = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
}
WEEKDAYS_ZH: dict[str, int] = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
DIGITS_ZH: dict[str, int] = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
# Units of a span: English words and Chinese characters -> "hour" | "day" | "week" | "month".
UNITS: dict[str, str] = {
    "hour": "hour",
    "hours": "hour",
    "day": "day",
    "days": "day",
    "week": "week",
    "weeks": "week",
    "month": "month",
    "months": "month",
    "小时": "hour",
    "个小时": "hour",
    "天": "day",
    "日": "day",
    "周": "week",
    "星期": "week",
    "个星期": "week",
    "个月": "month",
}


@dataclass(frozen=True)
class TextDeadline:
    """An end stated by a text: when (clock seconds) and the phrase that stated it."""

    end: float  # clock seconds (Unix); the memory is forgotten from this moment
    phrase: str  # the words that stated it, as written ("until Friday", "直到周三")


@dataclass(frozen=True)
class _Today:
    """The write's calendar day and moment, in the reading calendar."""

    day: date
    now: float  # the write's clock time
    offset: float  # hours east of UTC

    def end_of(self, day: date) -> float:
        """The clock time of the midnight after `day` (local)."""
        return (day.toordinal() + 1 - EPOCH_ORDINAL) * DAY - self.offset * HOUR

    @property
    def monday(self) -> date:
        return self.day - timedelta(days=self.day.weekday())


def calendar_day(when: float, utc_offset: float = 0.0) -> date:
    """The calendar date of clock time `when` (Unix seconds) read `utc_offset` hours east of UTC."""
    return date.fromordinal(EPOCH_ORDINAL + math.floor((when + utc_offset * HOUR) / DAY))


# ---------------------------------------------------------------------------------------------- helpers
def _add_months(day: date, months: int) -> date:
    index = day.month - 1 + months
    year, month = day.year + index // 12, index % 12 + 1
    return date(year, month, min(day.day, calendar.monthrange(year, month)[1]))


def _end_of_month(day: date) -> date:
    return date(day.year, day.month, calendar.monthrange(day.year, day.month)[1])


def _next_occurrence(today: date, month: int, day: int) -> date | None:
    """The date month/day on or after `today` (None: no such date, e.g. 30 February, in the next 8 years)."""
    for year in range(today.year, today.year + 9):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if candidate >= today:
            return candidate
    return None


def _dated(today: date, year: int | None, month: int, day: int) -> date | None:
    if year is None:
        return _next_occurrence(today, month, day)
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _zh_number(text: str) -> int | None:
    """An Arabic or Chinese numeral up to 99 (十, 十二, 二十, 二十三, 两); None if it is neither."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        high = DIGITS_ZH.get(tens, -1) if tens else 1
        low = DIGITS_ZH.get(ones, -1) if ones else 0
        return None if high < 0 or low < 0 else high * 10 + low
    if len(text) == 1 and text in DIGITS_ZH:
        return DIGITS_ZH[text]
    return None


def _span_end(today: _Today, count: int, unit: str) -> float | None:
    if count <= 0 or count > 1200:
        return None
    if unit == "hour":
        return today.now + count * HOUR
    if unit == "day":
        return today.end_of(today.day + timedelta(days=count))
    if unit == "week":
        return today.end_of(today.day + timedelta(days=7 * count))
    return today.end_of(_add_months(today.day, count))


# ---------------------------------------------------------------------------------------------- English
_WEEKDAY_EN = "|".join(sorted(WEEKDAYS_EN, key=len, reverse=True))
_MONTH_EN = "|".join(sorted(MONTHS_EN, key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s+(?P<{}>(?:19|20)\d\d))?"
_MONTH_NAME_EN = "|".join(name.lower() for name in calendar.month_name if name)
_POINT_EN = (
    r"(?P<today>today|tonight|(?:the\s+)?end\s+of\s+(?:the\s+|to)?day|eod|cob|close\s+of\s+business)"
    r"|(?P<tomorrow>tomorrow)"
    rf"|(?:(?P<wkmod>this|next)\s+)?(?P<weekday>{_WEEKDAY_EN})\b\.?"
    r"|(?P<weekend>(?:(?P<endmod>the|this|next)\s+)?weekend)"
    r"|(?:the\s+)?end\s+of\s+(?:(?P<endwhich>the|this|next)\s+)?(?P<endunit>week|month|year)"
    r"|(?P<eow>eow|eom)"
    r"|next\s+(?P<nextunit>week|month|year)"
    r"|(?P<iso>(?P<isoy>\d{4})-(?P<isom>\d{1,2})-(?P<isod>\d{1,2}))"
    rf"|(?P<dm>(?:the\s+)?(?P<dmd>\d{{1,2}}){_ORDINAL}\s+(?:of\s+)?(?P<dmm>{_MONTH_EN})\b\.?{_YEAR.format('dmy')})"
    rf"|(?P<md>(?P<mdm>{_MONTH_EN})\b\.?\s+(?P<mdd>\d{{1,2}}){_ORDINAL}\b{_YEAR.format('mdy')})"
    rf"|(?P<month>{_MONTH_NAME_EN})\b(?!\s*\d)"
    r"|(?P<year>(?:19|20)\d\d)"
)
_MARKER_EN = re.compile(
    rf"(?:\b(?:up\s+)?(?:until|till|til|through|thru)|'til)\s+(?:{_POINT_EN})(?![\w/-])", re.IGNORECASE
)
_SPAN_EN = re.compile(
    r"\bfor\s+the\s+(?:next|coming)\s+(?:(?P<count>\d{1,4}|"
    + "|".join(NUMBERS_EN)
    + r")\s+)?(?P<unit>hours?|days?|weeks?|months?)\b",
    re.IGNORECASE,
)
_REST_EN = re.compile(
    r"\bfor\s+the\s+rest\s+of\s+(?:(?P<today>today|the\s+day)|(?:the\s+|this\s+)(?P<unit>week|month|year))\b",
    re.IGNORECASE,
)
_PAST_EN = re.compile(r"\b(?:was|were|had|did)\b", re.IGNORECASE)
# A range's first end right before the marker: "Monday through Friday", "9 to 5", "June 3 until June 9".
_RANGE_START_EN = re.compile(rf"(?:\b(?:{_WEEKDAY_EN}|{_MONTH_EN})\.?|\d)\W*$|\bfrom\b.*$", re.IGNORECASE)
_RANGE_START_ZH = re.compile(r"从|(?:周|星期|礼拜)[一二三四五六日天]\s*$|[日号月]\s*$")
_CLAUSE_END = re.compile(r"[.;!?。；！？\n]")


def _clause_before(text: str, start: int) -> str:
    """The text of the clause that `start` is in, up to `start`."""
    clause_start = max((m.end() for m in _CLAUSE_END.finditer(text, 0, start)), default=0)
    return text[clause_start:start]


def _named_day(group: dict[str, str | None], today: _Today) -> float | None:
    """A time point both languages share: today, tomorrow, the day after (Chinese only) or an ISO date."""
    for name, ahead in (("today", 0), ("tomorrow", 1), ("after", 2)):
        if group.get(name):
            return today.end_of(today.day + timedelta(days=ahead))
    if group["iso"]:
        return _day_end(today, _dated(today.day, int(group["isoy"]), int(group["isom"]), int(group["isod"])))
    return None


def _english_point(match: re.Match[str], today: _Today) -> float | None:
    group = match.groupdict()
    day = today.day
    named = _named_day(group, today)
    if named is not None:
        return named
    if group["weekday"]:
        return _weekday_end(today, WEEKDAYS_EN[group["weekday"].lower()], (group["wkmod"] or "").lower())
    if group["weekend"]:
        ahead = 7 if (group["endmod"] or "").lower() == "next" else 0
        return today.end_of(today.monday + timedelta(days=6 + ahead))
    if group["endunit"] or group["nextunit"] or group["eow"]:
        unit = group["endunit"] or group["nextunit"] or {"eow": "week", "eom": "month"}[group["eow"].lower()]
        ahead = 1 if group["nextunit"] or (group["endwhich"] or "").lower() == "next" else 0
        return _period_end(today, unit.lower(), ahead)
    if group["dm"] or group["md"]:
        prefix = "dm" if group["dm"] else "md"
        year = group[f"{prefix}y"]
        month = MONTHS_EN[group[f"{prefix}m"].lower()]
        return _day_end(today, _dated(day, int(year) if year else None, month, int(group[f"{prefix}d"])))
    if group["month"]:
        month = MONTHS_EN[group["month"].lower()]
        year = day.year if month >= day.month else day.year + 1
        return today.end_of(_end_of_month(date(year, month, 1)))
    if group["year"]:
        year = int(group["year"])
        return _day_end(today, date(year, 12, 31)) if year >= day.year else None
    return None


def _weekday_end(today: _Today, weekday: int, modifier: str) -> float | None:
    """this X: the write week's X (None if past); next X: the following week's X; X: the next X after
    today."""
    if modifier == "this":
        target = today.monday + timedelta(days=weekday)
        return today.end_of(target) if target >= today.day else None
    if modifier == "next":
        return today.end_of(today.monday + timedelta(days=7 + weekday))
    ahead = (weekday - today.day.weekday()) % 7 or 7
    return today.end_of(today.day + timedelta(days=ahead))


def _period_end(today: _Today, unit: str, ahead: int) -> float:
    """The end of the week|month|year `ahead` periods after the write's."""
    day = today.day
    if unit == "week":
        return today.end_of(today.monday + timedelta(days=6 + 7 * ahead))
    if unit == "month":
        return today.end_of(_end_of_month(_add_months(date(day.year, day.month, 1), ahead)))
    return today.end_of(date(day.year + ahead, 12, 31))


def _day_end(today: _Today, day: date | None) -> float | None:
    """The midnight after `day`, or None when there is no such day or it is before the write day."""
    return None if day is None or day < today.day else today.end_of(day)


def _english(text: str, today: _Today) -> list[TextDeadline]:
    found = []
    for match in _MARKER_EN.finditer(text):
        before = _clause_before(text, match.start())
        if _PAST_EN.search(before) or _RANGE_START_EN.search(before):
            continue
        end = _english_point(match, today)
        if end is not None:
            found.append(TextDeadline(end, match.group(0)))
    for match in _SPAN_EN.finditer(text):
        if _PAST_EN.search(_clause_before(text, match.start())):
            continue
        count = (match.group("count") or "1").lower()  # "for the next week": one
        number = NUMBERS_EN[count] if count in NUMBERS_EN else int(count)
        end = _span_end(today, number, UNITS[match.group("unit").lower()])
        if end is not None:
            found.append(TextDeadline(end, match.group(0)))
    for match in _REST_EN.finditer(text):
        if _PAST_EN.search(_clause_before(text, match.start())):
            continue
        unit = "day" if match.group("today") else match.group("unit").lower()
        end = today.end_of(today.day) if unit == "day" else _period_end(today, unit, 0)
        found.append(TextDeadline(end, match.group(0)))
    return found


# ---------------------------------------------------------------------------------------------- Chinese
_NUM_ZH = r"[0-9]{1,4}|[零〇一二两三四五六七八九十]{1,3}"
_POINT_ZH = (
    r"(?P<today>今天|今日|今晚|当天)"
    r"|(?P<tomorrow>明天|明日|明晚)"
    r"|(?P<after>后天)"
    r"|(?P<wkmod>本|这|下个?)?(?:周|星期|礼拜)(?P<weekday>[一二三四五六日天])"
    r"|(?P<weekend>(?P<wemod>本|这|下个?)?周末)"
    r"|(?P<monthend>(?:本|这个?|下个?)?月底|(?:今|明)?年底)"
    r"|(?P<nextunit>下个?(?:周|星期|礼拜)|下个?月)"
    rf"|(?:(?P<y>[0-9]{{4}})年)?(?P<m>{_NUM_ZH})月(?P<d>{_NUM_ZH})[日号]"
    r"|(?P<iso>(?P<isoy>\d{4})-(?P<isom>\d{1,2})-(?P<isod>\d{1,2}))"
)
_MARKER_ZH = re.compile(
    rf"(?P<marker>一直到|直到|持续到|延续到|截至|截止到|截止|(?<![甚以乃])至|到)\s*(?:{_POINT_ZH})(?P<tail>为止|才)?"
)
_SPAN_ZH = re.compile(
    rf"(?P<lead>未来|接下来的?|今后)?\s*(?P<count>{_NUM_ZH})\s*(?P<unit>个小时|小时|天|日|个星期|星期|周|个月)"
    r"(?P<within>之内|内)?"
)
_WITHIN_ZH = re.compile(
    r"(?P<period>本周|这周|这个星期|本星期|本月|这个月|今天|今日|当天|本年|今年)(?:之内|内)"
)
_AS_OF_NOW = ("今天", "今日")


def _chinese_point(match: re.Match[str], today: _Today) -> float | None:
    group = match.groupdict()
    named = _named_day(group, today)
    if named is not None:
        return named
    if group["weekday"]:
        modifier = {"本": "this", "这": "this", "下": "next", "下个": "next"}.get(group["wkmod"] or "", "")
        return _weekday_end(today, WEEKDAYS_ZH[group["weekday"]], modifier)
    if group["weekend"]:
        ahead = 7 if (group["wemod"] or "").startswith("下") else 0
        return today.end_of(today.monday + timedelta(days=6 + ahead))
    if group["monthend"]:
        words = group["monthend"]
        ahead = 1 if words.startswith(("下", "明")) else 0
        return _period_end(today, "year" if words.endswith("年底") else "month", ahead)
    if group["nextunit"]:
        return _period_end(today, "month" if group["nextunit"].endswith("月") else "week", 1)
    if group["m"]:
        month, number = _zh_number(group["m"]), _zh_number(group["d"])
        if month is None or number is None:
            return None
        return _day_end(today, _dated(today.day, int(group["y"]) if group["y"] else None, month, number))
    return None


def _chinese(text: str, today: _Today) -> list[TextDeadline]:
    found = []
    for match in _MARKER_ZH.finditer(text):
        marker, tail = match.group("marker"), match.group("tail")
        if tail == "才":  # 直到周五才…: when something happened, not how long something holds
            continue
        if marker == "到" and tail != "为止":  # 到 alone is "to / arrive at": only 到 … 为止 is an end
            continue
        if marker.startswith(("截至", "截止")) and (match.group("today") or "") in _AS_OF_NOW:
            continue  # 截至今天: "as of today"
        if _RANGE_START_ZH.search(_clause_before(text, match.start())):
            continue  # 从周一至周五, 周一到周五为止: a range (a schedule), not an end
        end = _chinese_point(match, today)
        if end is not None:
            found.append(TextDeadline(end, match.group(0)))
    for match in _SPAN_ZH.finditer(text):
        if not (match.group("lead") or match.group("within")):
            continue  # "3天" alone is an amount of time, not a span from now
        number = _zh_number(match.group("count"))
        if number is None:
            continue
        end = _span_end(today, number, UNITS[match.group("unit")])
        if end is not None:
            found.append(TextDeadline(end, match.group(0)))
    for match in _WITHIN_ZH.finditer(text):
        period = match.group("period")
        if period in ("今天", "今日", "当天"):
            end = today.end_of(today.day)
        else:
            unit = "week" if ("周" in period or "星期" in period) else "month" if "月" in period else "year"
            end = _period_end(today, unit, 0)
        found.append(TextDeadline(end, match.group(0)))
    return found


_CJK_CHARACTER = re.compile(r"[\u4e00-\u9fff]")


def read_deadline(text: str, written_at: float, utc_offset: float = 0.0) -> TextDeadline | None:
    """The end `text` states when written at clock time `written_at` (module docstring), or None. Only ends
    after `written_at` count; of several, the latest."""
    today = _Today(calendar_day(written_at, utc_offset), written_at, utc_offset)
    found = _english(text, today)
    if _CJK_CHARACTER.search(text):
        found += _chinese(text, today)
    found = [deadline for deadline in found if deadline.end > written_at]
    return max(found, key=lambda deadline: deadline.end, default=None)


def text_deadline(item: MemoryItem, utc_offset: float = 0.0) -> TextDeadline | None:
    """The end `item`'s text states, when it comes before the item's ttl expiry (created_at + ttl) and
    before any hard deadline it already has; None otherwise, and for pinned items (which take no deadline).
    `Amnesia.remember` sets `expires_at` to its end under `expiry_from_text`, so the expiry is min(the ttl's,
    the text's) and a text without an end changes nothing."""
    if item.pinned or item.ttl is None:
        return None
    found = read_deadline(item.content, item.created_at, utc_offset)
    if found is None:
        return None
    cap = item.created_at + item.ttl
    if item.expires_at is not None:
        cap = min(cap, item.expires_at)
    return found if found.end < cap else None


def deadline_note(item: MemoryItem, utc_offset: float = 0.0) -> str | None:
    """What `preview` says of an item whose hard deadline its text set: 'expires 2026-12-05T00:00Z: its
    text says "until Friday" (expiry_from_text)'; None when its deadline (if any) came from elsewhere."""
    if item.expires_at is None:
        return None
    found = read_deadline(item.content, item.created_at, utc_offset)
    if found is None or found.end != item.expires_at:
        return None
    when = datetime.fromtimestamp(found.end, tz=timezone.utc).strftime("%Y-%m-%dT%H:%MZ")
    return f'expires {when}: its text says "{found.phrase}" (expiry_from_text)'
