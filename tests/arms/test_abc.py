"""Arms A (no-memory), B (full-memory) and C (amnesia): their mechanics, and the B-vs-C property that the
forgetting switch is the only difference."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from amnesia.clock import SimulatedClock
from arms.amnesia_arm import AmnesiaArm
from arms.base import ArmContext, SessionInfo
from arms.registry import create_arm, resolve
from tasks.generate import generate
from tasks.logschema import Record
from tasks.spec import ForgetSpec, RememberSpec


def _records(read_log, out: Path, arm: str, task_id: str) -> list[dict[str, Any]]:
    return read_log(out / "logs" / arm / (task_id.replace("/", "__") + ".jsonl"))


# ---- B vs C ------------------------------------------------------------------------------------------------


def test_full_memory_is_amnesia_with_only_auto_expire_switched_off() -> None:
    assert resolve("full-memory") == ("amnesia", {"auto_expire": False})
    full, amnesia = create_arm("full-memory").describe(), create_arm("amnesia").describe()
    differing = {k for k in amnesia["config"] if amnesia["config"][k] != full["config"][k]}
    assert differing == {"auto_expire"}


def _without_expiry(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tasks, all ttls far beyond the horizon, minus untrusted (ttl-capped) memories: nothing expires."""
    kept = []
    for task in copy.deepcopy(tasks):
        specs = [
            spec
            for session in task["sessions"]
            for turn in session["turns"]
            for spec in (turn.get("remember") or [])
            if isinstance(turn.get("remember"), list)
        ] + [
            turn["remember"]
            for session in task["sessions"]
            for turn in session["turns"]
            if isinstance(turn.get("remember"), dict)
        ]
        if any(spec.get("source") == "auto" for spec in specs):
            continue
        for spec in specs:
            spec["ttl"] = "3650d"
        kept.append(task)
    return kept


def _normalised(record: Any) -> Any:
    """Drop what the switch itself shows: the arm's name and config and the items' recorded deadline (an arm
    that never forgets has none). Memory lines and every token count must be the same: both arms render the
    same block format, so context tokens compare like with like."""
    if isinstance(record, dict):
        dropped = {"arm", "arm_config", "expires_at"}
        return {k: _normalised(v) for k, v in record.items() if k not in dropped}
    if isinstance(record, list):
        return [_normalised(v) for v in record]
    return record


def test_b_and_c_logs_are_identical_when_nothing_expires(
    write_tasks, run_ok, run_logs, small_set_tasks, tmp_path: Path
) -> None:
    generated = [t for group in ("helpful", "harmful", "mixed") for t in generate(group, 15, seed=11)]
    tasks = _without_expiry([*small_set_tasks, *generated])
    assert len(tasks) > 30
    folder = write_tasks(tmp_path / "tasks", tasks)
    out = tmp_path / "run"
    for strategy in ("first", "newest"):
        run_ok(folder, out / strategy, "--model", f"scripted:{strategy}", arms="full-memory,amnesia")
        logs = run_logs(out / strategy)
        forgets = 0
        for task in tasks:
            name = task["id"].replace("/", "__") + ".jsonl"
            full, amnesia = logs[f"full-memory/{name}"], logs[f"amnesia/{name}"]
            assert _normalised(full) == _normalised(amnesia), task["id"]
            forgets += sum(r["type"] == "memory_forget" and r["reason"] != "agent-disposed" for r in amnesia)
        assert forgets == 0


def test_b_keeps_what_c_forgets(write_tasks, run_ok, read_log, drink_task, tmp_path: Path) -> None:
    folder = write_tasks(tmp_path / "tasks", [drink_task])
    run_ok(folder, tmp_path / "run", arms="full-memory,amnesia")
    full = _records(read_log, tmp_path / "run", "full-memory", drink_task["id"])
    amnesia = _records(read_log, tmp_path / "run", "amnesia", drink_task["id"])
    assert not [r for r in full if r["type"] == "memory_forget"]
    forgets = [r for r in amnesia if r["type"] == "memory_forget"]
    assert [(r["item_id"], r["reason"], r["sim_time"]) for r in forgets] == [("m-0001", "expired", 3 * 86400)]
    assert "lapsang" not in str(forgets)  # a keyed hash only, never the content
    assert len(forgets[0]["content_hash"]) == 64


# ---- scopes and sub-agents ---------------------------------------------------------------------------------


def test_sub_agent_memories_stay_in_its_session_and_end_with_it(
    write_tasks, run_ok, read_log, subagent_task, tmp_path: Path
) -> None:
    folder = write_tasks(tmp_path / "tasks", [subagent_task])
    run_ok(folder, tmp_path / "run", arms="full-memory,amnesia")
    for arm in ("full-memory", "amnesia"):
        records = _records(read_log, tmp_path / "run", arm, subagent_task["id"])
        write = next(r for r in records if r["type"] == "memory_write")
        assert (write["scope"], write["owner_id"]) == ("session", "s0")
        injections = [r for r in records if r["type"] == "injection"]
        assert "7311" in injections[1]["block"]  # the sub-agent sees its own scratch
        assert "7311" not in injections[2]["block"]  # the main agent never does
        forget = next(r for r in records if r["type"] == "memory_forget")
        assert forget["reason"] == "agent-disposed" and forget["sim_time"] == 0.0
        probes = [r for r in records if r["type"] == "probe"]
        assert [p["classification"] for p in probes] == ["correct", "correct"]


class _Recorder:
    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, record: Record) -> None:
        self.records.append((record.TYPE, record.fields()))

    def of(self, record_type: str) -> list[dict[str, Any]]:
        return [fields for kind, fields in self.records if kind == record_type]


def _started(arm: AmnesiaArm, tmp_path: Path, agent: str = "main") -> tuple[_Recorder, SimulatedClock]:
    log, clock = _Recorder(), SimulatedClock(0.0)
    arm.start_task(ArmContext("t", seed=7, clock=clock, log=log, workdir=tmp_path, budget_tokens=500))
    arm.advance_clock(0.0)
    arm.start_session(SessionInfo(0, "s0", agent, 0.0))  # type: ignore[arg-type]
    return log, clock


def test_main_agent_sees_workspace_and_its_session_memories(tmp_path: Path) -> None:
    arm = AmnesiaArm()
    _started(arm, tmp_path)
    arm.remember(RememberSpec("Workspace fact alpha."))
    arm.remember(RememberSpec("Session note beta.", scope="session"))
    block = arm.memory_context("q", []).block
    assert "alpha" in block and "beta" in block
    arm.end_session(SessionInfo(0, "s0", "main", 0.0))
    arm.start_session(SessionInfo(1, "s1", "main", 0.0))
    block = arm.memory_context("q", []).block
    assert "alpha" in block and "beta" not in block


def test_secrets_are_refused_and_logged_without_content(tmp_path: Path) -> None:
    arm = AmnesiaArm()
    log, _ = _started(arm, tmp_path)
    secret = "My API key is sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6"
    arm.remember(RememberSpec(secret))
    refused = log.of("memory_refused")
    assert len(refused) == 1 and refused[0]["reason"] == "secret refused"
    assert "sk-" not in str(log.records)
    assert arm.memory_context("q", []).block == ""


def test_forget_by_key_works_without_giving_the_engine_the_key(tmp_path: Path) -> None:
    arm = AmnesiaArm()
    log, _ = _started(arm, tmp_path)
    arm.remember(RememberSpec("The deploy day is Tuesday.", key="deploy-day"))
    arm.remember(RememberSpec("The deploy day is Friday.", key="deploy-day"))
    assert [w["key"] for w in log.of("memory_write")] == [None, None]  # no oracle supersession by default
    arm.forget(ForgetSpec(key="deploy-day"))
    assert [f["reason"] for f in log.of("memory_forget")] == ["manual", "manual"]
    assert arm.memory_context("q", []).block == ""


def test_use_keys_makes_a_new_write_supersede_the_old(tmp_path: Path) -> None:
    arm = AmnesiaArm(use_keys=True)
    log, _ = _started(arm, tmp_path)
    arm.remember(RememberSpec("The deploy day is Tuesday.", key="deploy-day"))
    arm.remember(RememberSpec("The deploy day is Friday.", key="deploy-day"))
    assert [f["reason"] for f in log.of("memory_forget")] == ["superseded"]
    block = arm.memory_context("q", []).block
    assert "Friday" in block and "Tuesday" not in block


def test_ids_and_hashes_are_reproducible_from_the_seed(tmp_path: Path) -> None:
    def forget_hash() -> list[Any]:
        arm = AmnesiaArm()
        log, _ = _started(arm, tmp_path)
        arm.remember(RememberSpec("Short-lived note.", ttl=10.0))
        arm.ctx.clock.advance(20.0)  # type: ignore[union-attr]
        arm.advance_clock(20.0)
        return [(f["item_id"], f["content_hash"]) for f in log.of("memory_forget")]

    first = forget_hash()
    assert first and first == forget_hash()


def test_renew_on_inject_used_touches_only_what_the_answer_drew_on(tmp_path: Path) -> None:
    arm = AmnesiaArm(renew_on_inject="used")
    log, _ = _started(arm, tmp_path)
    arm.remember(RememberSpec("The verification drink is oolong."))
    arm.remember(RememberSpec("The standup is at nine."))
    context = arm.memory_context("What is the drink?", [])
    assert log.of("memory_touch") == []
    arm.observe_answer("What is the drink?", "oolong", context)
    touches = log.of("memory_touch")
    assert [(t["item_id"], t["reason"]) for t in touches] == [("m-0001", "answer")]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"colour": "red"}, "unknown option 'colour'"),
        ({"budget": -1}, "budget"),
        ({"curve": "zigzag"}, "default_curve"),
        ({"db_path": "/tmp/x.db"}, "unknown option 'db_path'"),
    ],
)
def test_bad_options_are_refused_at_construction(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        AmnesiaArm(**options)


def test_aliases_and_budget_option(tmp_path: Path) -> None:
    arm = AmnesiaArm(ttl="7d", curve="linear", k=4, budget=0)
    assert (arm.config.default_ttl, arm.config.default_curve, arm.config.decay_k) == (604800.0, "linear", 4.0)
    _started(arm, tmp_path)
    arm.remember(RememberSpec("Anything at all."))
    assert arm.memory_context("q", []).block == ""


def test_no_memory_injects_nothing(write_tasks, run_ok, read_log, small_set_tasks, tmp_path: Path) -> None:
    folder = write_tasks(tmp_path / "tasks", small_set_tasks)
    run_ok(folder, tmp_path / "run", arms="no-memory")
    for task in small_set_tasks:
        records = _records(read_log, tmp_path / "run", "no-memory", task["id"])
        assert all(r["block"] == "" and r["tokens"] == 0 for r in records if r["type"] == "injection")
        assert not [r for r in records if r["type"].startswith("memory_")]
