"""Shared helpers for the runner/arm tests: small task sets written from dicts, log reading, comparison."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

DRINK_TASK: dict[str, Any] = {
    "id": "harmful/verification-drink",
    "group": "harmful",
    "category": "fact-change",
    "description": "The verification drink changes from lapsang to oolong.",
    "sessions": [
        {
            "at": "0s",
            "turns": [
                {
                    "user": "Remember: the verification drink is lapsang.",
                    "remember": {"content": "The verification drink is lapsang.", "ttl": "1d"},
                }
            ],
        },
        {
            "at": "1h",
            "turns": [
                {
                    "user": "Update: we switched the verification drink to oolong.",
                    "remember": {"content": "The verification drink is oolong.", "ttl": "30d"},
                }
            ],
        },
        {
            "at": "3d",
            "turns": [
                {
                    "user": "What is the verification drink?",
                    "probe": {"expect": ["oolong"], "stale": ["lapsang"]},
                }
            ],
        },
    ],
}

PREFERENCE_TASK: dict[str, Any] = {
    "id": "helpful/answer-language",
    "group": "helpful",
    "category": "preference-continuation",
    "description": "A language preference carries over to a later session.",
    "sessions": [
        {
            "at": "0s",
            "turns": [
                {
                    "user": "Please always answer in French.",
                    "remember": {
                        "content": "The user wants answers in French.",
                        "kind": "preference",
                        "ttl": "30d",
                    },
                },
                {"user": "Thanks."},
            ],
        },
        {
            "at": "2d",
            "turns": [{"user": "Which language should you answer in?", "probe": {"expect": ["French"]}}],
        },
    ],
}

SUBAGENT_TASK: dict[str, Any] = {
    "id": "harmful/sub-scratch",
    "group": "harmful",
    "category": "subagent-leak",
    "description": "A sub-agent's scratch note must not reach the main agent.",
    "sessions": [
        {
            "at": "0s",
            "agent": "sub",
            "turns": [
                {
                    "user": "Scratch: the temporary port is 7311.",
                    "remember": {"content": "Temporary port is 7311.", "ttl": "7d"},
                },
                {"user": "Which port?", "probe": {"expect": ["7311"]}},
            ],
        },
        {
            "at": "1m",
            "turns": [{"user": "Which port should I use?", "probe": {"stale": ["7311"], "abstain": True}}],
        },
    ],
}

CHINESE_TASK: dict[str, Any] = {
    "id": "mixed/zh-drink",
    "group": "mixed",
    "category": "fact-change",
    "description": "验证饮品从正山小种改为乌龙茶。",
    "lang": "zh",
    "sessions": [
        {
            "at": "0s",
            "turns": [
                {
                    "user": "记住：验证饮品是正山小种。",
                    "remember": {"content": "验证饮品是正山小种。", "ttl": "2h"},
                }
            ],
        },
        {
            "at": "1h",
            "turns": [
                {
                    "user": "更新：验证饮品改成乌龙茶。",
                    "remember": {"content": "验证饮品是乌龙茶。", "ttl": "30d"},
                }
            ],
        },
        {
            "at": "1d",
            "turns": [{"user": "验证饮品是什么？", "probe": {"expect": ["乌龙茶"], "stale": ["正山小种"]}}],
        },
    ],
}

SMALL_SET = [DRINK_TASK, PREFERENCE_TASK, SUBAGENT_TASK, CHINESE_TASK]


THREE_ARMS = "no-memory,full-memory,amnesia"


def run_args(tasks: Path, out: Path, *extra: str, arms: str = THREE_ARMS) -> list[str]:
    """`amnesia-bench run` arguments for a quiet test run without the report step."""
    quiet = ["--no-progress", "--no-report"]
    return ["run", *quiet, "--tasks", str(tasks), "--arms", arms, "--out", str(out), *extra]


def run_ok(tasks: Path, out: Path, *extra: str, arms: str = THREE_ARMS) -> None:
    """Run through typer's CliRunner and insist on success."""
    from amnesia_bench.cli import app

    result = CliRunner().invoke(app, run_args(tasks, out, *extra, arms=arms))
    assert result.exit_code == 0, result.output


def run_cli_killed_after(args: list[str], records: int, timeout: float = 300) -> int:
    """Run `amnesia-bench ARGS` in a process group of its own; the process (main or worker) that writes its
    `records`-th log record tears that record and SIGKILLs the whole group, as a crash would
    (tests/kill_after_records.py). Returns the exit status: -SIGKILL, or 0 if the run wrote fewer records."""
    here = Path(__file__).resolve().parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(here.parent), str(here)])}
    command = [sys.executable, str(here / "kill_after_records.py"), str(records), *args]
    process = subprocess.Popen(
        command, env=env, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        _, stderr = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:  # hung: never leave it behind
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode in (0, -signal.SIGKILL), stderr.decode(errors="replace")[-2000:]
    return process.returncode


def write_tasks(folder: Path, tasks: list[dict[str, Any]], name: str = "tasks.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(yaml.safe_dump(tasks, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return folder


def read_log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def strip_wall(record: Any) -> Any:
    """The record without `wall*` keys, at any depth."""
    if isinstance(record, dict):
        return {k: strip_wall(v) for k, v in record.items() if not k.startswith("wall")}
    if isinstance(record, list):
        return [strip_wall(v) for v in record]
    return record


def run_logs(run_dir: Path) -> dict[str, list[dict[str, Any]]]:
    """{relative log path: records without wall* fields} for every log in a run folder."""
    logs = run_dir / "logs"
    return {str(p.relative_to(logs)): strip_wall(read_log(p)) for p in sorted(logs.rglob("*.jsonl"))}
