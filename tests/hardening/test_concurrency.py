"""Several processes on one SQLite file: nothing acknowledged is lost, nothing forgotten comes back, and a
lock held too long becomes a clear one-line error (never `database is locked`)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from amnesia import Amnesia, Config, SimulatedClock, SQLiteStore, StoreBusy
from amnesia.cli import run as cli_run

ROOT = Path(__file__).resolve().parents[2]


def test_agents_cli_users_and_a_sweeper_share_one_database_without_losing_a_write() -> None:
    result = subprocess.run(
        # --min-steps: every process finishes 40 steps however loaded the machine is, so each role acts
        [
            sys.executable,
            str(ROOT / "benchmarks" / "concurrency.py"),
            "--seconds",
            "2",
            "--min-steps",
            "40",
            "--json",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=400,
        check=False,
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    figures = json.loads(result.stdout)
    assert figures["problems"] == []
    acknowledged = figures["acknowledged"]
    assert acknowledged.get("remember", 0) > 0 and acknowledged.get("forget", 0) > 0
    assert acknowledged.get("sweep", 0) > 0
    assert any(op.startswith("cli-") for op in acknowledged), acknowledged
    assert figures["writes_checked"] > 0
    # Raw-byte scans during the run (under the write lock) and at the end found nothing forgotten.
    assert figures["forensic"]["scans"] >= 2 and figures["forensic"]["forgotten_checked"] > 0
    assert figures["forensic"]["forgotten_bytes_found"] == 0


def test_a_stale_save_from_another_process_does_not_bring_a_forgotten_memory_back(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    clock = SimulatedClock(0.0)
    writer = Amnesia(store=SQLiteStore(db), clock=clock)
    view = writer.remember("The harbor gate code word is lantern.", ttl="1d")
    other = Amnesia(store=SQLiteStore(db), clock=clock)
    stale_copy = other._items[view.id]  # what the other process still holds in memory
    assert writer.forget(view.id).count == 1
    other.store.commit(other.workspace_id, save=[stale_copy])  # e.g. its touch, racing the forget
    assert [item.id for item in SQLiteStore(db).load_items("default")] == []
    assert other.inspect(view.id) is None  # it reloads: the external forget wins
    assert len(writer.audit()) == 1


def _hold_write_lock(db: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(db, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    return holder


def test_a_lock_held_too_long_is_a_clear_store_busy_error(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    engine = Amnesia(store=SQLiteStore(db, lock_timeout=0.3), clock=SimulatedClock(0.0))
    holder = _hold_write_lock(db)
    try:
        with pytest.raises(StoreBusy) as caught:
            engine.remember("The staging window opens at nine.", ttl="1d")
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    message = str(caught.value)
    assert "locked by another process" in message and "database is locked" not in message
    assert "\n" not in message
    assert engine.plugs() == []  # nothing half-written, and the engine still works
    engine.remember("The staging window opens at nine.", ttl="1d")
    assert len(engine.plugs()) == 1


def test_the_cli_turns_a_held_lock_into_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db, config = tmp_path / "memory.db", tmp_path / "config.yaml"
    config.write_text("lock_timeout: 0.3s\n", encoding="utf-8")
    SQLiteStore(db).close()
    holder = _hold_write_lock(db)
    try:
        code = cli_run(["--db", str(db), "--config", str(config), "remember", "Deploys freeze on Friday."])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("error: db:") and "Traceback" not in err
    assert "database is locked" not in err
    assert SQLiteStore(db).load_items("default") == []


@pytest.mark.parametrize("race", ["capacity", "key"])
def test_a_write_planned_before_another_process_commits_is_planned_again(tmp_path: Path, race: str) -> None:
    """The intermittent '6008 bytes stored, over max_store_bytes 6000': process A plans its write (what to
    evict, what to supersede) on what it loaded, process B commits in between, and A's commit must not go
    through on the stale plan. Here B's write is made to land exactly in that window."""
    db = tmp_path / "memory.db"
    config = Config(max_store_bytes=100, max_item_bytes=60)
    clock = SimulatedClock(0.0)
    first = Amnesia(store=SQLiteStore(db), config=config, clock=clock)
    second = Amnesia(store=SQLiteStore(db), config=config, clock=clock)
    key = "drink" if race == "key" else None
    first.remember("The verification drink is lapsang souchong tea.", ttl="1d", key=key)  # 47 bytes
    real_check = first.store.changed_externally
    raced = False

    def other_process_commits_after_the_check() -> bool:
        nonlocal raced
        changed = real_check()
        if not raced:
            raced = True
            second.remember("The verification drink is oolong, not lapsang.", ttl="1d", key=key)  # 47 bytes
        return changed

    first.store.changed_externally = other_process_commits_after_the_check  # type: ignore[method-assign]
    first.remember("The staging database is db-stage-3, not two.", ttl="1d", key=key)  # 44 bytes
    assert raced
    live = SQLiteStore(db).load_items("default")
    assert sum(item.size_bytes for item in live) <= config.max_store_bytes
    if race == "key":
        assert [item.content for item in live] == ["The staging database is db-stage-3, not two."]
    else:
        assert len(live) == 2  # the weakest of the three was evicted, with its audit entry
        assert [entry.reason for entry in first.audit()] == ["evicted"]
