"""`expiry_from_text`: the reader of the ends a memory's text states (amnesia.deadlines) and the engine path
that makes such an end the memory's hard deadline."""

from __future__ import annotations

import itertools
from datetime import date, datetime, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, SimulatedClock
from amnesia.deadlines import calendar_day, read_deadline
from amnesia.errors import InvalidInput

# Wednesday 2 December 2026, 10:00 UTC.
WEDNESDAY = datetime(2026, 12, 2, 10, 0, tzinfo=timezone.utc).timestamp()
FRIDAY = datetime(2026, 12, 4, 10, 0, tzinfo=timezone.utc).timestamp()
DAY = 86_400.0


def _midnight_after(day: date) -> float:
    """The clock time (UTC) of the midnight after `day`."""
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc).timestamp() + DAY


@pytest.mark.parametrize(
    ("text", "last_day"),
    [
        ("Merges are blocked until Friday for the audit.", date(2026, 12, 4)),
        ("The freeze lasts till Fri.", date(2026, 12, 4)),
        ("Frozen until Wednesday.", date(2026, 12, 9)),  # written on a Wednesday: the next one
        ("until this Friday", date(2026, 12, 4)),
        ("until this Wednesday", date(2026, 12, 2)),
        ("until next Monday", date(2026, 12, 7)),  # the Monday of the following week
        ("until next Friday", date(2026, 12, 11)),
        ("through tomorrow", date(2026, 12, 3)),
        ("The office is closed until tonight.", date(2026, 12, 2)),
        ("until the end of the week", date(2026, 12, 6)),
        ("until the weekend", date(2026, 12, 6)),
        ("until the end of next week", date(2026, 12, 13)),
        ("until the end of the month", date(2026, 12, 31)),
        ("until next month", date(2027, 1, 31)),
        ("until the end of the year", date(2026, 12, 31)),
        ("till 3 June", date(2027, 6, 3)),  # no year: the next 3 June
        ("till the 3rd of June 2027", date(2027, 6, 3)),
        ("until December 10th", date(2026, 12, 10)),
        ("until Dec. 2", date(2026, 12, 2)),  # the write day itself
        ("until 2026-12-04", date(2026, 12, 4)),
        ("until March", date(2027, 3, 31)),
        ("until 2027", date(2027, 12, 31)),
        ("for the next 3 days", date(2026, 12, 5)),
        ("for the next two weeks", date(2026, 12, 16)),
        ("for the next month", date(2027, 1, 2)),
        ("for the rest of the week", date(2026, 12, 6)),
        ("for the rest of today", date(2026, 12, 2)),
        ("审计期间主干禁止合并，直到周三。", date(2026, 12, 9)),
        ("到周五为止暂停发布", date(2026, 12, 4)),
        ("截至6月3日有效", date(2027, 6, 3)),
        ("截至2026年12月10日", date(2026, 12, 10)),
        ("至十二月四号", date(2026, 12, 4)),
        ("本周内完成", date(2026, 12, 6)),
        ("这个月内有效", date(2026, 12, 31)),
        ("一直到下周一", date(2026, 12, 7)),
        ("持续到月底", date(2026, 12, 31)),
        ("直到明天", date(2026, 12, 3)),
        ("未来三天暂停部署", date(2026, 12, 5)),
        ("两周内回复", date(2026, 12, 16)),
        ("冻结到本周末为止", date(2026, 12, 6)),
    ],
)
def test_reads_the_last_day_a_text_names(text: str, last_day: date) -> None:
    found = read_deadline(text, WEDNESDAY)
    assert found is not None, text
    assert found.end == _midnight_after(last_day)
    assert found.phrase in text


def test_hours_end_at_the_hour_not_the_day() -> None:
    found = read_deadline("Deploys are paused for the next 2 hours.", WEDNESDAY)
    assert found is not None and found.end == WEDNESDAY + 2 * 3600


def test_a_weekday_written_on_that_weekday_means_the_next_one() -> None:
    found = read_deadline("The staging database is frozen until Friday.", FRIDAY)
    assert found is not None and found.end == _midnight_after(date(2026, 12, 11))
    found = read_deadline("暂停发布，直到周五。", FRIDAY)
    assert found is not None and found.end == _midnight_after(date(2026, 12, 11))


@pytest.mark.parametrize(
    "text",
    [
        "The freeze holds until further notice.",
        "Wait until then.",
        "Keep it until I say so.",
        "until 5pm",  # time of day: not read
        "until 12/04",  # 4 December or 12 April
        "Submit the report by Friday.",
        "Finish it before Friday.",
        "We were in Paris until Friday.",  # past tense: what happened
        "The shop had stayed open until 3 June.",
        "Open Monday through Friday.",  # a range, a schedule
        "Office hours: June 3 until June 9.",
        "until this Monday",  # the write week's Monday has passed
        "until 2026-11-04",  # past date
        "until 1999",
        "until 30 February",
        "He read through the Friday paper.",
        "from 9 until 5",
        "周五前提交",
        "直到周五才完成。",  # 直到…才: when something happened
        "从周一至周五营业",
        "周一到周五为止",
        "截至今天共有三人报名",  # as of today
        "甚至周五也加班",
        "我到北京了",
        "这三天我们去了杭州",
        "The answer is 3 days.",
        "",
    ],
)
def test_leaves_alone_what_states_no_end(text: str) -> None:
    assert read_deadline(text, WEDNESDAY) is None


def test_of_several_ends_the_latest_counts() -> None:
    found = read_deadline(
        "Merges are blocked until Friday; the freeze lasts until the end of the month.", WEDNESDAY
    )
    assert found is not None and found.end == _midnight_after(date(2026, 12, 31))


def test_the_calendar_is_unix_time_read_at_an_offset() -> None:
    assert calendar_day(0.0) == date(1970, 1, 1)  # a SimulatedClock at 0: Thursday 1 January 1970
    assert calendar_day(0.0).weekday() == 3
    late_thursday = datetime(2026, 12, 3, 20, 0, tzinfo=timezone.utc).timestamp()
    assert calendar_day(late_thursday, 8.0) == date(2026, 12, 4)  # already Friday at UTC+8
    found = read_deadline("until Friday", late_thursday, 8.0)  # so "Friday" is the next one, local midnight
    local_midnight = datetime(2026, 12, 12, tzinfo=timezone.utc).timestamp() - 8 * 3600
    assert found is not None and found.end == local_midnight
    assert read_deadline("until Friday", late_thursday) is not None  # UTC: still Thursday, Friday is tomorrow
    assert read_deadline("until Friday", late_thursday).end == _midnight_after(date(2026, 12, 4))


# ------------------------------------------------------------------ the engine path
def _engine(clock: SimulatedClock, **options: object) -> Amnesia:
    numbers = itertools.count(1)  # ids from a counter: two engines given the same writes store equal items
    return Amnesia(config=Config(**options), clock=clock, id_factory=lambda: f"m-{next(numbers)}")


def test_off_by_default_the_text_changes_nothing() -> None:
    engine = _engine(SimulatedClock(WEDNESDAY))
    view = engine.remember("Merges are blocked until Friday.", ttl="30d")
    assert engine.inspect(view.id).hard_expires_at is None


def test_a_stated_end_is_forgotten_through_the_audited_path() -> None:
    clock = SimulatedClock(WEDNESDAY)
    engine = _engine(clock, expiry_from_text=True)
    lapsed = engine.remember("Merges to main are blocked until Friday for the audit.", ttl="30d")
    other = engine.remember("The CI provider is drone.", ttl="30d")
    end = _midnight_after(date(2026, 12, 4))
    assert engine.inspect(lapsed.id).hard_expires_at == end
    assert engine.inspect(other.id).hard_expires_at is None
    why = {d.id: d.why for d in engine.preview().decisions}
    assert 'expires 2026-12-05T00:00Z: its text says "until Friday" (expiry_from_text)' in why[lapsed.id]
    assert "expiry_from_text" not in why[other.id]
    clock.set(end - 1)
    assert lapsed.id in {ref["id"] for ref in engine.select_for_injection().items}
    clock.set(end)
    assert [ref["id"] for ref in engine.select_for_injection().items] == [other.id]
    assert engine.inspect(lapsed.id) is None
    entry = engine.audit(limit=1)[0]
    assert (entry.item_id, entry.reason) == (lapsed.id, "expired")
    assert engine.verify("Merges to main are blocked until Friday for the audit.")


def test_the_ttl_and_a_given_deadline_win_when_they_come_first() -> None:
    clock = SimulatedClock(WEDNESDAY)
    engine = _engine(clock, expiry_from_text=True)
    short = engine.remember("Frozen until the end of the month.", ttl="1d")  # the ttl ends first
    given_first = engine.remember("Frozen until the end of the month.", ttl="30d", expires_at=WEDNESDAY + 60)
    pinned = engine.remember("Frozen until Friday.", pin=True)
    assert engine.inspect(short.id).hard_expires_at is None
    assert engine.inspect(given_first.id).hard_expires_at == WEDNESDAY + 60
    assert engine.inspect(pinned.id).hard_expires_at is None


def test_the_calendar_offset_is_checked() -> None:
    assert Config(calendar_utc_offset="5.5").calendar_utc_offset == 5.5
    with pytest.raises(InvalidInput, match=r"calendar_utc_offset: must be in \[-12, 14\] hours"):
        Config(calendar_utc_offset=15)


_FRAGMENTS = [
    "Merges are blocked",
    "until Friday",
    "till 3 June",
    "for the next 3 days",
    "until further notice",
    "the deploy",
    "through tomorrow",
    "直到周三",
    "本周内",
    "审计期间",
    "until the end of the month",
    "from Monday",
    "was",
    "until 2027",  # (a bare year, repeated, reads as a card number and is refused: words keep them apart)
    ".",
    ",",
]


@settings(max_examples=60, deadline=None)
@given(
    words=st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=8),
    start=st.floats(min_value=0, max_value=3e9, allow_nan=False),
    ttl=st.floats(min_value=60, max_value=400 * 86_400),
    deadline=st.none() | st.floats(min_value=1, max_value=90 * 86_400),
)
def test_a_text_end_only_ever_brings_the_expiry_forward(
    words: list[str], start: float, ttl: float, deadline: float | None
) -> None:
    """With expiry_from_text the hard deadline is never later than the ttl's expiry or the caller's deadline,
    the forget time never later than without the option, and a text the reader finds no end in is stored
    exactly as without the option."""
    text = " ".join(words)
    given_deadline = None if deadline is None else start + deadline
    views = {}
    for on in (False, True):
        engine = _engine(SimulatedClock(start), expiry_from_text=on)
        written = engine.remember(text, ttl=ttl, expires_at=given_deadline)
        views[on] = engine.inspect(written.id)
    off, on = views[False], views[True]
    assert on.expires_at <= off.expires_at
    if on.hard_expires_at != given_deadline:
        assert on.hard_expires_at < start + ttl
        assert given_deadline is None or on.hard_expires_at < given_deadline
    if read_deadline(text, start) is None:
        assert vars(on) == vars(off)
