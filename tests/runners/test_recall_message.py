"""An arm's extra messages (`MemoryContext.messages`, seed 002's `<recalled-memory>` recall): the runner
places them right before the user turn, keeps them in the conversation, logs them with the injection record,
and exposure, the pair summary and the staleness figures count what they carry."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from runners.armconfig import ArmSpec
from runners.models import resolve_model
from runners.replay import PairJob, replay_pair
from tasks.load import load_tasks
from tasks.logschema import summarize

TASK = {
    "id": "helpful/recall-message",
    "group": "helpful",
    "category": "c",
    "description": "a write, then two probes in the same session",
    "sessions": [
        {
            "at": "0s",
            "turns": [
                {"user": "Noted.", "remember": {"content": "The verification drink is oolong."}},
                {"user": "Which verification drink?", "probe": {"expect": ["oolong"]}},
                {"user": "And the drink for verification again?", "probe": {"expect": ["oolong"]}},
            ],
        }
    ],
}


def _replay(tmp_path: Path, **options) -> list[dict]:
    (tmp_path / "tasks.yaml").write_text(yaml.safe_dump([TASK]), encoding="utf-8")
    [task] = load_tasks(tmp_path / "tasks.yaml")
    log = tmp_path / "log.jsonl"
    job = PairJob(ArmSpec("retrieval", "retrieval", options), task, 1, log, tmp_path / "work", 2000)
    replay_pair(job, resolve_model("scripted"))
    return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]


def test_the_recall_message_precedes_the_user_turn_and_stays_in_the_conversation(tmp_path):
    records = _replay(tmp_path)
    calls = [r for r in records if r["type"] == "model_call"]
    injections = [r for r in records if r["type"] == "injection"]
    first_probe = calls[1]["messages"]
    assert "oolong" not in first_probe[0]["content"]  # the system block is left alone
    recall, question = first_probe[-2:]
    assert recall["role"] == "user" and recall["content"].startswith("<recalled-memory>")
    assert "oolong" in recall["content"] and question["content"] == "Which verification drink?"
    assert injections[1]["messages"] == [recall] and injections[1]["block"] == ""
    assert "messages" not in injections[0]  # written only when there are some
    later = calls[2]["messages"]
    assert recall in later and injections[2].get("messages") is None  # kept, not recalled a second time
    probes = [r for r in records if r["type"] == "probe"]
    assert [p["exposed"]["expect"] for p in probes] == [["oolong"], ["oolong"]]
    assert [p["classification"] for p in probes] == ["correct", "correct"]
    summary = summarize(records)["injections"]
    assert "oolong" in summary["block"][1] and summary["tokens"][1] == injections[1]["tokens"] > 0


def test_the_system_placement_keeps_the_recall_in_the_block(tmp_path):
    records = _replay(tmp_path, recall_placement="system")
    injections = [r for r in records if r["type"] == "injection"]
    assert "<recalled-memory>" in injections[1]["block"] and "messages" not in injections[1]
