"""Other spellings of a value (`tasks.valueforms`): a number however it is written is the same number, a unit
must measure the same amount, and the forms never find a different number, time or date."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tasks.valueforms import form_spans, literal_forms


def _found(text: str, value: str) -> bool:
    return bool(form_spans(text, value))


@given(number=st.integers(min_value=1000, max_value=10**9))
def test_an_integer_with_thousands_separators_or_spaces_is_the_same_number(number: int) -> None:
    assert _found(f"It is {number:,}.", str(number))
    assert _found(f"It is {number:,}.".replace(",", " "), str(number))
    assert not _found(f"It is {number + 1:,}.", str(number))


@given(thousands=st.integers(min_value=1, max_value=999))
def test_a_k_suffix_and_chinese_thousands_are_thousands(thousands: int) -> None:
    assert _found(f"{thousands}k rows", str(thousands * 1000))
    assert _found(f"{thousands}千条", str(thousands * 1000))
    assert not _found(f"{thousands}k rows", str(thousands * 100))


@pytest.mark.parametrize(
    ("text", "value", "found"),
    [
        ("2GB", "2 GB", True), ("2 gigabytes", "2 GB", True), ("两个G", "2 GB", True),
        ("２ＧＢ", "2 GB", True), ("2 TB", "2 GB", False), ("2000 MB", "2 GB", True),
        ("30 min", "30 minutes", True), ("half an hour", "30 minutes", True), ("30 s", "30 minutes", False),
        ("$1.50", "1.5", True), ("1.05", "1.5", False), ("Python 3.12.1", "3.12", False), ("v3", "3", False),
        ("PAY-4412", "4412", False),
        ("four thousand two hundred", "4200", True), ("四千二", "4200", True), ("一下", "1 GB", False),
        ("one of the two", "1", False), ("9:15", "09:15", True), ("10.40", "10:40", True),
        ("6:30 pm", "18:30", True), ("6:30 am", "18:30", False), ("19:15", "09:15", False),
        ("14 June", "June 14", True), ("Jun 14th", "June 14", True), ("June 15", "June 14", False),
        ("June 145", "June 14", False),
    ],
)  # fmt: skip
def test_forms_of_quantities_times_and_dates(text: str, value: str, found: bool) -> None:
    assert _found(text, value) == found


def test_chinese_short_forms_and_weekday_prefixes() -> None:
    assert literal_forms("翠竹会议室", ("翠竹会议室", "松林会议室")) == ("翠竹",)
    assert literal_forms("翠竹会议室", ("翠竹会议室", "翠竹厅")) == ()  # "翠竹" would name both
    assert literal_forms("陈老师", ()) == ()  # no generic suffix
    assert set(literal_forms("周六凌晨", ())) == {"星期六凌晨", "礼拜六凌晨"}
