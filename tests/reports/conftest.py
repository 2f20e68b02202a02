"""Fixtures for the report tests: `write_run(root, seed=0)` writes a small hand-written run folder that
follows the session-log schema of docs/ARCHITECTURE.md exactly.

Three arms × four tasks; every probe's classification is fixed below so the metrics can be computed by hand.
The memory policies are simulated in a few lines: no-memory writes nothing, full-memory injects every item it
was given, amnesia forgets an item when its key is rewritten or its ttl has passed."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from amnesia.durations import format_duration
from amnesia.tokens import count_tokens

DAY = 86400.0
BUDGET = 2000
ARMS = ("no-memory", "full-memory", "amnesia")


def _write(content: str, key: str, ttl: float) -> dict[str, Any]:
    return {"content": content, "ttl": ttl, "kind": "fact", "pin": False, "tags": [], "scope": None,
            "key": key, "source": "user"}  # fmt: skip


def _probe(expect: list[str], stale: list[str] = (), abstain: bool = False) -> dict[str, Any]:
    return {"expect": list(expect), "stale": list(stale), "poison": [], "abstain": abstain}


def _turn(user: str, remember=(), probe=None) -> dict[str, Any]:
    return {"user": user, "remember": list(remember), "forget": [], "probe": probe}


def _task(
    task_id: str, group: str, category: str, sessions: list[tuple[float, list[dict]]]
) -> dict[str, Any]:
    return {"id": task_id, "group": group, "category": category, "description": task_id, "lang": "en",
            "sessions": [{"at": at, "agent": "main", "turns": turns} for at, turns in sessions]}  # fmt: skip


TASKS = [
    _task("harmful/drink", "harmful", "fact-change", [
        (0.0, [_turn("Remember.", [_write("The verification drink is lapsang.", "drink", 30 * DAY)])]),
        (2 * DAY, [_turn("Update.", [_write("The verification drink is oolong.", "drink", 30 * DAY)])]),
        (5 * DAY, [_turn("Which drink?", probe=_probe(["oolong"], ["lapsang"]))]),
    ]),
    _task("harmful/freeze", "harmful", "expired-constraint", [
        (0.0, [_turn("Freeze.", [_write("Deploy freeze is active.", "freeze", 3 * DAY)])]),
        (7 * DAY, [_turn("Can we deploy?", probe=_probe(["deploy now"], ["freeze"]))]),
    ]),
    _task("helpful/lang", "helpful", "preference", [
        (0.0, [_turn("Prefs.", [_write("Answer in French.", "lang", 90 * DAY)])]),
        (20 * DAY, [_turn("Which language?", probe=_probe(["French"]))]),
    ]),
    _task("helpful/repo", "helpful", "project-context", [
        (0.0, [_turn("Repo.", [_write("The repo is called falcon.", "repo", 60 * DAY)])]),
        (10 * DAY, [_turn("Repo name?", probe=_probe(["falcon"]))]),
        (40 * DAY, [_turn("Repo name again?", probe=_probe(["falcon"]))]),
    ]),
]  # fmt: skip

# Classification of each task's probes, in order, per arm.
OUTCOMES = {
    "no-memory": {"harmful/drink": ["abstained"], "harmful/freeze": ["abstained"],
                  "helpful/lang": ["abstained"], "helpful/repo": ["abstained", "abstained"]},
    "full-memory": {"harmful/drink": ["stale"], "harmful/freeze": ["stale"], "helpful/lang": ["correct"],
                    "helpful/repo": ["correct", "correct"]},
    "amnesia": {"harmful/drink": ["correct"], "harmful/freeze": ["correct"], "helpful/lang": ["correct"],
                "helpful/repo": ["correct", "abstained"]},
}  # fmt: skip
SYSTEM_TOKENS = 20


def _answer(classification: str, probe: dict[str, Any]) -> str:
    if classification == "correct":
        return f"It is {probe['expect'][0]}."
    if classification == "stale":
        return f"It is {probe['stale'][0]}."
    return "I don't know."


def _pair_records(arm: str, task: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []

    def log(record_type: str, sim_time: float, **fields: Any) -> None:
        records.append({"v": 1, "seq": len(records), "type": record_type, "arm": arm, "task_id": task["id"],
                        "sim_time": sim_time, **fields})  # fmt: skip

    log("task_start", 0.0, task=task, arm_config={"name": arm}, seed=seed, budget_tokens=BUDGET, model={})
    live: dict[str, dict[str, Any]] = {}  # item id -> write info
    outcomes = iter(OUTCOMES[arm][task["id"]])
    calls = probes = 0
    for s_index, session in enumerate(task["sessions"]):
        now = session["at"]
        for item_id, item in list(live.items()):
            if arm == "amnesia" and now >= item["at"] + item["ttl"]:
                del live[item_id]
                log("memory_forget", now, item_id=item_id, reason="expired", content_hash="h")
        log("session_start", now, session_index=s_index, session_id=f"s{s_index}", agent="main", at=now)
        for t_index, turn in enumerate(session["turns"]):
            log("turn", now, session_index=s_index, turn_index=t_index, user=turn["user"])
            for spec in turn["remember"] if arm != "no-memory" else ():
                for old_id, old in list(live.items()):
                    if arm == "amnesia" and old["key"] == spec["key"]:
                        del live[old_id]
                        log("memory_forget", now, item_id=old_id, reason="superseded", content_hash="h")
                item_id = f"m-{task['id'].split('/')[1]}{len(records)}"
                live[item_id] = {
                    "at": now,
                    "ttl": spec["ttl"],
                    "key": spec["key"],
                    "content": spec["content"],
                }
                write = {"item_id": item_id, "content": spec["content"], "kind": "fact", "ttl": spec["ttl"],
                         "pinned": False, "scope": "workspace", "owner_id": None, "key": spec["key"],
                         "source": "user", "curve": "ebbinghaus", "strength": 1.0,
                         "tokens": count_tokens(spec["content"]),
                         "expires_at": now + spec["ttl"]}  # fmt: skip
                log("memory_write", now, **write)
            lines = [f"- [{i}] fact · written {format_duration(now - it['at'])} ago · {it['content']}"
                     for i, it in live.items()]  # fmt: skip
            block = ""
            if lines:
                body = "\n".join(lines)
                block = f"AMNESIA MEMORY ({len(lines)} items, {count_tokens(body)}/{BUDGET} tokens)\n{body}"
            tokens = count_tokens(block) if block else 0
            items = [{"id": i, "tokens": count_tokens(it["content"])} for i, it in live.items()]
            log("injection", now, session_index=s_index, turn_index=t_index, block=block, tokens=tokens,
                budget_tokens=BUDGET, items=items, details={})  # fmt: skip
            for item in items:
                log("memory_touch", now, item_id=item["id"], strength=1.0, reason="inject")
            probe = turn["probe"]
            classification = next(outcomes) if probe else None
            answer = _answer(classification, probe) if probe else "OK."
            log("model_call", now, session_index=s_index, turn_index=t_index, call_index=0, messages=[],
                response=answer, prompt_tokens=SYSTEM_TOKENS + tokens, completion_tokens=3, model="scripted",
                cached=False, tool_calls=[], wall_ms=1.0)  # fmt: skip
            calls += 1
            if probe:
                probes += 1
                changed = max(
                    s["at"] for s in task["sessions"][: s_index + 1] if any(t["remember"] for t in s["turns"])
                )
                log("probe", now, session_index=s_index, turn_index=t_index, **probe, answer=answer,
                    classification=classification, matched={"expect": [], "stale": [], "poison": []},
                    fact_changed_at=changed)  # fmt: skip
        log("session_end", now, session_index=s_index, session_id=f"s{s_index}")
    log("task_end", task["sessions"][-1]["at"], probes=probes, model_calls=calls, wall_seconds=0.01)
    return records


def _write_run(root: Path, seed: int = 0) -> Path:
    """Write the fixture run folder at `root` and return it."""
    files = {
        f"{t['id']}.yaml": hashlib.sha256(json.dumps(t, sort_keys=True).encode()).hexdigest() for t in TASKS
    }
    content_hash = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()
    manifest = {
        "format": 1, "package_version": "0.1.0", "git_commit": None, "created_wall": "2025-01-01T00:00:00Z",
        "seed": seed, "model": {"name": "scripted"}, "arms": {arm: {"name": arm} for arm in ARMS},
        "budget_tokens": BUDGET,
        "tasks": {"root": "fixture", "count": len(TASKS), "content_hash": content_hash, "files": files},
        "groups": ["harmful", "helpful"], "argv": ["fixture"],
    }  # fmt: skip
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    for arm in ARMS:
        folder = root / "logs" / arm
        folder.mkdir(parents=True, exist_ok=True)
        for task in TASKS:
            lines = [json.dumps(r, ensure_ascii=False) for r in _pair_records(arm, task, seed)]
            (folder / f"{task['id'].replace('/', '__')}.jsonl").write_text(
                "\n".join(lines) + "\n", encoding="utf-8"
            )
    return root


@pytest.fixture(scope="session")
def write_run() -> Callable[..., Path]:
    """`write_run(root, seed=0) -> root`: the fixture run folder, written at `root`."""
    return _write_run
