"""Token F1 for free-text answers on imported sets (LoCoMo's metric): normalisation, multi-hop parts,
abstention questions, and the invariants of F1."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tasks.scoring import answer_tokens, free_text_score, token_f1


def test_normalisation_drops_case_punctuation_and_articles():
    assert answer_tokens("The Quillon, a tortoise!") == ["quillon", "tortoise"]
    assert answer_tokens("７ May 2023") == ["7", "may", "2023"]  # NFKC: full-width digits


@pytest.mark.parametrize(
    ("answer", "gold", "expected"),
    [
        ("Quillon", "Quillon", 1.0),
        ("It is Quillon the tortoise", "Quillon", 2 * (1 / 4) * 1 / (1 / 4 + 1)),
        ("March 2023", "7 March 2023", 2 * 1 * (2 / 3) / (1 + 2 / 3)),
        ("bassoon", "piano", 0.0),
        ("", "piano", 0.0),
    ],
)
def test_token_f1(answer, gold, expected):
    assert token_f1(answer, gold) == pytest.approx(expected)


def test_free_text_score_by_kind_of_question():
    assert free_text_score("I don't know.", None, abstain=True) == 1.0
    assert free_text_score("That was not mentioned.", None, abstain=True) == 1.0
    assert free_text_score("Quillon", None, abstain=True) == 0.0
    assert free_text_score("anything", None, abstain=False) is None
    # Multi-hop: each gold part scored against its best-matching answer part, then averaged.
    score = free_text_score("bassoon, hiking", "bassoon, kayaking", abstain=False, mechanism="multi-hop")
    assert score == pytest.approx(0.5)
    assert free_text_score("bassoon, hiking", "bassoon, kayaking", abstain=False) == pytest.approx(0.5)


words = st.lists(
    st.sampled_from(["fjord", "Quillon", "bassoon", "2023", "may", "the", "a", "blue"]), max_size=8
)


@settings(max_examples=200, deadline=None)
@given(answer=words, gold=words)
def test_f1_is_symmetric_bounded_and_one_on_itself(answer, gold):
    a, g = " ".join(answer), " ".join(gold)
    assert 0.0 <= token_f1(a, g) <= 1.0
    assert token_f1(a, g) == pytest.approx(token_f1(g, a))
    if answer_tokens(a):
        assert token_f1(a, a) == pytest.approx(1.0)
