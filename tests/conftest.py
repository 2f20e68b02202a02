"""Fixtures shared by several test folders: the small task set (tests/data/small_set.yaml) and the compaction
tasks (tests/data/compaction_tasks.yaml), writing task sets,
running `amnesia-bench run` quietly or killing it mid-run, and reading the session logs of a run folder.

The helper fixtures return plain functions and are session-scoped: they hold no state, and hypothesis tests
may only use fixtures that outlive one example."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import hypothesis
import pytest
import yaml
from typer.testing import CliRunner

from runners.models.stub_server import Reply, StubServer

REPO_ROOT = Path(__file__).resolve().parent.parent
SMALL_SET_FILE = Path(__file__).resolve().parent / "data" / "small_set.yaml"
COMPACTION_FILE = Path(__file__).resolve().parent / "data" / "compaction_tasks.yaml"
HOOK = Path(__file__).resolve().parent / "kill_after_records.py"  # crashes or interrupts a run at a record
THREE_ARMS = "no-memory,full-memory,amnesia"

TaskDict = dict[str, Any]
RunLogs = dict[str, list[dict[str, Any]]]


# ---- report figures ----------------------------------------------------------------------------------------

# Reports built through the CLI (`run`, `report`) skip their figures (`--no-figures`, by its environment
# variable): matplotlib was about 40% of the CPU time of the tests that build reports. The tests of a report's
# figures pass `--figures`; the API's build_report draws unless told not to.
os.environ.setdefault("AMNESIA_REPORT_FIGURES", "0")


# ---- hypothesis example counts -----------------------------------------------------------------------------

# The README's `pytest` runs each property test with EXAMPLE_SHARE of the examples its settings name (at least
# MIN_EXAMPLES), so the whole suite fits 90 s on 2 cores; CI (.ci/run) sets AMNESIA_FULL_EXAMPLES=1 and runs
# every property test with its full count. The share applies to the count each test chose for itself.
EXAMPLE_SHARE = 1 / 4
MIN_EXAMPLES = 10

# No per-example deadline and no too-slow health check: hypothesis's default deadline (200 ms) failed tests on
# a loaded machine (two workers, CI beside other jobs) whose only fault was time. What a test checks is its
# assertions.
hypothesis.settings.register_profile(
    "amnesia", deadline=None, suppress_health_check=[hypothesis.HealthCheck.too_slow]
)
hypothesis.settings.load_profile("amnesia")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if os.environ.get("AMNESIA_FULL_EXAMPLES") == "1":
        return
    for item in items:
        test = getattr(item, "function", None)
        if not getattr(test, "is_hypothesis_test", False):
            continue
        chosen = getattr(test, "_hypothesis_internal_use_settings", None) or hypothesis.settings.default
        if chosen.max_examples <= MIN_EXAMPLES:
            continue
        share = max(MIN_EXAMPLES, round(chosen.max_examples * EXAMPLE_SHARE))
        # hypothesis reads the settings off the test function when it runs
        test._hypothesis_internal_use_settings = hypothesis.settings(chosen, max_examples=share)


# ---- the small task set ------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def small_set_tasks() -> list[TaskDict]:
    """Four hand-written tasks (fact change, preference, sub-agent scratch, Chinese fact change), as dicts."""
    return yaml.safe_load(SMALL_SET_FILE.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def compaction_tasks() -> list[TaskDict]:
    """Two tasks with context compaction (tests/data/compaction_tasks.yaml): an event that cuts a value only
    said in conversation, a sub-agent's compaction to nothing, and an automatic one at a token threshold."""
    return yaml.safe_load(COMPACTION_FILE.read_text(encoding="utf-8"))


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
def small_run(run_ok: Callable[..., None]) -> Callable[..., Path]:
    """`small_run(out, *extra, arms="no-memory,amnesia") -> out`: the small task set run quietly into `out`
    (no report), through typer's CliRunner, insisting on success."""

    def run(out: Path, *extra: str, arms: str = "no-memory,amnesia") -> Path:
        run_ok(SMALL_SET_FILE, out, *extra, arms=arms)
        return out

    return run


@pytest.fixture(scope="session")
def write_generated(write_tasks: Callable[..., Path]) -> Callable[..., Path]:
    """`write_generated(folder, per_group, seed) -> folder`: `per_group` generated tasks of each group
    (tasks.generate), as one YAML file in `folder`."""

    def write(folder: Path, per_group: int, seed: int) -> Path:
        from tasks.generate import generate

        generated = [
            t for group in ("helpful", "harmful", "mixed") for t in generate(group, per_group, seed=seed)
        ]
        return write_tasks(folder, generated)

    return write


def _run_in_own_group(
    command: list[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    """Run `command` in a process group of its own (the hook signals the whole group); a run still alive at
    `timeout` is killed with its group, never left behind."""
    process = subprocess.Popen(
        command, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    return subprocess.CompletedProcess(command, process.returncode, stdout, stderr)


@pytest.fixture(scope="session")
def run_cli_killed_after() -> Callable[..., int]:
    """`run_cli_killed_after(args, records, timeout=300) -> exit status`: run `amnesia-bench ARGS` in a
    process group of its own; the process (main or worker) that writes its `records`-th log record tears
    that record and SIGKILLs the whole group, as a crash would (tests/kill_after_records.py): a deterministic
    kill point, not a timing race. Returns -SIGKILL, or 0 if the run wrote fewer records."""

    def run(args: list[str], records: int, timeout: float = 300) -> int:
        env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
        command = [sys.executable, str(HOOK), str(records), *args]
        result = _run_in_own_group(command, env, timeout)
        assert result.returncode in (0, -signal.SIGKILL), result.stderr[-2000:]
        return result.returncode

    return run


@pytest.fixture(scope="session")
def run_cli_interrupted_after() -> Callable[..., subprocess.CompletedProcess[str]]:
    """`run_cli_interrupted_after(args, records, timeout=300) -> completed process`: run `amnesia-bench ARGS`
    in a process group of its own; the first process (main or worker) to write its `records`-th log record
    sends SIGINT to the whole group, as Ctrl-C in a terminal does (tests/kill_after_records.py with
    AMNESIA_TEST_SIGNAL=INT): a deterministic point, not a timing race."""

    def run(args: list[str], records: int, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        with tempfile.TemporaryDirectory() as scratch:
            env = {**os.environ, "PYTHONPATH": str(REPO_ROOT), "AMNESIA_TEST_SIGNAL": "INT",
                   "AMNESIA_TEST_SIGNAL_ONCE": str(Path(scratch) / "signalled")}  # fmt: skip
            return _run_in_own_group([sys.executable, str(HOOK), str(records), *args], env, timeout)

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


# ---- public-dataset fixtures (invented text in each dataset's schema, never the datasets' own) -------------


def _locomo_sample() -> dict[str, Any]:
    """A two-session conversation in LoCoMo's per-file schema (flat), plus a session with a date but no
    turns (as the real files have), a merged and a malformed evidence string, and an adversarial question."""
    return {
        "speaker_a": "Ada",
        "speaker_b": "Ben",
        "session_1_date_time": "1:00 pm on 1 March, 2023",
        "session_1": [
            {"speaker": "Ada", "dia_id": "D1:1", "text": "My tortoise Quillon turned forty today."},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "I finally bought a bassoon."},
            {"speaker": "Ben", "dia_id": "D1:3", "text": "Lessons start on Monday."},
        ],
        "session_2_date_time": "10:00 am on 20 March, 2023",
        "session_2": [
            {"speaker": "Ada", "dia_id": "D2:1", "text": "We moved to Tromsø last week!"},
            {"speaker": "Ben", "dia_id": "D2:2", "text": "Send pictures of the fjord."},
        ],
        "session_3_date_time": "9:00 am on 2 April, 2023",
        "session_1_observation": {
            "Ada": [["Ada has a tortoise named Quillon.", "D1:1"]],
            "Ben": [["Ben bought a bassoon and starts lessons on Monday.", ["D1:2", "D1:3"]]],
        },
        "session_2_observation": {"Ada": [["Ada moved to Tromsø in March 2023.", "D2:1"]]},
        "qa": [
            {
                "question": "What is the name of Ada's tortoise?",
                "answer": "Quillon",
                "evidence": ["D1:1"],
                "category": 4,
            },
            {"question": "When did Ada move?", "answer": "March 2023", "evidence": ["D:2:1"], "category": 2},
            {
                "question": "Which instrument does Ben play?",
                "answer": "bassoon",
                "evidence": ["D1:2; D1:3"],
                "category": 1,
            },
            {
                "question": "What did Ben ask for?",
                "answer": "pictures of the fjord",
                "evidence": ["D2:2", "D"],
                "category": 3,
            },
            {
                "question": "What is Ben's tortoise called?",
                "adversarial_answer": "Quillon",
                "evidence": ["D1:1"],
                "category": 5,
            },
        ],
    }


@pytest.fixture(scope="session")
def locomo_sample() -> Callable[[], dict[str, Any]]:
    """`locomo_sample() -> dict`: a fresh invented conversation in LoCoMo's per-file schema."""
    return _locomo_sample


@pytest.fixture(scope="session")
def write_locomo() -> Callable[..., Path]:
    """`write_locomo(folder, form="folder"|"release") -> path`: the invented conversation as the per-file
    folder (`7.json`, `8.json`: two conversations) or as the original release's one `locomo10.json`
    (a list of samples with `sample_id`, the dialog under `conversation`, observations under
    `observation`)."""

    def write(folder: Path, form: str = "folder") -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        samples = {"7": _locomo_sample(), "8": _locomo_sample()}
        samples["8"]["speaker_a"] = "Cleo"
        if form == "folder":
            for stem, sample in samples.items():
                (folder / f"{stem}.json").write_text(json.dumps(sample), encoding="utf-8")
            return folder
        release = []
        for stem, sample in samples.items():
            observation = {k: sample.pop(k) for k in list(sample) if k.endswith("_observation")}
            qa = sample.pop("qa")
            release.append(
                {"sample_id": f"conv-{stem}", "conversation": sample, "observation": observation, "qa": qa}
            )
        path = folder / "locomo10.json"
        path.write_text(json.dumps(release), encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def longmemeval_items() -> Callable[[], list[dict[str, Any]]]:
    """`longmemeval_items() -> list`: three invented LongMemEval instances — a knowledge update (a 5k best
    time 27:40 -> 25:10, with an unrelated session between), an abstention question, and a single-session
    one."""

    def items() -> list[dict[str, Any]]:
        def turn(role: str, content: str, has_answer: bool = False) -> dict[str, Any]:
            return {"role": role, "content": content, **({"has_answer": True} if has_answer else {})}

        update = {
            "question_id": "ku-1",
            "question_type": "knowledge-update",
            "question": "What is my personal best for the 5k?",
            "answer": "25:10",
            "question_date": "2023/03/10 (Fri) 08:00",
            "haystack_session_ids": ["s-a", "s-b", "s-c"],
            "haystack_dates": ["2023/01/05 (Thu) 09:00", "2023/02/01 (Wed) 12:00", "2023/03/02 (Thu) 18:30"],
            "haystack_sessions": [
                [
                    turn("user", "My personal best for the 5k is 27:40.", True),
                    turn("assistant", "Nice pace!"),
                ],
                [turn("user", "I took up kayaking in 2 lakes."), turn("assistant", "Sounds fun.")],
                [
                    turn("user", "New personal best on the 5k: 25:10!", True),
                    turn("assistant", "Congratulations!"),
                ],
            ],
            "answer_session_ids": ["s-a", "s-c"],
        }
        abstain = {
            "question_id": "ss-2_abs",
            "question_type": "single-session-user",
            "question": "What is the name of my cat?",
            "answer": "You did not mention a cat.",
            "question_date": "2023/02/02 (Thu) 10:00",
            "haystack_session_ids": ["s-d"],
            "haystack_dates": ["2023/02/01 (Wed) 09:00"],
            "haystack_sessions": [
                [turn("user", "My dog is called Pemberton."), turn("assistant", "Cute name.")]
            ],
            "answer_session_ids": ["s-d"],
        }
        single = {
            "question_id": "ss-3",
            "question_type": "single-session-user",
            "question": "What is my dog called?",
            "answer": "Pemberton",
            "question_date": "2023/02/02 (Thu) 10:00",
            "haystack_session_ids": ["s-d"],
            "haystack_dates": ["2023/02/01 (Wed) 09:00"],
            "haystack_sessions": [
                [turn("user", "My dog is called Pemberton.", True), turn("assistant", "Cute.")]
            ],
            "answer_session_ids": ["s-d"],
        }
        return [update, abstain, single]

    return items
