"""`langgraph-store`: LangGraph's own SqliteStore in a worker process under libfaketime. The store's
two clocks follow the simulated time, its TTL (default_ttl, refresh_on_read, sweep_ttl) decides what is
forgotten, the options come through `--set`, and failures stop only their pair. Time moves only through the
timestamp file: no test waits on the wall clock (the one timeout test waits at most its 0.5 s bound)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import arms.langgraph_store as langgraph_store
from amnesia_bench.cli import app
from arms.registry import create_arm
from runners.armconfig import comparable_arms
from tasks.errors import ArmConfigError
from tasks.spec import RememberSpec

DAY = 86400.0


def missing_requirement() -> str | None:
    """Why the arm cannot run here (one line naming what to install), or None."""
    if langgraph_store.faketime_library() is None:
        return "libfaketime is not installed (Debian package faketime: apt-get install faketime)"
    if not langgraph_store.langgraph_installed():
        return f"LangGraph's store is not installed ({langgraph_store.INSTALL_HINT})"
    return None


@pytest.fixture
def requirements() -> None:
    """A skip naming what to install; with AMNESIA_REQUIRE_LANGGRAPH=1 (CI) a failure."""
    reason = missing_requirement()
    if reason is not None:
        if os.environ.get("AMNESIA_REQUIRE_LANGGRAPH") == "1":
            pytest.fail(f"AMNESIA_REQUIRE_LANGGRAPH=1 but {reason}", pytrace=False)
        pytest.skip(reason)


def ids_in(block: str) -> set[str]:
    return {line.split("]")[0].removeprefix("- [") for line in block.splitlines() if line.startswith("- [")}


def test_the_stores_python_and_sqlite_clocks_follow_the_timestamp_file(tmp_path, arm_driver, requirements):
    driver = arm_driver(create_arm("langgraph-store"), tmp_path)
    arm = driver.arm
    assert arm.check_clock() == {"python": 0.0, "sqlite": 0.0}
    for at in (17.0, 3 * DAY + 5.0, 400 * DAY + 0.75):  # a fraction is cut: the stamp has whole seconds
        driver.start(at)
        assert arm.check_clock() == {"python": float(int(at)), "sqlite": float(int(at))}
        driver.end()
    arm.end_task()


def write(text: str, **fields: Any) -> tuple[RememberSpec, ...]:
    return (RememberSpec(content=text, **fields),)


def test_a_memory_past_the_stores_ttl_is_swept_and_one_within_it_stays(tmp_path, arm_driver, requirements):
    arm = create_arm("langgraph-store", {"default_ttl": "1d", "refresh_on_read": False})
    driver = arm_driver(arm, tmp_path)
    driver.start(0.0)
    driver.turn("old", remember=write("The old fact.") + write("A pinned fact.", pin=True))
    driver.end()
    driver.start(0.75 * DAY)
    driver.turn("new", remember=write("The new fact."))
    driver.end()
    driver.start(1.25 * DAY)  # the old fact is 1.25 d old, the new one 0.5 d
    block = driver.turn("what now?").block
    assert ids_in(block) == {"lg-0002", "lg-0003"}
    assert [(r["item_id"], r["reason"]) for r in driver.of_type("memory_forget")] == [("lg-0001", "expired")]
    assert "The old fact." not in (tmp_path / "store.db").read_bytes().decode("utf-8", "replace")
    driver.end()
    driver.start(30 * DAY)  # the pinned write was put without a ttl: never swept
    assert ids_in(driver.turn("later").block) == {"lg-0002"}
    arm.end_task()


@pytest.mark.parametrize(("refresh", "kept"), [(True, {"lg-0001", "lg-0002"}), (False, {"lg-0002"})])
def test_refresh_on_read_renews_the_ttl_on_every_search(tmp_path, arm_driver, requirements, refresh, kept):
    arm = create_arm("langgraph-store", {"default_ttl": "1d", "refresh_on_read": refresh})
    driver = arm_driver(arm, tmp_path)
    driver.start(0.0)
    driver.turn("note", remember=write("The fact.") + write("A pinned fact.", pin=True))
    driver.end()
    driver.start(0.9 * DAY)  # a search: with refresh_on_read the store restarts the fact's ttl here
    assert ids_in(driver.turn("read").block) == {"lg-0001", "lg-0002"}
    driver.end()
    driver.start(1.5 * DAY)
    assert ids_in(driver.turn("again").block) == kept
    touches = [(r["item_id"], r["reason"]) for r in driver.of_type("memory_touch")]
    assert touches == ([("lg-0001", "refresh_on_read")] * 3 if refresh else [])  # the pinned one has no ttl
    arm.end_task()


def test_without_a_ttl_nothing_is_forgotten_by_time(tmp_path, arm_driver, requirements):
    driver = arm_driver(create_arm("langgraph-store"), tmp_path)
    driver.start(0.0)
    driver.turn("note", remember=write("The fact."))
    driver.end()
    driver.start(1000 * DAY)
    assert ids_in(driver.turn("much later").block) == {"lg-0001"}
    assert driver.of_type("memory_forget") == []
    driver.arm.end_task()


def test_options_are_validated_and_the_arm_stays_out_of_all():
    arm = create_arm("langgraph-store", {"default_ttl": "7d", "refresh_on_read": False, "recall_limit": 3})
    assert arm.describe()["default_ttl"] == 7 * DAY and arm.config.ttl_config() == {
        "default_ttl": 7 * 24 * 60.0,
        "refresh_on_read": False,
    }
    assert create_arm("langgraph-store").config.ttl_config() is None
    assert create_arm("langgraph-store-7d").config.ttl_config()["refresh_on_read"] is True
    for options in ({"default_ttl": "soon"}, {"default_ttl": 0}, {"refresh_on_read": "yes"}, {"timeout": 0}):
        with pytest.raises(ArmConfigError) as raised:
            create_arm("langgraph-store", options)
        assert "\n" not in str(raised.value) and "langgraph-store" in str(raised.value)
    assert "langgraph-store" not in comparable_arms()


def run(args: list[str], exit_code: int) -> dict[str, list[dict[str, Any]]]:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == exit_code, result.output
    out = Path(args[args.index("--out") + 1])
    return {
        f"{path.parent.name}/{path.stem}": [json.loads(line) for line in path.read_text().splitlines()]
        for path in sorted((out / "logs").glob("*/*.jsonl"))
    }


def test_the_stores_ttl_changes_outcomes_on_the_small_set(
    tmp_path, small_set_tasks, write_tasks, run_args, requirements
):
    # Two of the four tasks (a worker process starts per pair): the fact change the TTL decides, and a
    # preference it keeps within 2 days.
    chosen = [
        task
        for task in small_set_tasks
        if task["id"] in ("harmful/verification-drink", "helpful/answer-language")
    ]
    tasks = write_tasks(tmp_path / "tasks", chosen)
    outcomes = {}
    for label, options in (("none", []), ("2d", ["--set", "langgraph-store.default_ttl=2d"])):
        logs = run(run_args(tasks, tmp_path / label, *options, arms="langgraph-store"), exit_code=0)
        assert all(log[-1]["type"] == "task_end" for log in logs.values())
        forgets = [r["reason"] for log in logs.values() for r in log if r["type"] == "memory_forget"]
        outcomes[label] = {
            (name, r["classification"]) for name, log in logs.items() for r in log if r["type"] == "probe"
        }
        assert ("expired" in forgets) == (label == "2d")
    drink = "langgraph-store/harmful__verification-drink"
    assert (drink, "stale") in outcomes["none"]  # both drinks are still in the store on day 3
    assert (drink, "stale") not in outcomes["2d"]  # both were swept before day 3
    assert outcomes["none"] != outcomes["2d"]


SILENT = "import sys; sys.stdin.read()"  # starts, reads, never answers
DIES = "import sys; sys.stderr.write('boom\\n'); sys.exit(3)"


@pytest.mark.parametrize(
    ("patch", "error"),
    [
        ("no-extra", "LangGraph's store is not installed: pip install 'dsh-memory-forget[langgraph]'"),
        ("no-faketime", "libfaketime is not installed (Debian: apt-get install faketime)"),
        (DIES, "the worker died during start (boom)"),
        (SILENT, "the worker did not answer start within 0.5 s"),
    ],
)
def test_a_failing_store_stops_its_pair_with_a_one_line_error_and_the_run_goes_on(
    tmp_path, small_set_tasks, write_tasks, run_args, monkeypatch, patch, error
):
    if patch == "no-extra":
        monkeypatch.setattr(langgraph_store, "langgraph_installed", lambda: False)
    elif patch == "no-faketime":  # with the extra installed, so that the missing library is what fails
        monkeypatch.setattr(langgraph_store, "faketime_library", lambda: None)
        monkeypatch.setattr(langgraph_store, "langgraph_installed", lambda: True)
    else:
        script = tmp_path / "worker.py"
        script.write_text(patch, encoding="utf-8")
        monkeypatch.setattr(langgraph_store, "WORKER", script)
        monkeypatch.setattr(langgraph_store, "faketime_library", lambda: "")  # LD_PRELOAD="" preloads nothing
        monkeypatch.setattr(langgraph_store, "langgraph_installed", lambda: True)
    tasks = write_tasks(tmp_path / "tasks", small_set_tasks[:1])
    args = run_args(
        tasks, tmp_path / "run", "--set", "langgraph-store.timeout=0.5", arms="langgraph-store,amnesia"
    )
    logs = run(args, exit_code=1)
    task = small_set_tasks[0]["id"].replace("/", "__")
    failed = logs[f"langgraph-store/{task}"][-1]
    assert failed["type"] == "pair_error" and failed["error"] == f"langgraph-store: {error}"
    assert logs[f"amnesia/{task}"][-1]["type"] == "task_end"
