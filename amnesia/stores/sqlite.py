"""SQLite store (stdlib `sqlite3`): the embedded default, one file shared safely by several processes.

- WAL journal; every write is one `BEGIN IMMEDIATE` transaction. A writer that finds the database locked waits
  (busy_timeout) and retries until `lock_timeout`, then raises StoreBusy — "database is locked" never escapes.
- Forgetting is physical: `PRAGMA secure_delete=ON` zeroes deleted rows in the file, and a
  `wal_checkpoint(TRUNCATE)` after each commit that deleted something empties the WAL, so forgotten content
  cannot be recovered from the database file or its WAL.
- The audit's HMAC key is NOT in the file (see `amnesia.keys`): the database records only a random store id
  (which names the key file) and a check value, so holding the database alone does not let anyone test
  guesses of forgotten content. A database from before this rule keeps its key in the `meta` table; opening
  it moves the key out to the key file, deletes it from the database (scrubbed like forgotten content) and
  records where it went (`meta.audit_key_moved_to`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from amnesia import keys
from amnesia.audit import FORGET_REASONS, AuditEntry, AuditRow, as_entry
from amnesia.checks import shown
from amnesia.config import DEFAULT_DB_PATH
from amnesia.errors import InvalidInput, StoreBusy, StoreConflict
from amnesia.item import MemoryItem

T = TypeVar("T")
_RETRY_PAUSE = 0.02
_ID_CHUNK = 500  # ids per `IN (...)` query, well under SQLite's bound-parameter limit

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS items_by_workspace ON items (workspace_id, seq);
CREATE TABLE IF NOT EXISTS audit (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace_id TEXT NOT NULL,
    item_id TEXT NOT NULL,
    restored_from TEXT,
    reason TEXT NOT NULL,
    at REAL NOT NULL,
    content_hash TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit (workspace_id, at);
CREATE INDEX IF NOT EXISTS audit_by_item ON audit (workspace_id, item_id);
CREATE INDEX IF NOT EXISTS audit_by_hash ON audit (workspace_id, content_hash);
"""
_FORGET_REASON_LIST = ",".join(f"'{reason}'" for reason in FORGET_REASONS)


def default_db_path() -> Path:
    return Path(os.environ.get("AMNESIA_DB") or DEFAULT_DB_PATH).expanduser()


class SQLiteStore:
    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        secret: bytes | None = None,
        lock_timeout: float = 10.0,
    ) -> None:
        self.path = Path(path).expanduser() if path is not None else default_db_path()
        self.lock_timeout = lock_timeout
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            created = not self.path.exists()
            self._db = sqlite3.connect(self.path, timeout=lock_timeout, isolation_level=None)
        except (OSError, sqlite3.Error) as error:
            raise InvalidInput(f"db: cannot open {shown(self.path)}: {error}") from None
        if created:
            os.chmod(self.path, 0o600)  # memories are private: owner read/write only
        self._retrying(self._initialise)
        # Where a key that sat in the database was moved to when this store opened it (None: nothing moved).
        self.audit_key_moved_to: Path | None = None
        if secret is not None:  # the caller manages the key: nothing is read or recorded
            self.secret = secret
        else:
            fresh_id = keys.new_store_id()  # drawn once: a retried transaction must not name a second file
            self.secret, self.audit_key_moved_to = self._retrying(lambda: self._open_audit_key(fresh_id))
            if self.audit_key_moved_to is not None:
                self._scrub_wal()  # the deleted key row goes the way of forgotten content
        self._data_version = self._read_data_version()

    def _initialise(self) -> None:
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
        except sqlite3.DatabaseError as error:
            if "locked" in str(error) or "busy" in str(error):
                raise
            raise InvalidInput(
                f"db: {shown(self.path)} is not an Amnesia SQLite database ({error})"
            ) from None
        self._db.execute("PRAGMA secure_delete=ON")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self._transaction():
            for statement in filter(str.strip, SCHEMA.split(";")):
                self._db.execute(statement)

    def _open_audit_key(self, fresh_id: str) -> tuple[bytes, Path | None]:
        """This store's audit key (see amnesia.keys), and where a key kept in the database was moved to."""
        with self._transaction():
            meta = dict(
                self._db.execute(
                    "SELECT key, value FROM meta WHERE key IN ('store_id', 'audit_key_check', 'secret')"
                ).fetchall()
            )
            store_id = meta.get("store_id") or fresh_id
            from_env = keys.key_from_env()
            if "secret" in meta:  # a database from before keys moved out: move it now
                if from_env is not None:
                    raise InvalidInput(
                        f"db: {shown(self.path)} still holds its own audit key; open it once without "
                        f"{keys.KEY_ENV} so that the key can move to its key file"
                    )
                key, moved_to = bytes(meta["secret"]), keys.key_location(store_id)
                keys.write_key(moved_to, key)  # first the file, then the row: the key is never nowhere
                self._db.execute("DELETE FROM meta WHERE key = 'secret'")
                self._record_key(store_id, key, moved_to)
                return key, moved_to
            if "store_id" not in meta:  # a new database
                key = (
                    from_env if from_env is not None else keys.read_or_create_key(keys.key_location(store_id))
                )
                self._record_key(store_id, key)
                return key, None
            key, origin = keys.existing_key(store_id)
            if keys.key_check(key) != meta.get("audit_key_check"):
                raise InvalidInput(
                    f"db: {shown(self.path)}: the audit key from {origin} is not this store's key"
                )
            return key, None

    def _record_key(self, store_id: str, key: bytes, moved_to: Path | None = None) -> None:
        rows = [("store_id", store_id), ("audit_key_check", keys.key_check(key))]
        if moved_to is not None:
            rows.append(("audit_key_moved_to", str(moved_to)))
        self._db.executemany("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", rows)

    def _read_data_version(self) -> int:
        return int(self._db.execute("PRAGMA data_version").fetchone()[0])

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _retrying(self, operation: Callable[[], T]) -> T:
        """Run `operation` (a whole transaction), retrying while another process holds the lock."""
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                return operation()
            except sqlite3.OperationalError as error:
                message = str(error)
                if "locked" not in message and "busy" not in message:
                    raise
                if self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if time.monotonic() >= deadline:
                    raise StoreBusy(
                        f"db: {shown(self.path)} stayed locked by another process "
                        f"for over {self.lock_timeout:g}s"
                    ) from None
                time.sleep(_RETRY_PAUSE)

    def load_items(self, workspace_id: str) -> list[MemoryItem]:
        rows = self._retrying(
            lambda: self._db.execute(
                "SELECT data FROM items WHERE workspace_id = ? ORDER BY seq", (workspace_id,)
            ).fetchall()
        )
        self._data_version = self._read_data_version()
        return [MemoryItem.from_dict(json.loads(data)) for (data,) in rows]

    def commit(
        self,
        workspace_id: str,
        *,
        forget: Sequence[AuditRow] = (),
        save: Sequence[MemoryItem] = (),
        audit: Sequence[AuditRow] = (),
        if_unchanged: bool = False,
    ) -> list[str]:
        forget, audit = list(map(as_entry, forget)), list(map(as_entry, audit))
        deleted = self._retrying(lambda: self._commit(workspace_id, forget, save, audit, if_unchanged))
        if deleted:
            self._scrub_wal()
        return deleted

    def _commit(
        self,
        workspace_id: str,
        forget: Sequence[AuditEntry],
        save: Sequence[MemoryItem],
        audit: Sequence[AuditEntry],
        if_unchanged: bool,
    ) -> list[str]:
        with self._transaction():
            # Under the write lock nobody else can commit, so an unchanged data_version here means the
            # caller's plan still holds when this transaction commits.
            if if_unchanged and self._read_data_version() != self._data_version:
                raise StoreConflict(f"db: {shown(self.path)} changed under a write; reload and retry")
            present = self._existing_ids(workspace_id, [entry.item_id for entry in forget])
            due = list({entry.item_id: entry for entry in forget if entry.item_id in present}.values())
            self._insert_audit([*due, *audit])  # the audit lines first, then the content goes
            self._db.executemany("DELETE FROM items WHERE id = ?", [(entry.item_id,) for entry in due])
            # Another process may have forgotten an item this caller still holds (a touch, a status change):
            # saving it would bring forgotten content back, so saves of audited-as-forgotten ids are dropped.
            gone = self._forgotten_ids(workspace_id, [item.id for item in save])
            save = [item for item in save if item.id not in gone]
            self._db.executemany(
                "INSERT INTO items (id, workspace_id, data) VALUES (?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET data = excluded.data, workspace_id = excluded.workspace_id",
                [
                    (item.id, item.workspace_id, json.dumps(item.to_dict(), ensure_ascii=False))
                    for item in save
                ],
            )
        return [entry.item_id for entry in due]

    def _existing_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), _ID_CHUNK):
            chunk = ids[start : start + _ID_CHUNK]
            # `+workspace_id`: look the ids up in the unique id index; with the (workspace_id, seq) index the
            # planner scanned the whole workspace per chunk, which made a big sweep quadratic.
            rows = self._db.execute(
                f"SELECT id FROM items WHERE +workspace_id = ? AND id IN ({','.join('?' * len(chunk))})",
                (workspace_id, *chunk),
            )
            found.update(item_id for (item_id,) in rows)
        return found

    def _forgotten_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for start in range(0, len(ids), _ID_CHUNK):
            chunk = ids[start : start + _ID_CHUNK]
            rows = self._db.execute(
                f"SELECT item_id FROM audit WHERE workspace_id = ? AND reason IN ({_FORGET_REASON_LIST}) "
                f"AND item_id IN ({','.join('?' * len(chunk))})",
                (workspace_id, *chunk),
            )
            found.update(item_id for (item_id,) in rows)
        return found

    def _insert_audit(self, entries: Sequence[AuditEntry]) -> None:
        self._db.executemany(
            "INSERT INTO audit (workspace_id, item_id, restored_from, reason, at, content_hash, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    entry.workspace_id,
                    entry.item_id,
                    entry.restored_from,
                    entry.reason,
                    entry.at,
                    entry.content_hash,
                    json.dumps(entry.to_dict(), ensure_ascii=False),
                )
                for entry in entries
            ],
        )

    def _scrub_wal(self) -> None:
        """Move every page into the main file (where secure_delete zeroed the rows) and empty the WAL. If a
        reader in another process blocks the truncation, the WAL is still reset by the next checkpoint."""
        try:
            self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except sqlite3.OperationalError:
            return

    def _query_audit(self, where: str, params: tuple[object, ...], suffix: str = "") -> list[AuditEntry]:
        rows = self._retrying(
            lambda: self._db.execute(f"SELECT data FROM audit WHERE {where} {suffix}", params).fetchall()
        )
        return [AuditEntry.from_dict(json.loads(data)) for (data,) in rows]

    def audit_entries(
        self, workspace_id: str, *, limit: int | None = None, since: float | None = None
    ) -> list[AuditEntry]:
        suffix = "ORDER BY seq DESC" + ("" if limit is None else f" LIMIT {int(limit)}")
        if since is None:
            return self._query_audit("workspace_id = ?", (workspace_id,), suffix)
        return self._query_audit("workspace_id = ? AND at >= ?", (workspace_id, since), suffix)

    def audit_for_item(self, workspace_id: str, item_id: str) -> list[AuditEntry]:
        return self._query_audit(
            "workspace_id = ? AND (item_id = ? OR restored_from = ?)",
            (workspace_id, item_id, item_id),
            "ORDER BY seq",
        )

    def audit_by_hash(self, workspace_id: str, content_hash: str) -> list[AuditEntry]:
        return self._query_audit(
            "workspace_id = ? AND content_hash = ?", (workspace_id, content_hash), "ORDER BY seq"
        )

    def count_forgets(self, workspace_id: str) -> int:
        row = self._retrying(
            lambda: self._db.execute(
                f"SELECT COUNT(*) FROM audit WHERE workspace_id = ? AND reason IN ({_FORGET_REASON_LIST})",
                (workspace_id,),
            ).fetchone()
        )
        return int(row[0])

    def prune_audit(self, workspace_id: str, before: float) -> int:
        def prune() -> int:
            with self._transaction():
                cursor = self._db.execute(
                    "DELETE FROM audit WHERE workspace_id = ? AND at < ?", (workspace_id, before)
                )
                return cursor.rowcount

        pruned = self._retrying(prune)
        if pruned:
            self._scrub_wal()  # pruned entries may hold restorable content copies
        return pruned

    def changed_externally(self) -> bool:
        version = self._read_data_version()
        changed = version != self._data_version
        self._data_version = version
        return changed

    def close(self) -> None:
        self._db.close()
