"""Fixtures shared by several test folders: the small task set (tests/data/small_set.yaml), writing task sets,
running `amnesia-bench run` quietly or killing it mid-run, and reading the session logs of a run folder.

The helper fixtures return plain functions and are session-scoped: they hold no state, and hypothesis tests
may only use fixtures that outlive one example."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from runners.models.stub_server import Reply, StubServer

REPO_ROOT = Path(__file__).resolve().parent.parent
SMALL_SET_FILE = Path(__file__).resolve().parent / "data" / "small_set.yaml"
THREE_ARMS = "no-memory,full-memory,amnesia"

TaskDict = dict[str, Any]
RunLogs = dict[str, list[dict[str, Any]]]


# ---- the small task set ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def small_set_tasks() -> list[TaskDict]:
    """Four hand-written tasks (fact change, preference, sub-agent scratch, Chinese fact change), as dicts."""
    return yaml.safe_load(SMALL_SET_FILE.read_text(encoding="utf-8"))


def _task(tasks: list[TaskDict], task_id: str) -> TaskDict:
    return next(task for task in tasks if task["id"] == task_id)


@pytest.fixture(scope="session")
def drink_task(small_set_tasks: list[TaskDict]) -> TaskDict:
    """The verification drink changes from lapsang (1d ttl) to oolong; probed on day 3."""
    return _task(small_set_tasks, "harmful/verification-drink")


@pytest.fixture(scope="session")
def preference_task(small_set_tasks: list[TaskDict]) -> TaskDict:
    """A French-answers preference written on day 0, probed on day 2."""
    return _task(small_set_tasks, "helpful/answer-language")


@pytest.fixture(scope="session")
def subagent_task(small_set_tasks: list[TaskDict]) -> TaskDict:
    """A sub-agent's scratch note (port 7311) that the main agent must never see."""
    return _task(small_set_tasks, "harmful/sub-scratch")


# ---- writing task sets and running them --------------------------------------------------------------------


@pytest.fixture(scope="session")
def write_tasks() -> Callable[..., Path]:
    """`write_tasks(folder, tasks, name="tasks.yaml") -> folder`: the task dicts as one YAML file."""

    def write(folder: Path, tasks: list[TaskDict], name: str = "tasks.yaml") -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        text = yaml.safe_dump(tasks, allow_unicode=True, sort_keys=False)
        (folder / name).write_text(text, encoding="utf-8")
        return folder

    return write


@pytest.fixture(scope="session")
def run_args() -> Callable[..., list[str]]:
    """`run_args(tasks, out, *extra, arms=THREE_ARMS)`: `amnesia-bench run` arguments for a quiet test run
    without the report step."""

    def args(tasks: Path, out: Path, *extra: str, arms: str = THREE_ARMS) -> list[str]:
        quiet = ["--no-progress", "--no-report"]
        return ["run", *quiet, "--tasks", str(tasks), "--arms", arms, "--out", str(out), *extra]

    return args


@pytest.fixture(scope="session")
def run_ok(run_args: Callable[..., list[str]]) -> Callable[..., None]:
    """`run_ok(tasks, out, *extra, arms=THREE_ARMS)`: run through typer's CliRunner and insist on success."""

    def run(tasks: Path, out: Path, *extra: str, arms: str = THREE_ARMS) -> None:
        from amnesia_bench.cli import app

        result = CliRunner().invoke(app, run_args(tasks, out, *extra, arms=arms))
        assert result.exit_code == 0, result.output

    return run


@pytest.fixture(scope="session")
def run_cli_killed_after() -> Callable[..., int]:
    """`run_cli_killed_after(args, records, timeout=300) -> exit status`: run `amnesia-bench ARGS` in a
    process group of its own; the process (main or worker) that writes its `records`-th log record tears
    that record and SIGKILLs the whole group, as a crash would (tests/kill_after_records.py): a deterministic
    kill point, not a timing race. Returns -SIGKILL, or 0 if the run wrote fewer records."""

    def run(args: list[str], records: int, timeout: float = 300) -> int:
        here = Path(__file__).resolve().parent
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
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

    return run


# ---- reading logs ------------------------------------------------------------------------------------------


def _read_log(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")  # split on "\n" only: U+0085/U+2028 may sit inside a JSON line
    return [json.loads(line) for line in text.removesuffix("\n").split("\n") if line]


def _strip_wall(record: Any) -> Any:
    """The record without `wall*` keys, at any depth."""
    if isinstance(record, dict):
        return {k: _strip_wall(v) for k, v in record.items() if not k.startswith("wall")}
    if isinstance(record, list):
        return [_strip_wall(v) for v in record]
    return record


@pytest.fixture(scope="session")
def read_log() -> Callable[[Path], list[dict[str, Any]]]:
    """`read_log(path)`: the records of one session log, as raw dicts."""
    return _read_log


@pytest.fixture(scope="session")
def run_logs() -> Callable[[Path], RunLogs]:
    """`run_logs(run_dir)`: {relative log path: records without wall* fields} for every log of a run."""

    def logs_of(run_dir: Path) -> RunLogs:
        logs = run_dir / "logs"
        return {str(p.relative_to(logs)): _strip_wall(_read_log(p)) for p in sorted(logs.rglob("*.jsonl"))}

    return logs_of


# ---- a local OpenAI-compatible endpoint --------------------------------------------------------------


@pytest.fixture
def openai_stub() -> Iterator[StubServer]:
    """A started stub chat-completions server on 127.0.0.1 (runners.models.stub_server), stopped after."""
    with StubServer() as stub:
        yield stub


@pytest.fixture(scope="session")
def stub_reply() -> type[Reply]:
    """The `Reply` class, to script the stub server's answers."""
    return Reply


# ---- isolation ------------------------------------------------------------------------------------------


@pytest.fixture(scope="session", autouse=True)
def _private_audit_keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """SQLite stores keep their audit keys under $XDG_CONFIG_HOME (amnesia.keys): the session writes them
    to a folder of its own instead of the user's ~/.config, with no audit key taken from the environment."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
        patch.delenv("AMNESIA_AUDIT_KEY", raising=False)
        patch.delenv("AMNESIA_AUDIT_KEY_FILE", raising=False)
        yield
