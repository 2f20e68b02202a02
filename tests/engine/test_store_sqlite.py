"""SQLite store: persistence across restarts, several processes on one file, forgotten bytes really gone."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from amnesia import Amnesia, Config, SimulatedClock, SQLiteStore, StoreBusy
from amnesia.stores.forensics import content_keys
from amnesia.stores.shredding import unseal
from amnesia.stores.sqlite import default_db_path

ROOT = Path(__file__).resolve().parents[2]


def open_engine(path: Path, clock: SimulatedClock, config: Config | None = None) -> Amnesia:
    return Amnesia(store=SQLiteStore(path), config=config or Config(), clock=clock)


def test_dod3_memories_and_audit_survive_a_restart(tmp_path: Path):
    path = tmp_path / "memory.db"
    clock = SimulatedClock(0)
    engine = open_engine(path, clock)
    kept = engine.remember("Answer in French.", kind="preference", pin=True, tags=["lang"])
    gone = engine.remember("The verification drink is lapsang.", ttl=60)
    clock.advance(10)
    engine.select_for_injection()
    engine.forget(gone.id)
    engine.close()

    reopened = open_engine(path, clock)
    detail = reopened.inspect(kept.id)
    assert detail is not None and detail.tags == ("lang",) and detail.access_count == 1
    assert reopened.inspect(gone.id) is None
    assert [e.item_id for e in reopened.verify("The verification drink is lapsang.")] == [gone.id]
    assert reopened.status().counts["forgotten"] == 1


def test_forgotten_content_is_not_in_the_database_file_or_wal(tmp_path: Path):
    path = tmp_path / "memory.db"
    clock = SimulatedClock(0)
    engine = open_engine(path, clock)
    marker = "ZEBRA-MARKER-4471 likes oolong"
    survivor = "GIRAFFE-MARKER-9902 likes sencha"
    doomed = engine.remember(marker, ttl=30, curve="flat")
    kept = engine.remember(survivor, ttl=3600)
    doomed_key, survivor_key = (content_keys(path)[view.id] for view in (doomed, kept))
    for _ in range(3):  # updates leave old row images around unless they are scrubbed too
        engine.select_for_injection()
        clock.advance(1)
    clock.advance(60)
    assert doomed.id in engine.sweep().ids
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("memory.db"))
    assert marker.encode() not in raw and doomed_key not in raw
    assert survivor.encode() not in raw  # stored sealed, never in the clear
    assert survivor_key in raw  # the scan does see the key of content that is still live
    wal = tmp_path / "memory.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    engine.close()


WRITER = textwrap.dedent(
    """
    import sys
    from amnesia import Amnesia, Config, SQLiteStore, SimulatedClock
    store = SQLiteStore(sys.argv[1])
    engine = Amnesia(store=store, config=Config(max_store_bytes=10**7), clock=SimulatedClock(0))
    for index in range(int(sys.argv[3])):
        engine.remember(f"writer {sys.argv[2]} note {index}", ttl="1d")
    """
)


def test_two_processes_writing_one_file_lose_no_write(tmp_path: Path):
    path = tmp_path / "shared.db"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), name, "60"], env=env, stderr=subprocess.PIPE
        )
        for name in ("a", "b")
    ]
    for writer in writers:
        _, err = writer.communicate(timeout=120)
        assert writer.returncode == 0, err.decode()[-2000:]
    contents = {
        p.content for p in open_engine(path, SimulatedClock(0), Config(max_store_bytes=10**7)).plugs()
    }
    assert contents == {f"writer {name} note {i}" for name in "ab" for i in range(60)}


def test_an_engine_sees_another_processs_changes(tmp_path: Path):
    path = tmp_path / "m.db"
    clock = SimulatedClock(0)
    first = open_engine(path, clock)
    second = open_engine(path, clock)
    view = second.remember("Written by the CLI while the agent runs.")
    assert first.inspect(view.id) is not None
    first.forget(view.id)
    assert second.plugs() == []


def test_a_held_lock_ends_in_a_clear_error_not_database_is_locked(tmp_path: Path):
    path = tmp_path / "m.db"
    store = SQLiteStore(path, lock_timeout=0.3)
    engine = Amnesia(store=store, clock=SimulatedClock(0))
    blocker = sqlite3.connect(path, isolation_level=None)
    blocker.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreBusy, match="stayed locked"):
            engine.remember("Cannot get in.")
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert engine.remember("Now it can.").id


def test_default_path_and_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AMNESIA_DB", str(tmp_path / "env.db"))
    assert default_db_path() == tmp_path / "env.db"
    monkeypatch.delenv("AMNESIA_DB")
    assert default_db_path() == Path("~/.amnesia/memory.db").expanduser()


def test_file_is_private_and_garbage_is_rejected(tmp_path: Path):
    store = SQLiteStore(tmp_path / "m.db")
    assert (tmp_path / "m.db").stat().st_mode & 0o077 == 0
    store.close()
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(Exception, match=r"junk\.db"):
        SQLiteStore(junk)


def _unseal_to_the_old_layout(db: Path) -> None:
    """Turn a database into what the versions before crypto-shredding wrote: plaintext rows, no key slots."""
    connection = sqlite3.connect(db, isolation_level=None)
    for table in ("items", "audit"):
        rows = connection.execute(
            f"SELECT {table}.seq, {table}.data, content_keys.key FROM {table} "
            f"JOIN content_keys ON content_keys.slot = {table}.key_slot"
        ).fetchall()
        connection.executemany(
            f"UPDATE {table} SET data = ? WHERE seq = ?",
            [(unseal(key, data).decode(), seq) for seq, data, key in rows],
        )
        connection.execute(f"ALTER TABLE {table} DROP COLUMN key_slot")
    connection.execute("DROP TABLE content_keys")
    connection.close()


def test_a_database_from_before_sealing_is_sealed_and_rebuilt_when_opened(tmp_path: Path):
    path, clock = tmp_path / "memory.db", SimulatedClock(0)
    config = Config(restorable=True)
    engine = open_engine(path, clock, config)
    kept = engine.remember("GIRAFFE-MARKER-9902 likes sencha", ttl=3600)
    gone = engine.remember("ZEBRA-MARKER-4471 likes oolong", ttl=3600)
    engine.forget(gone.id)  # restorable: the audit keeps a copy
    engine.close()
    _unseal_to_the_old_layout(path)
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("memory.db"))
    assert b"GIRAFFE-MARKER-9902" in raw and b"ZEBRA-MARKER-4471" in raw

    reopened = open_engine(path, clock, config)
    detail = reopened.inspect(kept.id)
    assert detail is not None and detail.content == "GIRAFFE-MARKER-9902 likes sencha"
    assert [entry.content for entry in reopened.audit()] == ["ZEBRA-MARKER-4471 likes oolong"]
    raw = b"".join(p.read_bytes() for p in tmp_path.iterdir() if p.name.startswith("memory.db"))
    assert b"GIRAFFE-MARKER-9902" not in raw and b"ZEBRA-MARKER-4471" not in raw  # sealed, pages rebuilt
    reopened.close()
    assert set(content_keys(path)) == {kept.id}
