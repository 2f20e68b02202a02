"""A forensic examiner holding the SQLite files finds nothing of a forgotten memory: not its text and not the
content key it was sealed under (which would unseal any leftover sealed copy), in any byte of the database,
its -wal, -shm, journal or scrub marker. Three ways this failed before crypto-shredding, each reproduced:

1. one process, no crash: a stale copy of a row in the unallocated gap of a rebuilt page (secure_delete does
   not zero it) — about 1 forgotten item in 400;
2. another connection held a read transaction during the forget: the text stayed in -wal after the reader
   had finished, through more writes and a sweep;
3. SIGKILL after the forget committed and before the WAL was scrubbed: the text stayed, also after a reopen.

Every point is reached by count or by a seed, never by a timer."""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from amnesia import Amnesia, Config, SimulatedClock, SQLiteStore, StoreFull
from amnesia.stores.forensics import content_keys, database_files, scan

ROOT = Path(__file__).resolve().parents[2]


class Ledger:
    """Each memory's unique marker and, while it was live, its content key."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.markers: dict[str, str] = {}
        self.keys: dict[str, bytes] = {}

    def remember(self, engine: Amnesia, marker: str, text: str, **options: object) -> str:
        view = engine.remember(f"{marker} {text}", **options)  # type: ignore[arg-type]
        self.markers[view.id] = marker
        self.keys.update(content_keys(self.db, [view.id]))
        return view.id

    def needles(self, ids: set[str]) -> dict[str, bytes]:
        """What must not be found of the memories `ids`: their text and their key."""
        found = {f"{item_id} text": self.markers[item_id].encode() for item_id in ids}
        return found | {f"{item_id} key": self.keys[item_id] for item_id in ids & self.keys.keys()}


def _engine(db: Path, clock: SimulatedClock, lock_timeout: float = 10.0, **config: object) -> Amnesia:
    counter = iter(range(10**6))
    return Amnesia(
        store=SQLiteStore(db, secret=b"k" * 32, lock_timeout=lock_timeout),
        config=Config(**{"max_item_bytes": 2_048, **config}),  # type: ignore[arg-type]
        clock=clock,
        id_factory=lambda: f"m-{next(counter):012x}",  # as long as the engine's own ids
    )


@pytest.mark.parametrize("seed", [1, 7])
def test_one_process_leaves_nothing_of_forgotten_memories_in_any_page(tmp_path: Path, seed: int) -> None:
    """A hundred writes of varied length, keyed supersessions, forgets and sweeps on a simulated clock, then
    close. On SQLite 3.40 these seeds left 1 and 2 forgotten texts in the unallocated gap of rebuilt
    leaf pages before crypto-shredding (3 of 895 forgotten memories over seeds 0-11)."""
    rng = random.Random(seed)
    db, clock = tmp_path / "memory.db", SimulatedClock(1_000.0)
    engine = _engine(db, clock, max_store_bytes=60_000)
    ledger = Ledger(db)
    for index in range(100):
        marker = f"MK{seed:03d}x{index:04d}q"
        text = "".join(rng.choice("abcdefgh ") for _ in range(rng.randrange(10, 300)))
        options: dict[str, object] = {"ttl": rng.choice([30.0, 300.0, 3_600.0, 86_400.0])}
        if rng.random() < 0.3:
            options["key"] = f"k{rng.randrange(5)}"
        ledger.remember(engine, marker, text, **options)
        roll = rng.random()
        if roll < 0.15:
            if live := engine.plugs():
                engine.forget(rng.choice(live).id)
        elif roll < 0.3:
            engine.sweep()
        clock.advance(rng.choice([1.0, 10.0, 100.0]))
    live = {plug.id for plug in engine.plugs()}
    engine.close()
    forgotten = set(ledger.markers) - live
    assert len(forgotten) > 50 and live  # supersessions, forgets and expiries happened
    assert scan(db, ledger.needles(forgotten)).found == {}
    # The scan does see what is stored: every live memory's key; and no text is stored in the clear.
    assert len(scan(db, {i: ledger.keys[i] for i in live}).found) == len(live)
    assert scan(db, {i: ledger.markers[i].encode() for i in live}).found == {}


def test_a_reader_open_during_the_forget_holds_the_key_only_until_it_finishes(tmp_path: Path) -> None:
    db, clock = tmp_path / "memory.db", SimulatedClock(1_000.0)
    # lock_timeout bounds how long the forget waits for the reader to finish: here it cannot (same thread)
    engine = _engine(db, clock, lock_timeout=0.05)
    ledger = Ledger(db)
    for index in range(20):
        ledger.remember(engine, f"<filler {index}>", "about the weekly deploy rota", ttl="30d")
    doomed = ledger.remember(engine, "<Zebracorn-4471>", "is the staging harbor", ttl="30d")
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    assert reader.execute("SELECT COUNT(*) FROM items").fetchone() == (21,)  # a snapshot from before
    engine.forget(doomed)
    # The window: the reader's snapshot still holds the key (and the reader could read the row).
    assert scan(db, ledger.needles({doomed})).found.keys() == {f"{doomed} key"}
    assert engine.store.scrub_marker.exists()  # type: ignore[attr-defined]
    reader.execute("COMMIT")  # the reader has finished; its connection stays open
    for index in range(3):
        ledger.remember(engine, f"<later {index}>", "another note", ttl="30d")
    engine.sweep()
    assert scan(db, ledger.needles({doomed})).found == {}
    assert not engine.store.scrub_marker.exists()  # type: ignore[attr-defined]
    reader.close()
    engine.close()
    assert scan(db, ledger.needles({doomed})).found == {}


KILLED_AFTER_THE_FORGET = textwrap.dedent(
    """
    import json, os, signal, sys
    from pathlib import Path
    from amnesia import Amnesia, SimulatedClock, SQLiteStore
    from amnesia.stores.forensics import content_keys

    db, out = Path(sys.argv[1]), Path(sys.argv[2])
    engine = Amnesia(store=SQLiteStore(db, secret=b"k" * 32), clock=SimulatedClock(0.0))
    ids = {}
    for n in range(40):
        word = "harbor" if n % 2 else "meadow"
        ids[engine.remember(f"<marker-{n:02d}> the {word} note {n}", ttl="1d").id] = f"<marker-{n:02d}>"
    keys = {item_id: key.hex() for item_id, key in content_keys(db).items()}
    out.write_text(json.dumps({"markers": ids, "keys": keys}))

    def die_before_the_scrub(statement):
        if statement.startswith("PRAGMA wal_checkpoint"):  # the forget has committed: a power cut now
            os.kill(os.getpid(), signal.SIGKILL)

    engine.store._db.set_trace_callback(die_before_the_scrub)
    engine.forget(query="harbor")
    """
)


def test_after_a_kill_the_next_open_removes_what_the_killed_process_had_forgotten(tmp_path: Path) -> None:
    db, out = tmp_path / "memory.db", tmp_path / "ledger.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.run(
        [sys.executable, "-c", KILLED_AFTER_THE_FORGET, str(db), str(out)], env=env, capture_output=True
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    ledger = json.loads(out.read_text())
    forgotten = {i for i, marker in ledger["markers"].items() if int(marker[8:10]) % 2}
    needles = {f"{i} text": ledger["markers"][i].encode() for i in forgotten}
    needles |= {f"{i} key": bytes.fromhex(ledger["keys"][i]) for i in forgotten & ledger["keys"].keys()}
    # The window: the commit is in the files, the scrub never ran, so the old key page is still there.
    assert scan(db, needles).found
    store = SQLiteStore(db, secret=b"k" * 32)  # the next open scrubs (recovery)
    assert scan(db, needles).found == {}
    assert len(store.load_items("default")) == 20 and not store.scrub_marker.exists()
    store.close()
    assert scan(db, needles).found == {}


def test_a_full_disk_is_one_line_naming_the_file_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    engine = _engine(db, SimulatedClock(0.0))
    engine.remember("The deploy window opens at nine.", ttl="1d")
    store: SQLiteStore = engine.store  # type: ignore[assignment]
    (pages,) = store._db.execute("PRAGMA page_count").fetchone()
    store._db.execute(f"PRAGMA max_page_count = {pages}")  # the file may not grow: a full disk for SQLite
    with pytest.raises(StoreFull) as full:
        for index in range(200):
            engine.remember(f"Note {index}: " + "x" * 1_500, ttl="1d")
    message = str(full.value)
    assert str(db) in message and "\n" not in message and "full" in message
    reopened = SQLiteStore(db, secret=b"k" * 32)
    stored = [item.content for item in reopened.load_items("default")]
    assert len(stored) == index + 1  # every write before the full one, and nothing of it
    assert {path.name for path in database_files(db)} <= {"memory.db", "memory.db-wal", "memory.db-shm"}
    reopened.close()


def test_key_slots_of_forgotten_memories_are_reused_not_piled_up(tmp_path: Path) -> None:
    db, clock = tmp_path / "memory.db", SimulatedClock(0.0)
    engine = _engine(db, clock, max_store_bytes=200, max_item_bytes=100)  # about four memories: writes evict
    for index in range(60):
        engine.remember(f"Rotating note {index} about the staging harbor.", ttl="1d")
        clock.advance(1.0)
    live = len(engine.plugs())
    store: SQLiteStore = engine.store  # type: ignore[assignment]
    (slots,) = store._db.execute("SELECT COUNT(*) FROM content_keys").fetchone()
    assert live >= 3 and slots <= live + 1  # 57 evictions later: a slot per live memory, plus one
    engine.close()


def test_a_scrub_a_reader_blocked_is_finished_by_the_next_call_of_another_store(tmp_path: Path) -> None:
    db, clock = tmp_path / "memory.db", SimulatedClock(1_000.0)
    engine = _engine(db, clock, lock_timeout=0.05)
    ledger = Ledger(db)
    doomed = ledger.remember(engine, "<Zebracorn-4471>", "is the staging harbor", ttl="30d")
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT COUNT(*) FROM items").fetchone()
    engine.forget(doomed)
    reader.execute("COMMIT")
    assert scan(db, ledger.needles({doomed})).found  # the forgetting engine does nothing more
    other = SQLiteStore(db, secret=b"k" * 32)  # another process's store: its open (or first call) scrubs
    assert other.count_forgets("default") == 1
    assert scan(db, ledger.needles({doomed})).found == {}
    assert not other.scrub_marker.exists()
    for connection in (other, engine, reader):
        connection.close()
