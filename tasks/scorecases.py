"""Labelled scoring cases: answers, the probe each answers and, optionally, the classification a person gave.

One JSON object per line (JSONL), as `amnesia-bench score` reads it and as `tests/tasks/scoring_corpus.jsonl`
holds it:

    {"question": "Is staging frozen right now?", "expect": [], "stale": ["frozen"], "poison": [],
     "abstain": true, "mechanism": "lapsed-constraint", "answer": "No.", "label": "correct",
     "note": "bare no"}

`question`, `answer` (strings), `expect`, `stale`, `poison` (lists of strings), `abstain` (bool) and
`mechanism` (string) are required; `label` (one of the five classifications), `note` and `not_asserting`
(list of strings) are optional. A researcher checks the scorer against their own labels with these before
trusting a result.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tasks.errors import BadInput
from tasks.scoring import classify
from tasks.spec import CLASSIFICATIONS, Classification, ProbeSpec

_REQUIRED_STRINGS = ("question", "answer", "mechanism")
_REQUIRED_LISTS = ("expect", "stale", "poison")
_OPTIONAL_STRINGS = ("label", "note")


@dataclass(frozen=True)
class ScoreCase:
    """One answer to score, with its probe."""

    line: int  # 1-based line number in its file
    question: str  # the probe's user text (the yes/no reading of abstain probes needs it)
    probe: ProbeSpec
    answer: str
    label: Classification | None = None  # the classification a person gave, if any
    note: str = ""  # why the case is there (free text)


def _field_error(path: Path, line: int, field: str, problem: str) -> BadInput:
    return BadInput(f"{path}:{line}: {field}: {problem}")


def _string_list(path: Path, line: int, record: dict, field: str) -> tuple[str, ...]:
    value = record.get(field, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise _field_error(path, line, field, f"expected a list of strings, got {json.dumps(value)[:60]}")
    return tuple(value)


def parse_case(path: Path, line: int, text: str) -> ScoreCase:
    """The case on one line of `path`; a `BadInput` naming file, line and field when it is malformed."""
    try:
        record = json.loads(text)
    except json.JSONDecodeError as error:
        raise _field_error(path, line, "json", f"not valid JSON ({error.msg})") from None
    if not isinstance(record, dict):
        raise _field_error(path, line, "json", "expected one JSON object per line")
    for field in (*_REQUIRED_STRINGS, *_REQUIRED_LISTS, "abstain"):
        if field not in record:
            raise _field_error(path, line, field, "missing")
    for field in (*_REQUIRED_STRINGS, *_OPTIONAL_STRINGS):
        if field in record and not isinstance(record[field], str):
            raise _field_error(path, line, field, f"expected a string, got {json.dumps(record[field])[:60]}")
    if not isinstance(record["abstain"], bool):
        raise _field_error(
            path, line, "abstain", f"expected true or false, got {json.dumps(record['abstain'])}"
        )
    label = record.get("label")
    if label is not None and label not in CLASSIFICATIONS:
        raise _field_error(path, line, "label", f"expected one of {'|'.join(CLASSIFICATIONS)}, got {label!r}")
    probe = ProbeSpec(
        expect=_string_list(path, line, record, "expect"),
        stale=_string_list(path, line, record, "stale"),
        poison=_string_list(path, line, record, "poison"),
        abstain=record["abstain"],
        mechanism=record["mechanism"],
        not_asserting=_string_list(path, line, record, "not_asserting"),
    )
    if not probe.candidates and not probe.abstain:
        raise _field_error(
            path, line, "expect", "empty, and the probe is no abstain probe: nothing can be correct"
        )
    return ScoreCase(line, record["question"], probe, record["answer"], label, record.get("note", ""))


def read_cases(path: Path) -> list[ScoreCase]:
    """Every case of a JSONL file (blank lines skipped); the first malformed line raises `BadInput`."""
    cases = []
    with path.open(encoding="utf-8") as handle:
        for number, text in enumerate(handle, start=1):
            if text.strip():
                cases.append(parse_case(path, number, text))
    if not cases:
        raise BadInput(f"{path}: no cases (expected one JSON object per line)")
    return cases


def classify_case(case: ScoreCase) -> Classification:
    """The scorer's classification of the case's answer."""
    return classify(case.answer, case.probe, case.question)[0]


def binary(classification: Classification) -> str:
    """Correct or not: the distinction every success rate rests on."""
    return "correct" if classification == "correct" else "not-correct"


@dataclass(frozen=True)
class Agreement:
    """How the scorer's classifications agree with people's labels."""

    cases: int
    agree: int  # same of the five classifications
    agree_binary: int  # same on correct vs not-correct
    # confusion[label][scored]: how many cases with that label got that classification
    confusion: dict[str, dict[str, int]]
    lenient_abstain: int  # abstain probes labelled not-correct that the scorer calls correct

    @property
    def rate(self) -> float:
        """Agreement over the five classifications."""
        return self.agree / self.cases

    @property
    def rate_binary(self) -> float:
        """Agreement on correct vs not-correct."""
        return self.agree_binary / self.cases


def agreement(labelled: Sequence[tuple[ScoreCase, Classification]]) -> Agreement:
    """The agreement of (case, scorer classification) pairs whose case has a label."""
    confusion = {label: dict.fromkeys(CLASSIFICATIONS, 0) for label in CLASSIFICATIONS}
    agree = agree_binary = lenient = 0
    for case, scored in labelled:
        assert case.label is not None
        confusion[case.label][scored] += 1
        agree += scored == case.label
        agree_binary += binary(scored) == binary(case.label)
        lenient += case.probe.abstain and scored == "correct" and case.label != "correct"
    return Agreement(len(labelled), agree, agree_binary, confusion, lenient)


def format_agreement(result: Agreement) -> Iterable[str]:
    """The agreement as text lines: both rates, lenient abstain errors, the confusion matrix."""
    binary_rate = f"{result.agree_binary}/{result.cases} ({result.rate_binary:.1%})"
    five_rate = f"{result.agree}/{result.cases} ({result.rate:.1%})"
    yield f"agreement: {binary_rate} on correct vs not-correct, {five_rate} on all five classifications"
    yield f"lenient errors on abstain probes (not-correct scored correct): {result.lenient_abstain}"
    width = max(len(name) for name in CLASSIFICATIONS) + 2
    yield "label \\ scored".ljust(16) + "".join(name.rjust(width) for name in CLASSIFICATIONS)
    for label in CLASSIFICATIONS:
        row = result.confusion[label]
        yield label.ljust(16) + "".join(str(row[name]).rjust(width) for name in CLASSIFICATIONS)
