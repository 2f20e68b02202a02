"""Team agents in a replay (seed §6.10, tasks/README.md "Team agents"): the amnesia engine's arms share a
team's note among its members only and drop it when the team is disposed; an arm that does not know teams
sees each team agent as a sub-agent. Both shipped team tasks, replayed in process with the scripted model."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from arms.base import arm_session
from arms.registry import create_arm
from runners.armconfig import ArmSpec
from runners.models.scripted import ScriptedModel
from runners.replay import PairJob, replay_pair
from tasks.load import load_tasks
from tasks.spec import Task

ROOT = Path(__file__).resolve().parents[2]
TEAM_TASKS = [
    ROOT / "tasks" / "mixed" / "team-migration-schema.yaml",
    ROOT / "tasks" / "mixed" / "zh-team-review-branch.yaml",
]
# the teammate's probe first; then another team (and, in the Chinese task, a sub-agent), the main agent or a
# team of the same name formed after the disposal, each of which must not know the note
KNOWS_TEAMS = ["correct"] * 4
SEES_A_SUB_AGENT = ["abstained"] + ["correct"] * 3  # the teammate cannot read the note: nothing leaks


def probes(task: Task, arm: str, tmp_path: Path) -> list[str]:
    log = tmp_path / f"{arm}.jsonl"
    job = PairJob(ArmSpec(arm, arm), task, seed=0, log_path=log, workdir=tmp_path / arm, budget_tokens=2000)
    replay_pair(job, ScriptedModel())
    records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    return [record["classification"] for record in records if record["type"] == "probe"]


@pytest.mark.parametrize("path", TEAM_TASKS, ids=lambda path: path.stem)
def test_team_tasks_per_arm(path: Path, tmp_path: Path) -> None:
    (task,) = load_tasks(path)
    assert probes(task, "amnesia", tmp_path) == KNOWS_TEAMS
    assert probes(task, "full-memory", tmp_path) == KNOWS_TEAMS
    assert probes(task, "retrieval", tmp_path) == SEES_A_SUB_AGENT
    assert probes(task, "no-memory", tmp_path) == SEES_A_SUB_AGENT
    # the disposal is what keeps the note from the team formed later: without it, that team reads it
    kept = dataclasses.replace(
        task, sessions=tuple(dataclasses.replace(s, ends_team=False) for s in task.sessions)
    )
    assert probes(kept, "amnesia", tmp_path) == ["correct"] * 3 + ["poisoned"]


def test_an_arm_that_does_not_know_teams_sees_a_team_agent_as_a_sub_agent() -> None:
    (task,) = load_tasks(TEAM_TASKS[0])
    session = task.sessions[0]
    assert (session.agent, session.team) == ("team", "atlas")
    knows, does_not = create_arm("amnesia", {}), create_arm("retrieval", {})
    assert dataclasses.astuple(arm_session(knows, 0, session)) == (0, "s0", "team", 0.0, "atlas", False)
    assert dataclasses.astuple(arm_session(does_not, 0, session)) == (0, "s0", "sub", 0.0, None, False)


def test_the_kit_gives_a_team_agent_its_session_and_its_team_only() -> None:
    from arms.arm_kit import scope_for, visible_to
    from arms.base import SessionInfo
    from tasks.spec import RememberSpec

    teammate = SessionInfo(1, "s1", "team", 0.0, team="atlas")
    assert scope_for(RememberSpec("schema kestrel"), teammate) == ("team", "atlas")
    assert scope_for(RememberSpec("scratch", scope="session"), teammate) == ("session", "s1")
    sees = {
        (scope, owner): visible_to(scope, owner, teammate)
        for scope, owner in [("team", "atlas"), ("team", "docs"), ("session", "s1"), ("session", "s2")]
    }
    assert sees == {
        ("team", "atlas"): True,
        ("team", "docs"): False,
        ("session", "s1"): True,
        ("session", "s2"): False,
    }
    assert not visible_to("workspace", None, teammate)
    main = SessionInfo(2, "atlas", "main", 0.0)  # a session named like the team sees nothing of the team's
    assert not visible_to("team", "atlas", main) and visible_to("session", "atlas", main)


def test_mcp_memory_knows_teams_only_through_our_own_server() -> None:
    # our server has team callers (`mcp --team`); server-memory has no scopes: teammates are sub-agents
    assert create_arm("mcp-memory", {"profile": "amnesia"}).TEAMS
    assert not create_arm("mcp-memory", {}).TEAMS
