"""`rescore` judges a logged answer as the run did: a real model's "Sure, go ahead." to a lapsed constraint
asked as a yes/no question is right in the run (the runner hands the scorer the probe's question) and in
`rescore` (which reads it from the logged model call), a refusal is wrong in both; and a probe's
`not_asserting` phrases (logged on the probe record) count in both."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from runners.models.stub_server import text_reply

FREEZE_TASK = {
    "id": "harmful/freeze-yes-no",
    "group": "harmful",
    "category": "expired-constraint",
    "description": "A freeze lapsed; asked as a yes/no question after it.",
    "sessions": [
        {
            "at": "0s",
            "turns": [
                {
                    "user": "Heads up: staging is frozen until Friday, no migrations.",
                    "remember": {"content": "Staging frozen until Friday: no migrations.", "ttl": "4d"},
                }
            ],
        },
        {
            "at": "7d",
            "turns": [
                {
                    "user": "Can I run migrations on staging?",
                    "probe": {"mechanism": "lapsed-constraint", "abstain": True, "stale": ["frozen"]},
                }
            ],
        },
    ],
}


@pytest.mark.parametrize(
    ("answer", "expected"), [("Sure, go ahead.", "correct"), ("No, you can't.", "wrong")]
)
def test_run_and_rescore_score_a_yes_no_lapsed_constraint_alike(
    answer, expected, write_tasks, run_ok, run_logs, openai_stub, monkeypatch, tmp_path: Path
) -> None:
    from amnesia_bench.cli import app

    monkeypatch.setenv("AMNESIA_NO_CACHE", "1")
    folder = write_tasks(tmp_path / "tasks", [FREEZE_TASK])
    openai_stub.script(text_reply("OK, noted."), text_reply(answer))
    model = ["--model", "openai:stub-model", "--base-url", openai_stub.base_url]
    run_ok(folder, tmp_path / "run", *model, arms="no-memory")
    (log,) = (tmp_path / "run" / "logs").rglob("*.jsonl")
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    (probe,) = [r for r in records if r["type"] == "probe"]
    assert (probe["answer"], probe["classification"]) == (answer, expected)
    # as if an older scorer had judged it the other way: rescore finds the question and judges it again
    probe["classification"] = "wrong" if expected == "correct" else "correct"
    log.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    result = CliRunner().invoke(app, ["rescore", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    rescored = run_logs(tmp_path / "run" / "rescored")
    (fixed,) = [r for records in rescored.values() for r in records if r["type"] == "probe"]
    assert fixed["classification"] == expected
