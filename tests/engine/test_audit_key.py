"""The audit key is not stored beside the hashes: a SQLite store keeps its HMAC key in a 0600 key file outside
the database (or takes it from the environment), and an old database that held its key moves it out."""

from __future__ import annotations

import sqlite3
import stat
from pathlib import Path

import pytest

from amnesia import Amnesia, Config, InMemoryStore, InvalidInput, SimulatedClock, SQLiteStore
from amnesia.cli import run as cli_run
from amnesia.keys import key_folder

FORGOTTEN = "The door code is 4711."


@pytest.fixture
def config_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A config folder of this test's own, so the key files it finds are the ones it made."""
    folder = tmp_path / "config-home"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    return folder


def raw_bytes(db: Path) -> bytes:
    """The database file and its WAL/shared-memory companions, as they are on disk."""
    return b"".join(path.read_bytes() for path in db.parent.glob(db.name + "*"))


def assert_key_absent(db: Path, key: bytes) -> None:
    raw = raw_bytes(db)
    assert key not in raw and key.hex().encode() not in raw and key.hex().upper().encode() not in raw


def remember_and_forget(store: SQLiteStore) -> Amnesia:
    engine = Amnesia(store=store, clock=SimulatedClock(0.0))
    engine.forget(engine.remember(FORGOTTEN, ttl="1d").id)
    return engine


def the_key_file(config_home: Path) -> Path:
    (path,) = key_folder({"XDG_CONFIG_HOME": str(config_home)}).glob("*.key")
    return path


def test_the_key_lives_in_a_private_file_and_verify_works_across_reopen(
    tmp_path: Path, config_home: Path
) -> None:
    db = tmp_path / "memory.db"
    engine = remember_and_forget(SQLiteStore(db))
    key = engine.store.secret
    engine.close()

    key_file = the_key_file(config_home)
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert stat.S_IMODE(key_file.parent.stat().st_mode) == 0o700
    assert bytes.fromhex(key_file.read_text()) == key
    assert_key_absent(db, key)

    reopened = Amnesia(store=SQLiteStore(db), clock=SimulatedClock(10.0))
    assert [entry.reason for entry in reopened.verify(FORGOTTEN)] == ["manual"]
    assert reopened.verify("The door code is 4712.") == []


def test_the_key_file_can_be_named_by_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_home: Path
) -> None:
    key_file = tmp_path / "keys" / "memory.key"
    monkeypatch.setenv("AMNESIA_AUDIT_KEY_FILE", str(key_file))
    engine = remember_and_forget(SQLiteStore(tmp_path / "memory.db"))
    engine.close()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    assert not any(config_home.rglob("*.key"))  # the default folder is not used
    assert len(Amnesia(store=SQLiteStore(tmp_path / "memory.db")).verify(FORGOTTEN)) == 1


def test_a_key_given_in_the_environment_is_never_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_home: Path
) -> None:
    key = bytes(range(32))
    monkeypatch.setenv("AMNESIA_AUDIT_KEY", key.hex())
    db = tmp_path / "memory.db"
    remember_and_forget(SQLiteStore(db)).close()
    assert not any(config_home.rglob("*"))
    assert_key_absent(db, key)
    assert len(Amnesia(store=SQLiteStore(db)).verify(FORGOTTEN)) == 1

    monkeypatch.setenv("AMNESIA_AUDIT_KEY", bytes(range(1, 33)).hex())
    with pytest.raises(InvalidInput, match="not this store's key") as wrong:
        SQLiteStore(db)
    monkeypatch.delenv("AMNESIA_AUDIT_KEY")
    with pytest.raises(InvalidInput, match=r"\.key is missing") as missing:
        SQLiteStore(db)
    monkeypatch.setenv("AMNESIA_AUDIT_KEY", "0123 not hex")
    with pytest.raises(InvalidInput, match="AMNESIA_AUDIT_KEY: expected at least 32 hex digits") as bad:
        SQLiteStore(db)
    for refusal in (wrong, missing, bad):
        assert "\n" not in str(refusal.value) and key.hex() not in str(refusal.value)


def test_the_cli_refuses_a_database_whose_key_is_missing(
    tmp_path: Path, config_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "memory.db"
    remember_and_forget(SQLiteStore(db)).close()
    the_key_file(config_home).unlink()
    assert cli_run(["--db", str(db), "status"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: audit key: ") and err.count("\n") == 1


def make_legacy_database(db: Path, legacy_key: bytes) -> None:
    """A database as the versions before this change wrote it: the audit key in its `meta` table."""
    engine = Amnesia(store=SQLiteStore(db, secret=legacy_key), clock=SimulatedClock(0.0))
    engine.forget(engine.remember(FORGOTTEN, ttl="1d").id)
    engine.close()
    with sqlite3.connect(db) as connection:
        connection.execute("INSERT INTO meta (key, value) VALUES ('secret', ?)", (legacy_key,))
    assert legacy_key in raw_bytes(db)


def test_an_old_database_moves_its_key_out_and_stays_verifiable(tmp_path: Path, config_home: Path) -> None:
    db, legacy_key = tmp_path / "memory.db", b"legacy-key-0123456789abcdefghijk"
    make_legacy_database(db, legacy_key)

    store = SQLiteStore(db)
    key_file = the_key_file(config_home)
    assert store.secret == legacy_key and store.audit_key_moved_to == key_file
    assert bytes.fromhex(key_file.read_text()) == legacy_key
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    engine = Amnesia(store=store, clock=SimulatedClock(5.0))
    assert [entry.reason for entry in engine.verify(FORGOTTEN)] == ["manual"]  # hashed with the old key
    engine.close()
    assert_key_absent(db, legacy_key)
    with sqlite3.connect(db) as connection:
        meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
    assert "secret" not in meta and meta["audit_key_moved_to"] == str(key_file)

    again = SQLiteStore(db)  # the next open just reads the key file
    assert again.secret == legacy_key and again.audit_key_moved_to is None
    assert len(Amnesia(store=again).verify(FORGOTTEN)) == 1


def test_an_old_database_is_not_moved_under_an_environment_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config_home: Path
) -> None:
    db, legacy_key = tmp_path / "memory.db", b"legacy-key-0123456789abcdefghijk"
    make_legacy_database(db, legacy_key)
    monkeypatch.setenv("AMNESIA_AUDIT_KEY", bytes(range(32)).hex())
    with pytest.raises(InvalidInput, match="still holds its own audit key"):
        SQLiteStore(db)
    assert legacy_key in raw_bytes(db)  # refused whole: the key is still where it was
    assert not any(config_home.rglob("*.key"))


def test_an_old_database_does_not_overwrite_another_key_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, legacy_key = tmp_path / "memory.db", b"legacy-key-0123456789abcdefghijk"
    make_legacy_database(db, legacy_key)
    taken = tmp_path / "shared.key"
    taken.write_text(bytes(range(32)).hex() + "\n")
    monkeypatch.setenv("AMNESIA_AUDIT_KEY_FILE", str(taken))
    with pytest.raises(InvalidInput, match="already holds a different key"):
        SQLiteStore(db)
    assert bytes.fromhex(taken.read_text()) == bytes(range(32)) and legacy_key in raw_bytes(db)


def test_in_memory_stores_keep_an_in_process_key(config_home: Path) -> None:
    first, second = InMemoryStore(), InMemoryStore()
    assert len(first.secret) == 32 and first.secret != second.secret
    engine = Amnesia(store=first, config=Config(), clock=SimulatedClock(0.0))
    engine.forget(engine.remember(FORGOTTEN, ttl="1d").id)
    assert len(engine.verify(FORGOTTEN)) == 1
    assert not any(config_home.rglob("*"))


def test_a_key_file_others_may_read_is_used_with_one_warning_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key_file = tmp_path / "shared.key"
    key_file.write_text("ab" * 32 + "\n")
    key_file.chmod(0o644)
    monkeypatch.setenv("AMNESIA_AUDIT_KEY_FILE", str(key_file))
    for name in ("one.db", "two.db", "one.db"):  # three opens, two stores: one warning
        engine = remember_and_forget(SQLiteStore(tmp_path / name))
        assert engine.store.secret == bytes.fromhex("ab" * 32)
        engine.close()
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"warning: audit key: {key_file} is open to its group or others (mode 0644); chmod 600 it"
    ]


def test_a_private_key_file_gives_no_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key_file = tmp_path / "private.key"
    monkeypatch.setenv("AMNESIA_AUDIT_KEY_FILE", str(key_file))
    remember_and_forget(SQLiteStore(tmp_path / "memory.db")).close()
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600 and capsys.readouterr().err == ""
