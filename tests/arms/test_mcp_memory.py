"""`mcp-memory` against real MCP servers over stdio: the official npm server-memory (installed into a
temporary prefix), our own `dsh-memory-forget mcp` (same probe results as the in-process `amnesia` arm), a
YAML profile, and the per-pair failures (no server, a missing tool, a server that never answers)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from amnesia_bench.cli import app
from arms.mcp_profiles import load_profile
from arms.registry import create_arm
from tasks.errors import ArmConfigError

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "@modelcontextprotocol/server-memory"
# One task of each kind the arm maps: plain writes and probes, a forget by key, a sub-agent's session memory
# and a sub-agent's workspace write.
TASKS = (
    "mixed/research-subagent-abstain",
    "helpful/ledger-split-task-state",
    "mixed/grant-report-forget-and-context",
    "harmful/subagent-db-exploration",
)


@pytest.fixture(scope="session")
def server_memory(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The npm server-memory binary, installed into a temporary prefix; a skip naming why when npm is absent
    or the install fails, which AMNESIA_REQUIRE_NPM=1 (CI) turns into a failure."""
    reason = None
    prefix = tmp_path_factory.mktemp("npm")
    if shutil.which("npm") is None:
        reason = "npm is not installed"
    else:
        done = subprocess.run(
            ["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund", PACKAGE],
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        if done.returncode != 0:
            lines = done.stderr.strip().splitlines()
            reason = f"npm install {PACKAGE} failed: {lines[-1] if lines else done.returncode}"
    if reason is not None:
        if os.environ.get("AMNESIA_REQUIRE_NPM") == "1":
            pytest.fail(f"AMNESIA_REQUIRE_NPM=1 but {reason}", pytrace=False)
        pytest.skip(reason)
    return str(prefix / "node_modules" / ".bin" / "mcp-server-memory")


def run(
    out: Path,
    arms: str,
    *options: str,
    tasks: tuple[str, ...] = TASKS,
    exit_code: int = 0,
    output: list[str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    """`amnesia-bench run` on `tasks`; (arm/task) -> the pair's records. `output` gets the CLI's lines."""
    args = [
        "run",
        "--tasks",
        str(ROOT / "tasks"),
        "--arms",
        arms,
        "--out",
        str(out),
        "--no-report",
        "--no-progress",
    ]
    for task in tasks:
        args += ["--task-id", task]
    for option in options:
        args += ["--set", option]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == exit_code, result.output
    if output is not None:
        output += result.output.splitlines()
    logs = {}
    for path in sorted((out / "logs").glob("*/*.jsonl")):
        logs[f"{path.parent.name}/{path.stem}"] = [json.loads(line) for line in path.read_text().splitlines()]
    return logs


def of_type(log: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [record for record in log if record["type"] == kind]


def test_server_memory_runs_tasks_end_to_end_and_deletes_what_is_forgotten(tmp_path, server_memory):
    logs = run(tmp_path / "run", "mcp-memory,full-memory", f"mcp-memory.command={server_memory}")
    for task in TASKS:
        log = logs[f"mcp-memory/{task.replace('/', '__')}"]
        assert log[-1]["type"] == "task_end", of_type(log, "pair_error")
        calls = of_type(log, "arm_call")
        assert calls[0]["method"] == "initialize" and "create_entities" in calls[0]["result"]
        assert {"create_entities", "read_graph"} <= {call["name"] for call in calls}
        assert not any(call["error"] for call in calls)
        # server-memory keeps everything, as full-memory does: the same memories reach the prompt (newest
        # first)
        full = logs[f"full-memory/{task.replace('/', '__')}"]
        for mine, theirs in zip(of_type(log, "injection"), of_type(full, "injection"), strict=True):
            assert sorted(_contents(mine["block"])) == sorted(_contents(theirs["block"]))
            written = [float(age) for age in re.findall(r"written (\d+)s ago", mine["block"])]
            assert written == sorted(written)
    # the forgotten budget figure is gone from the server's own file; the funder is still there
    graph = (
        tmp_path / "run" / "work" / "mcp-memory" / "mixed__grant-report-forget-and-context" / "memory.jsonl"
    )
    raw = graph.read_bytes()
    assert b"Wellcome" in raw and b"4200" not in raw
    sub = logs["mcp-memory/mixed__research-subagent-abstain"]
    assert any(r["reason"] == "agent-disposed" for r in of_type(sub, "memory_forget"))


def _contents(block: str) -> list[str]:
    return [line.rsplit(" · ", 1)[-1] for line in block.splitlines() if line.startswith("- [")]


# A sample for equality (two tasks, as many servers as before): a sub-agent's session memory, and the user's
# writes beside a web page's untrusted one (`source: auto`), which must stay marked and unable to replace the
# user's memory over the wire too.
EQUAL_SAMPLE = (TASKS[0], "harmful/webhook-poisoned-readme")


def test_amnesia_profile_gives_the_in_process_arms_probe_results(tmp_path):
    logs = run(tmp_path / "run", "mcp-memory,amnesia", "mcp-memory.profile=amnesia", tasks=EQUAL_SAMPLE)
    for task in EQUAL_SAMPLE:
        name = task.replace("/", "__")
        over_mcp, in_process = logs[f"mcp-memory/{name}"], logs[f"amnesia/{name}"]
        assert over_mcp[-1]["type"] == "task_end", of_type(over_mcp, "pair_error")
        assert [p["classification"] for p in of_type(over_mcp, "probe")] == [
            p["classification"] for p in of_type(in_process, "probe")
        ]
        # the same writes, with the ttl the server stored
        assert [(w["content"], w["ttl"], w["scope"]) for w in of_type(over_mcp, "memory_write")] == [
            (w["content"], w["ttl"], w["scope"]) for w in of_type(in_process, "memory_write")
        ]
        # as many items injected, each named by the server's id of a memory it wrote
        written = {w["item_id"] for w in of_type(over_mcp, "memory_write")}
        injected = [[item["id"] for item in i["items"]] for i in of_type(over_mcp, "injection")]
        assert [len(ids) for ids in injected] == [len(i["items"]) for i in of_type(in_process, "injection")]
        assert {item for ids in injected for item in ids} <= written
        # the same blocks, but for the ids (the server draws its own) and so the header's token count
        assert [_without_ids(i["block"]) for i in of_type(over_mcp, "injection")] == [
            _without_ids(i["block"]) for i in of_type(in_process, "injection")
        ]


def _without_ids(block: str) -> str:
    """The block with its ids, and the header's token count (which the ids' length changes), left out."""
    block = re.sub(r"\d+/(\d+) tokens\)", r"n/\1 tokens)", block)
    return re.sub(r"^- \[[^\]]+\]", "- [id]", block, flags=re.MULTILINE)


def test_a_yaml_profile_drives_a_server_with_no_code(tmp_path, server_memory):
    profile = tmp_path / "search.yaml"
    profile.write_text(
        f"command: {server_memory}\n"
        'env: {MEMORY_FILE_PATH: "{workdir}/graph.jsonl"}\n'
        'write: {tool: create_entities, arguments: {entities: [{name: "{id}", entityType: note, '
        'observations: ["{content}"]}]}}\n'
        'recall: {tool: search_nodes, arguments: {query: "{query}"}, items: entities, id: name, '
        "content: observations}\n"
        'forget: {tool: delete_entities, arguments: {entityNames: ["{id}"]}}\n'
    )
    logs = run(tmp_path / "run", "mcp-memory", f"mcp-memory.profile={profile}", tasks=TASKS[1:2])
    log = logs["mcp-memory/helpful__ledger-split-task-state"]
    assert log[-1]["type"] == "task_end"
    searches = [c for c in of_type(log, "arm_call") if c["name"] == "search_nodes"]
    assert [c["arguments"]["query"] for c in searches] == [t["user"] for t in of_type(log, "turn")]
    assert (
        tmp_path / "run" / "work" / "mcp-memory" / "helpful__ledger-split-task-state" / "graph.jsonl"
    ).exists()


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("write: {tool: x}\nrecall: {tool: y}\n", "forget"),
        ("write: {tool: x}\nrecall: {tool: y, items: 3}\nforget: {tool: z}\n", "recall.items"),
        ("write: {tool: ''}\nrecall: {tool: y}\nforget: {tool: z}\n", "write.tool"),
        ("write: {tool: x}\nrecall: {tool: y}\nforget: {tool: z}\ncolour: red\n", "colour"),
        ("write: [", "not a readable YAML profile"),
    ],
)
def test_a_bad_profile_is_a_one_line_error_naming_file_and_field(tmp_path, text, field):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ArmConfigError) as raised:
        load_profile(str(path))
    message = str(raised.value)
    assert "\n" not in message and str(path) in message and field in message


def test_bad_options_are_one_line_errors(tmp_path):
    bad = (
        {"profile": str(tmp_path / "absent.yaml")},
        {"timeout": 0},
        {"colour": 1},
        {"profile": "amnesia", "amnesia_config": str(tmp_path / "absent.yaml")},
        {"amnesia_config": __file__},  # only with profile amnesia
    )
    for options in bad:
        with pytest.raises(ArmConfigError) as raised:
            create_arm("mcp-memory", options)
        assert "\n" not in str(raised.value) and "mcp-memory" in str(raised.value)


SILENT = f"{sys.executable} -c 'import sys; sys.stdin.read()'"  # starts, reads, never answers


@pytest.mark.parametrize(
    ("options", "error"),
    [
        (["mcp-memory.command=/nonexistent/mcp-server"], "no program '/nonexistent/mcp-server'"),
        (["mcp-memory.profile=amnesia", "mcp-memory.command=/nonexistent/python"], "server did not start"),
        ([f"mcp-memory.command={SILENT}", "mcp-memory.timeout=0.5"], "TimeoutError"),
    ],
)
def test_a_failing_server_stops_its_pair_with_a_one_line_error_and_the_run_goes_on(tmp_path, options, error):
    output: list[str] = []
    logs = run(
        tmp_path / "run", "mcp-memory,no-memory", *options, tasks=TASKS[1:2], exit_code=1, output=output
    )
    failed = logs["mcp-memory/helpful__ledger-split-task-state"]
    assert failed[-1]["type"] == "pair_error" and error in failed[-1]["error"]
    assert "\n" not in failed[-1]["error"]
    # what failed is the arm's server, and the run's closing line says so (not "a model error")
    assert failed[-1]["cause"] == "arm"
    closing = [line for line in output if line.startswith("error: ")]
    assert closing == [
        "error: 1 of 2 pairs failed on an arm backend error (rerun with --resume to retry only those); "
        f"first: mcp-memory helpful/ledger-split-task-state: {failed[-1]['error']}"
    ]
    assert logs["no-memory/helpful__ledger-split-task-state"][-1]["type"] == "task_end"


def test_a_missing_tool_stops_the_pair_naming_the_tool(tmp_path, server_memory):
    profile = tmp_path / "wrong.yaml"
    profile.write_text(
        f"command: {server_memory}\nwrite: {{tool: create_entities}}\nrecall: {{tool: recall_everything}}\n"
        "forget: {tool: delete_entities}\n"
    )
    logs = run(tmp_path / "run", "mcp-memory", f"mcp-memory.profile={profile}", tasks=TASKS[1:2], exit_code=1)
    last = logs["mcp-memory/helpful__ledger-split-task-state"][-1]
    assert last["type"] == "pair_error" and "no tool 'recall_everything'" in last["error"]


def test_placeholders_are_filled_once_and_memories_read_from_the_answer():
    profile = load_profile("server-memory")
    arguments = profile.write.render(
        {"id": "mcp-0001", "content": "literally {id} and {query}", "kind": "fact"}
    )
    entity = arguments["entities"][0]
    assert entity == {
        "name": "mcp-0001",
        "entityType": "fact",
        "observations": ["literally {id} and {query}"],
    }
    answer = {"entities": [{"name": "mcp-0001", "observations": ["a", "b"]}, {"type": "relation"}]}
    assert profile.recall.memories(answer) == [("mcp-0001", "a b")]
    with pytest.raises(ValueError, match="no 'entities'"):
        profile.recall.memories({"nodes": []})


def test_a_recall_the_server_refuses_stops_the_pair(tmp_path, server_memory):
    profile = tmp_path / "refused.yaml"
    profile.write_text(
        f"command: {server_memory}\n"
        'env: {MEMORY_FILE_PATH: "{workdir}/graph.jsonl"}\n'
        'write: {tool: create_entities, arguments: {entities: [{name: "{id}", entityType: note, '
        'observations: ["{content}"]}]}}\n'
        'recall: {tool: open_nodes, arguments: {names: "{query}"}, items: entities, id: name}\n'
        'forget: {tool: delete_entities, arguments: {entityNames: ["{id}"]}}\n'
    )
    logs = run(tmp_path / "run", "mcp-memory", f"mcp-memory.profile={profile}", tasks=TASKS[1:2], exit_code=1)
    log = logs["mcp-memory/helpful__ledger-split-task-state"]
    assert log[-1]["type"] == "pair_error" and "open_nodes" in log[-1]["error"]
    assert "\n" not in log[-1]["error"] and of_type(log, "arm_call")[-1]["error"] is True


def test_an_engine_config_reaches_the_server_full_memory_over_mcp_is_full_memory(tmp_path):
    config = tmp_path / "keep-all.yaml"
    config.write_text("auto_expire: false\n")  # full-memory's one switch
    tasks = ("helpful/guest-wifi-short-ttl",)  # a ttl too short: amnesia loses the fact, full-memory keeps it
    options = ("mcp-memory.profile=amnesia", f"mcp-memory.amnesia_config={config}")
    logs = run(tmp_path / "run", "mcp-memory,full-memory,amnesia", *options, tasks=tasks)
    name = "helpful__guest-wifi-short-ttl"
    arms = ("mcp-memory", "full-memory", "amnesia")
    outcomes = {arm: [p["classification"] for p in of_type(logs[f"{arm}/{name}"], "probe")] for arm in arms}
    assert outcomes["mcp-memory"] == outcomes["full-memory"] != outcomes["amnesia"]
    assert [_without_ids(i["block"]) for i in of_type(logs[f"mcp-memory/{name}"], "injection")] == [
        _without_ids(i["block"]) for i in of_type(logs[f"full-memory/{name}"], "injection")
    ]
