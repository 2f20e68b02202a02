"""Scoring real-model free text: answers as SmolLM2 and hosted models actually write them (rambling, markdown,
full-width letters, "not X but Y", Chinese negation, other ways of abstaining). The raw answer is kept in the
probe record, so `rescore` can re-apply these rules to an old run."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.scoring import classify
from tasks.spec import ProbeSpec

DRINK = ProbeSpec(expect=("oolong",), stale=("lapsang",))
DRINK_ZH = ProbeSpec(expect=("龙井",), stale=("普洱",))
API = ProbeSpec(expect=("v3",), stale=("v2",))
GONE = ProbeSpec(stale=("frozen",), abstain=True)


@pytest.mark.parametrize(
    ("answer", "probe", "expected"),
    [
        ("It is no longer lapsang, it is oolong.", DRINK, "correct"),
        ("Not lapsang but oolong.", DRINK, "correct"),
        ("The drink is **Oolong** (it used to be lapsang).", DRINK, "correct"),
        ("The verification drink is ｏｏｌｏｎｇ.", DRINK, "correct"),  # full-width letters
        ("Use the ｖ３ endpoint.", API, "correct"),
        (
            "The verification drink is a special drink made from lapsang leaves. It is traditional.",
            DRINK,
            "stale",
        ),
        ("Oolong or lapsang, both are served.", DRINK, "stale"),  # misled: a stale value asserted
        ("不是普洱，是龙井。", DRINK_ZH, "correct"),
        ("验证饮品已经不是普洱了，而是龙井。", DRINK_ZH, "correct"),
        ("验证饮品是普洱。 The answer is: Silk", DRINK_ZH, "stale"),
        ("I don't remember which drink it is.", DRINK, "abstained"),
        ("我不记得了。", DRINK_ZH, "abstained"),
        ("I do not recall any restriction.", GONE, "correct"),
        ("Yes, staging is frozen.", GONE, "stale"),
        ("A drink that is often used in the Beverage of the Day game.", DRINK, "wrong"),
    ],
)
def test_free_text_answers(answer, probe, expected):
    assert classify(answer, probe)[0] == expected


@settings(max_examples=100, deadline=None)
@given(
    filler=st.text(alphabet=st.sampled_from("abcdefghij ,."), max_size=40),
    prefix=st.sampled_from(["", "**", "The answer: ", "答案是"]),
)
def test_full_width_and_ascii_answers_score_alike(filler, prefix):
    answer = f"{prefix}oolong {filler}"
    full_width = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in answer)
    assert classify(full_width, DRINK) == classify(answer, DRINK)
