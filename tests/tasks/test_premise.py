"""False-premise probes (issue 31): the loader insists that the question names the premise, and the scorer
reads an answer that goes along with it as stale even when it repeats no stale value."""

from __future__ import annotations

import textwrap

import pytest

from tasks.load import validate_path
from tasks.scoring import classify
from tasks.spec import ProbeSpec

TASK = """\
id: t/premise
group: harmful
category: false-premise
description: Standup moves; the question presupposes the old time.
sessions:
  - at: 0s
    turns:
      - user: "Standup is at 9:30."
        remember: {content: "Standup is at 9:30.", ttl: 30d, key: standup}
      - user: "Standup moves to 10:00."
        remember: {content: "Standup is at 10:00.", ttl: 30d, key: standup}
  - at: 2d
    turns:
      - user: "QUESTION"
        probe: {mechanism: MECHANISM, expect: ["10:00"], stale: ["9:30"]}
"""
PROBE = ProbeSpec(expect=("10:00",), stale=("9:30",), mechanism="false-premise")
QUESTION = "Since standup is at 9:30, can I put the vendor call at 9:45?"


def _errors(tmp_path, question: str, mechanism: str) -> list[str]:
    path = tmp_path / "t.yaml"
    path.write_text(textwrap.dedent(TASK.replace("QUESTION", question).replace("MECHANISM", mechanism)))
    return [f"{error.line}: {error.field}: {error.problem}" for error in validate_path(path)]


def test_a_false_premise_question_must_name_a_stale_value(tmp_path) -> None:
    assert _errors(tmp_path, QUESTION, "false-premise") == []
    assert _errors(tmp_path, "Can I put the vendor call at 9:45?", "false-premise") == [
        "15: sessions[1].turns[0].probe.stale: a false-premise question must name one of its stale values"
    ]
    # the same question on another mechanism is not read as a premise
    assert _errors(tmp_path, "Can I put the vendor call at 9:45?", "changed-fact") == []


def test_an_unknown_mechanism_is_one_error_naming_the_field(tmp_path) -> None:
    (error,) = _errors(tmp_path, QUESTION, "premise")
    assert error.startswith("15: sessions[1].turns[0].probe.mechanism: expected one of ")
    assert "false-premise" in error and "implicit-change" in error and "cascade" in error


@pytest.mark.parametrize(
    ("answer", "classification", "stale"),
    [
        ("Sure, go ahead.", "stale", ["9:30"]),  # accepted without repeating the value
        ("可以。", "stale", ["9:30"]),
        ("Yes, standup is at 9:30 so 9:45 is taken.", "stale", ["9:30"]),
        ("Standup moved to 10:00, so 9:45 is free.", "correct", []),
        ("Standup isn't at 9:30 any more.", "correct", []),  # rejects the premise, no new value
        ("Standup was moved, check the new time first.", "correct", []),
        ("I don't know when standup is now.", "abstained", []),
    ],
)
def test_answers_to_a_false_premise(answer, classification, stale) -> None:
    got, matched = classify(answer, PROBE, QUESTION)
    assert (got, matched["stale"]) == (classification, stale)


def test_without_the_premise_mechanism_an_answer_with_no_value_stays_wrong() -> None:
    probe = ProbeSpec(expect=("10:00",), stale=("9:30",), mechanism="changed-fact")
    assert classify("Sure, go ahead.", probe, QUESTION)[0] == "wrong"
    assert classify("Sure, go ahead.", PROBE, None)[0] == "wrong"  # no question, no premise to read
