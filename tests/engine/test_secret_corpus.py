"""The credential filter measured like a detector, on a labelled corpus (tests/data/secret_corpus.jsonl:
synthetic values in the formats public rule sets describe, and benign look-alikes), and on thousands of
seeded floats and timestamps, which must pass."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from amnesia import Amnesia, SecretRefused, SimulatedClock
from amnesia.safety import find_secret_rule

CORPUS_PATH = Path(__file__).parents[1] / "data" / "secret_corpus.jsonl"
CASES = [json.loads(line) for line in CORPUS_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
SECRETS = [case for case in CASES if case["label"] == "secret"]
BENIGN = [case for case in CASES if case["label"] == "benign"]
MIN_RECALL = 0.95
MAX_FALSE_REFUSALS = 0.02
MAX_NUMBERS_REFUSED = 0.005
SAMPLES = 5000


def test_the_corpus_holds_60_secret_formats_and_60_look_alikes_each_described():
    assert {case["label"] for case in CASES} == {"secret", "benign"}
    assert len({case["format"] for case in SECRETS}) >= 60
    assert len({case["format"] for case in BENIGN}) >= 60
    for case in CASES:
        assert set(case) == {"text", "label", "format", "note"} and all(case.values())


def test_recall_and_false_refusals_meet_their_floors():
    missed = [case["format"] for case in SECRETS if find_secret_rule(case["text"]) is None]
    refused = [case["format"] for case in BENIGN if find_secret_rule(case["text"]) is not None]
    assert 1 - len(missed) / len(SECRETS) >= MIN_RECALL, missed
    assert len(refused) / len(BENIGN) <= MAX_FALSE_REFUSALS, refused


@pytest.mark.parametrize(
    "make",
    [
        lambda rng: str(rng.random()),  # str(random()): 0.8444218515250481
        lambda rng: str(rng.randrange(10**18, 10**19)),  # 19-digit nanosecond timestamps
        lambda rng: str(rng.randrange(10**12, 10**13)),  # 13-digit millisecond timestamps
        lambda rng: f"The run took {rng.random() * 1000} s at {rng.randrange(10**18, 10**19)} ns.",
    ],
    ids=["float", "timestamp-ns", "timestamp-ms", "in-a-sentence"],
)
def test_ordinary_numbers_are_not_taken_for_card_numbers(make):
    rng = random.Random(20261205)
    refused = sum(find_secret_rule(make(rng)) is not None for _ in range(SAMPLES))
    assert refused / SAMPLES <= MAX_NUMBERS_REFUSED


def test_luhn_valid_card_numbers_in_numbers_text_are_still_refused():
    """The number shapes above are passed because of what surrounds them, not because cards are ignored:
    the same digits laid out as a card, or next to the word card, are refused."""
    assert find_secret_rule("card 4111111111111111") == "payment-card"
    assert find_secret_rule("4111 1111 1111 1111") == "payment-card"
    assert find_secret_rule("0.4111111111111111") is None
    assert find_secret_rule("4111111111111111") is None


@pytest.mark.parametrize("case", SECRETS[::7], ids=lambda case: case["format"])
def test_a_refused_write_names_the_rule_never_the_secret(case):
    engine = Amnesia(clock=SimulatedClock(0))
    with pytest.raises(SecretRefused) as error:
        engine.remember(case["text"])
    message = str(error.value)
    assert len(message.splitlines()) == 1 and error.value.rule in message
    for piece in case["text"].replace('"', " ").split():
        if len(piece) >= 8 and not piece.isalpha():  # words such as "password" may be in the rule's name
            assert piece not in message
    assert engine.plugs() == [] and engine.audit() == []
