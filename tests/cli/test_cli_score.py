"""`amnesia-bench score CASES.jsonl` end to end: each line's classification, `--json`, the agreement with
labels (rates, confusion matrix, disagreeing lines), and one-line errors naming line and field (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app

FREEZE = {"question": "Is staging frozen right now?", "expect": [], "stale": ["frozen"], "poison": [],
          "abstain": True, "mechanism": "lapsed-constraint"}  # fmt: skip
ROOM = {"question": "Which room is the standup in now?", "expect": ["Juniper"], "stale": ["Aurora"],
        "poison": [], "abstain": False, "mechanism": "changed-fact"}  # fmt: skip
CASES = [
    {**ROOM, "answer": "Aurora → Juniper.", "label": "correct"},
    {**ROOM, "answer": "Aurora.", "label": "stale"},
    {**FREEZE, "answer": "No.", "label": "correct"},
    {**FREEZE, "answer": "Sure, go ahead.", "label": "correct"},  # a label the scorer disagrees with
    {**ROOM, "answer": "I don't know."},  # no label: classified, left out of the agreement
]


def _write(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(record, ensure_ascii=False) + "\n" for record in records), "utf-8")
    return path


def test_score_prints_each_classification_and_the_agreement_with_labels(tmp_path: Path) -> None:
    cases = _write(tmp_path / "cases.jsonl", CASES)
    result = CliRunner().invoke(app, ["score", str(cases)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert [line.split("\t")[:2] for line in lines[:5]] == [
        ["1", "correct"], ["2", "stale"], ["3", "correct"], ["4", "wrong"], ["5", "abstained"]
    ]  # fmt: skip
    assert (
        "agreement: 3/4 (75.0%) on correct vs not-correct, 3/4 (75.0%) on all five classifications" in lines
    )
    assert "lenient errors on abstain probes (not-correct scored correct): 0" in lines
    header = next(index for index, line in enumerate(lines) if line.startswith("label \\ scored"))
    assert lines[header + 1].split() == ["correct", "2", "0", "0", "0", "1"]
    assert lines[header + 2].split() == ["stale", "0", "1", "0", "0", "0"]
    assert lines[-1] == f"  {cases}:4: label correct, scored wrong: Sure, go ahead."


def test_score_json_writes_one_object_per_line_with_its_classification(tmp_path: Path) -> None:
    cases = _write(tmp_path / "cases.jsonl", CASES)
    result = CliRunner().invoke(app, ["score", str(cases), "--json"])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in result.stdout.splitlines()]
    assert [record["classification"] for record in records] == [
        "correct",
        "stale",
        "correct",
        "wrong",
        "abstained",
    ]
    assert records[0] == {
        "line": 1,
        "classification": "correct",
        "answer": "Aurora → Juniper.",
        "label": "correct",
    }
    assert "agreement: 3/4" in result.stderr


@pytest.mark.parametrize(
    ("line", "error"),
    [
        ("{not json", "json: not valid JSON"),
        (json.dumps({**ROOM, "answer": 3}), "answer: expected a string, got 3"),
        (json.dumps({**ROOM, "stale": "Aurora", "answer": "x"}), 'stale: expected a list of strings, got "'),
        (json.dumps({**FREEZE, "abstain": "yes", "answer": "x"}), 'abstain: expected true or false, got "y'),
        (json.dumps({**ROOM, "answer": "x", "label": "right"}), "label: expected one of correct|stale|"),
        (json.dumps({key: value for key, value in ROOM.items() if key != "question"} | {"answer": "x"}),
         "question: missing"),
    ],
)  # fmt: skip
def test_a_bad_line_is_one_error_naming_line_and_field_and_exit_2(
    tmp_path: Path, line: str, error: str
) -> None:
    cases = tmp_path / "cases.jsonl"
    cases.write_text(json.dumps({**ROOM, "answer": "Juniper."}) + "\n\n" + line + "\n", "utf-8")
    result = CliRunner().invoke(app, ["score", str(cases)])
    assert result.exit_code == 2
    assert result.stdout == ""  # nothing is printed before the whole file has been read
    (message,) = result.stderr.splitlines()
    assert message.startswith(f"error: {cases}:3: {error}")
