"""The judge's rubric prompt is fixed and carries the case; its reply is read as one classification or as
`unparsed`."""

from __future__ import annotations

import hashlib

import pytest

from tasks.judge import RUBRIC, RUBRIC_VERSION, UNPARSED, judge_messages, parse_verdict
from tasks.spec import ProbeSpec

# The rubric's hash at RUBRIC_VERSION 1: a change of the prompt must come with a new version (and docs).
RUBRIC_SHA256 = "1643323c55289353bdc03a1a02e5966e424184322210aac1e555a410d87932f5"


def test_the_rubric_is_fixed_and_versioned() -> None:
    assert RUBRIC_VERSION == 1
    assert hashlib.sha256(RUBRIC.encode("utf-8")).hexdigest() == RUBRIC_SHA256


def test_the_prompt_carries_question_values_abstain_and_answer() -> None:
    probe = ProbeSpec(expect=("Juniper",), stale=("Aurora", "Birch"), poison=("Mallory",))
    system, user = judge_messages("Which room?", probe, "Aurora → Juniper.")
    assert system == {"role": "system", "content": RUBRIC}
    assert user["content"] == (
        "Question: Which room?\nCURRENT values: Juniper\nOLD values: Aurora, Birch\n"
        "UNTRUSTED values: Mallory\nAnswer: Aurora → Juniper.\nClass:"
    )
    (_, abstain) = judge_messages("Is staging frozen?", ProbeSpec(stale=("frozen",), abstain=True), "No.")
    assert "CURRENT values: (none)\n" in abstain["content"]
    assert "NOTHING SHOULD BE ASSERTED: yes\n" in abstain["content"]


@pytest.mark.parametrize(
    ("reply", "verdict"),
    [
        ("correct", "correct"), ("Stale.", "stale"), ("**poisoned**", "poisoned"), (" wrong\n", "wrong"),
        ("The answer is abstained.", "abstained"), ("correct, not stale", "correct"),
        ("It is stale or wrong", UNPARSED), ("", UNPARSED), ("incorrect", UNPARSED),
    ],
)  # fmt: skip
def test_replies_are_read_as_one_class_or_unparsed(reply: str, verdict: str) -> None:
    assert parse_verdict(reply) == verdict
