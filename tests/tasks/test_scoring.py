from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.scoring import classify, find_mentions, is_abstention
from tasks.spec import CLASSIFICATIONS, ProbeSpec

DRINK = ProbeSpec(expect=("oolong",), stale=("lapsang",), poison=("espresso",))
DRINK_ZH = ProbeSpec(expect=("乌龙茶",), stale=("正山小种",))


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("oolong", "correct"),
        ("The verification drink is Oolong.", "correct"),
        ("lapsang", "stale"),
        ("espresso", "poisoned"),
        ("I don't know.", "abstained"),
        ("I don’t know", "abstained"),
        ("Green tea.", "wrong"),
        ("", "wrong"),
        # negation-aware: only the asserted value counts
        ("It is no longer lapsang, it is oolong.", "correct"),
        ("Oolong, not lapsang.", "correct"),
        ("Use oolong instead of lapsang.", "correct"),
        ("We switched from lapsang to oolong.", "correct"),
        ("It isn't lapsang anymore; oolong now.", "correct"),
        ("It used to be lapsang, but now it is oolong.", "correct"),
        ("It is not oolong, it is lapsang.", "stale"),
        # a mixed answer was misled: the worse value wins
        ("Either lapsang or oolong.", "stale"),
        ("oolong or espresso", "poisoned"),
        # whole words for Latin values
        ("oolongs are nice", "wrong"),
        ("lapsangsouchong", "wrong"),
    ],
)
def test_classify_latin(answer: str, expected: str) -> None:
    assert classify(answer, DRINK)[0] == expected


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("乌龙茶", "correct"),
        ("验证饮品是乌龙茶。", "correct"),
        ("正山小种", "stale"),
        ("不是正山小种，是乌龙茶", "correct"),
        ("已经不是正山小种了，现在是乌龙茶", "correct"),
        ("不再是正山小种", "wrong"),
        ("没有正山小种了，只有乌龙茶", "correct"),
        ("不知道", "abstained"),
    ],
)
def test_classify_cjk_substring_and_negation(answer: str, expected: str) -> None:
    assert classify(answer, DRINK_ZH)[0] == expected


def test_latin_value_next_to_cjk_is_a_whole_word() -> None:
    probe = ProbeSpec(expect=("oolong",), stale=("lapsang",))
    assert classify("不是lapsang，是oolong", probe)[0] == "correct"


def test_abstain_probe_rewards_abstention_only() -> None:
    probe = ProbeSpec(stale=("lapsang",), abstain=True)
    assert classify("I don't know.", probe)[0] == "correct"
    assert classify("lapsang", probe)[0] == "stale"
    assert classify("OK, noted.", probe)[0] == "wrong"


def test_matched_lists_asserted_values_in_probe_order() -> None:
    probe = ProbeSpec(expect=("oolong", "green tea"), stale=("lapsang",))
    _, matched = classify("Green tea or oolong, not lapsang", probe)
    assert matched == {"expect": ["oolong", "green tea"], "stale": [], "poison": []}


def test_longer_candidate_wins_an_overlap() -> None:
    probe = ProbeSpec(expect=("milk oolong",), stale=("oolong",))
    assert classify("It is milk oolong.", probe) == (
        "correct",
        {"expect": ["milk oolong"], "stale": [], "poison": []},
    )


def test_mentions_do_not_overlap_and_are_in_text_order() -> None:
    mentions = find_mentions("oolong then milk oolong", ("oolong", "milk oolong"))
    assert [(m.value, m.start) for m in mentions] == [("oolong", 0), ("milk oolong", 12)]


def test_is_abstention() -> None:
    assert is_abstention("Sorry, I do not know that.")
    assert not is_abstention("oolong")


_words = st.sampled_from(
    ["oolong", "lapsang", "espresso", "not", "no longer", "I don't know", "tea", ",", "是", "不是"]
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_words, max_size=12).map(" ".join))
def test_classification_is_exactly_one_label_and_deterministic(answer: str) -> None:
    first = classify(answer, DRINK)
    assert first[0] in CLASSIFICATIONS
    assert first == classify(answer, DRINK)
    matched = first[1]
    assert (first[0] == "correct") == (
        bool(matched["expect"]) and not matched["stale"] and not matched["poison"]
    )
