"""SQLite store (stdlib `sqlite3`): the embedded default, one file shared safely by several processes.

- WAL journal; every write is one `BEGIN IMMEDIATE` transaction. A writer that finds the database locked waits
  (busy_timeout) and retries until `lock_timeout`, then raises StoreBusy — "database is locked" never escapes.
- Forgetting is physical, by crypto-shredding (`amnesia.stores.shredding`): every item (and every restorable
  audit copy) is stored sealed under a random key of its own, kept in a `content_keys` slot. Forgetting
  overwrites the slot with zeros in place, in the same transaction that deletes the row. SQLite may leave
  stale copies of sealed rows behind (a rebuilt b-tree page keeps old cells in its unallocated gap, which
  `secure_delete` does not zero); without the key they are noise. Key slots never move: a slot is only ever
  appended (SQLite then opens a new page rather than rebalancing) or overwritten with a value of the same
  size (SQLite then rewrites the cell in place), so a key is in exactly one cell of the file.
- The WAL is scrubbed after each shredding commit: `wal_checkpoint(TRUNCATE)` moves the zeroed slot into the
  main file and empties the WAL. A reader holding an older snapshot blocks that (after waiting up to
  lock_timeout for it); the store then leaves a `<db>-scrub` marker file, and every later call of any
  SQLiteStore on the file retries until a truncation succeeds (the marker is removed under the write lock,
  and only while the WAL is empty). Opening a store on a file whose WAL is not empty scrubs it too: that is
  the recovery for a process killed between a forget's commit and its scrub.
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
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TypeVar

from amnesia import keys
from amnesia.audit import FORGET_REASONS, AuditEntry, AuditRow, as_entry
from amnesia.checks import shown
from amnesia.config import DEFAULT_DB_PATH
from amnesia.errors import InvalidInput, StoreBusy, StoreConflict, StoreFull
from amnesia.item import MemoryItem
from amnesia.stores.shredding import FREE_KEY, new_key, seal, unseal

T = TypeVar("T")
_RETRY_PAUSE = 0.02
_ID_CHUNK = 500  # ids per `IN (...)` query, well under SQLite's bound-parameter limit

_FREE_KEY_SQL = f"x'{FREE_KEY.hex()}'"  # a key slot whose key was shredded (or never set)
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS items (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    workspace_id TEXT NOT NULL,
    data TEXT NOT NULL,
    key_slot INTEGER
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
    data TEXT NOT NULL,
    key_slot INTEGER
);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit (workspace_id, at);
CREATE INDEX IF NOT EXISTS audit_by_item ON audit (workspace_id, item_id);
CREATE INDEX IF NOT EXISTS audit_by_hash ON audit (workspace_id, content_hash);
CREATE TABLE IF NOT EXISTS content_keys (slot INTEGER PRIMARY KEY, key BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS content_keys_free ON content_keys (slot) WHERE key = {_FREE_KEY_SQL};
"""
# The first free slot, or the one after the last; an update of a free slot rewrites its cell in place.
_TAKE_ONE_SLOT = f"""
INSERT INTO content_keys (slot, key) VALUES (
    COALESCE(
        (SELECT slot FROM content_keys WHERE key = {_FREE_KEY_SQL} LIMIT 1),
        (SELECT COALESCE(MAX(slot), 0) + 1 FROM content_keys)
    ),
    ?
) ON CONFLICT(slot) DO UPDATE SET key = excluded.key RETURNING slot
"""
_FORGET_REASON_LIST = ",".join(f"'{reason}'" for reason in FORGET_REASONS)


def default_db_path() -> Path:
    return Path(os.environ.get("AMNESIA_DB") or DEFAULT_DB_PATH).expanduser()


def scrub_marker(db: Path) -> Path:
    """The file that exists while a shredding commit may have left a key in the WAL or an old page."""
    return db.with_name(db.name + "-scrub")


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
        self.scrub_marker = scrub_marker(self.path)
        self._scrub_marker_name = str(self.scrub_marker)  # os.path.exists on a str: checked on every call
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
        if self._retrying(self._rebuild_pending):
            self._rebuild()
        elif self._wal_bytes() > 0:  # e.g. a process killed between a forget's commit and its scrub
            self._scrub(wait=False)
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
        self._db.execute("PRAGMA temp_store=MEMORY")  # statement journals hold page images: not in /tmp
        with self._transaction():
            columns = {row[1] for row in self._db.execute("PRAGMA table_info(items)")}
            legacy = bool(columns) and "key_slot" not in columns  # written before content was sealed
            if legacy:
                self._db.execute("ALTER TABLE items ADD COLUMN key_slot INTEGER")
                self._db.execute("ALTER TABLE audit ADD COLUMN key_slot INTEGER")
            for statement in filter(str.strip, SCHEMA.split(";")):
                self._db.execute(statement)
            if legacy:
                self._seal_legacy_rows()

    def _seal_legacy_rows(self) -> None:
        """Seal the plaintext rows of a database from before crypto-shredding, and ask for a rebuild (VACUUM)
        so that no plaintext copy stays in a page."""
        items = self._db.execute("SELECT seq, data FROM items WHERE key_slot IS NULL").fetchall()
        audit = [
            (seq, data)
            for seq, data in self._db.execute("SELECT seq, data FROM audit WHERE key_slot IS NULL")
            if _carries_content(AuditEntry.from_dict(json.loads(data)))
        ]
        for table, rows in (("items", items), ("audit", audit)):
            sealed = self._sealed([str(data).encode("utf-8") for _, data in rows])
            self._db.executemany(
                f"UPDATE {table} SET data = ?, key_slot = ? WHERE seq = ?",
                [(data, slot, seq) for (seq, _), (slot, data) in zip(rows, sealed, strict=True)],
            )
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('rebuild_pending', 1)")

    def _rebuild_pending(self) -> bool:
        return self._db.execute("SELECT 1 FROM meta WHERE key = 'rebuild_pending'").fetchone() is not None

    def _rebuild(self) -> None:
        """Rewrite every page (VACUUM) once plaintext or a key was deleted the ordinary way, then scrub."""
        self._retrying(lambda: self._db.execute("VACUUM"))

        def done() -> None:
            with self._transaction():
                self._db.execute("DELETE FROM meta WHERE key = 'rebuild_pending'")

        self._retrying(done)
        self._scrub(wait=True)

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
                # The deleted row may have left copies in its page: the rebuild rewrites every page.
                self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('rebuild_pending', 1)")
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
            if self._db.in_transaction:  # SQLite rolls back by itself on some errors (SQLITE_FULL)
                self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def _retrying(self, operation: Callable[[], T]) -> T:
        """Run `operation` (a whole transaction), retrying while another process holds the lock. A scrub
        that an earlier commit (of any process) could not finish is retried first."""
        self._scrub_if_pending()
        deadline = time.monotonic() + self.lock_timeout
        while True:
            try:
                return operation()
            except sqlite3.OperationalError as error:
                message = str(error)
                if "full" in message:  # SQLITE_FULL: the disk, or max_page_count
                    raise StoreFull(
                        f"db: {shown(self.path)}: no room to write ({message}); nothing was changed"
                    ) from None
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
                "SELECT items.data, content_keys.key FROM items "
                "JOIN content_keys ON content_keys.slot = items.key_slot "
                "WHERE items.workspace_id = ? ORDER BY items.seq",
                (workspace_id,),
            ).fetchall()
        )
        self._data_version = self._read_data_version()
        return [MemoryItem.from_dict(json.loads(unseal(key, data))) for data, key in rows]

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
            self._scrub(wait=True)
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
            slots = self._key_slots(workspace_id, [entry.item_id for entry in forget])
            due = list({entry.item_id: entry for entry in forget if entry.item_id in slots}.values())
            self._insert_audit([*due, *audit])  # the audit lines first, then the content goes
            self._shred([slots[entry.item_id] for entry in due])
            self._db.executemany("DELETE FROM items WHERE id = ?", [(entry.item_id,) for entry in due])
            # Another process may have forgotten an item this caller still holds (a touch, a status change):
            # saving it would bring forgotten content back, so saves of audited-as-forgotten ids are dropped.
            gone = self._forgotten_ids(workspace_id, [item.id for item in save])
            self._save_items([item for item in save if item.id not in gone])
        return [entry.item_id for entry in due]

    def _key_slots(self, workspace_id: str, ids: Sequence[str]) -> dict[str, int]:
        """The key slot of each of `ids` that is stored in the workspace."""
        found: dict[str, int] = {}
        for chunk, marks in _chunks(ids):
            # `+workspace_id`: look the ids up in the unique id index; with the (workspace_id, seq) index the
            # planner scanned the whole workspace per chunk, which made a big sweep quadratic.
            rows = self._db.execute(
                f"SELECT id, key_slot FROM items WHERE +workspace_id = ? AND id IN ({marks})",
                (workspace_id, *chunk),
            )
            found.update(rows)
        return found

    def _forgotten_ids(self, workspace_id: str, ids: Sequence[str]) -> set[str]:
        found: set[str] = set()
        for chunk, marks in _chunks(ids):
            rows = self._db.execute(
                f"SELECT item_id FROM audit WHERE workspace_id = ? AND reason IN ({_FORGET_REASON_LIST}) "
                f"AND item_id IN ({marks})",
                (workspace_id, *chunk),
            )
            found.update(item_id for (item_id,) in rows)
        return found

    def _save_items(self, items: Sequence[MemoryItem]) -> None:
        """Insert or update `items`, each sealed under its key: a stored item keeps its key (and slot), a new
        one gets a fresh key."""
        held: dict[str, tuple[int, bytes]] = {}
        for chunk, marks in _chunks([item.id for item in items]):
            rows = self._db.execute(
                "SELECT items.id, content_keys.slot, content_keys.key FROM items "
                f"JOIN content_keys ON content_keys.slot = items.key_slot WHERE items.id IN ({marks})",
                chunk,
            )
            held.update((item_id, (slot, key)) for item_id, slot, key in rows)
        fresh = [item_id for item_id in dict.fromkeys(item.id for item in items) if item_id not in held]
        fresh_keys = [new_key() for _ in fresh]
        held.update(zip(fresh, zip(self._take_slots(fresh_keys), fresh_keys, strict=True), strict=True))
        rows = []
        for item in items:
            slot, key = held[item.id]
            plaintext = json.dumps(item.to_dict(), ensure_ascii=False).encode("utf-8")
            rows.append((item.id, item.workspace_id, slot, seal(key, plaintext)))
        self._db.executemany(
            "INSERT INTO items (id, workspace_id, key_slot, data) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(id) DO UPDATE SET data = excluded.data, workspace_id = excluded.workspace_id, "
            "key_slot = excluded.key_slot",
            rows,
        )

    def _take_slots(self, new_keys: Sequence[bytes]) -> list[int]:
        """Store `new_keys` in key slots: shredded slots first, overwritten in place (a value of the same
        size), then new slots after the last one (appended, so no page holding a key is rebalanced)."""
        if len(new_keys) == 1:  # a single write, in one statement: a free slot's update, or an append
            (slot,) = self._db.execute(_TAKE_ONE_SLOT, new_keys).fetchone()
            return [slot]
        free = [
            slot
            for (slot,) in self._db.execute(
                f"SELECT slot FROM content_keys WHERE key = {_FREE_KEY_SQL} LIMIT ?", (len(new_keys),)
            )
        ]
        self._db.executemany(
            "UPDATE content_keys SET key = ? WHERE slot = ?", zip(new_keys, free, strict=False)
        )
        (last,) = self._db.execute("SELECT COALESCE(MAX(slot), 0) FROM content_keys").fetchone()
        appended = list(range(last + 1, last + 1 + len(new_keys) - len(free)))
        rest = new_keys[len(free) :]
        self._db.executemany(
            "INSERT INTO content_keys (slot, key) VALUES (?, ?)", zip(appended, rest, strict=True)
        )
        return free + appended

    def _sealed(self, plaintexts: Sequence[bytes]) -> list[tuple[int, bytes]]:
        """Each plaintext sealed under a fresh key, with the slot that key went to."""
        new_keys = [new_key() for _ in plaintexts]
        slots = self._take_slots(new_keys)
        return [(slot, seal(key, text)) for slot, key, text in zip(slots, new_keys, plaintexts, strict=True)]

    def _shred(self, slots: Sequence[int | None]) -> None:
        """Overwrite the keys in `slots` with zeros, in place."""
        shredded = [(slot,) for slot in slots if slot is not None]
        if shredded:
            self._db.executemany(f"UPDATE content_keys SET key = {_FREE_KEY_SQL} WHERE slot = ?", shredded)

    def _insert_audit(self, entries: Sequence[AuditEntry]) -> None:
        texts = [json.dumps(entry.to_dict(), ensure_ascii=False) for entry in entries]
        carrying = [index for index, entry in enumerate(entries) if _carries_content(entry)]
        sealed = (
            dict(
                zip(carrying, self._sealed([texts[index].encode("utf-8") for index in carrying]), strict=True)
            )
            if carrying
            else {}
        )
        self._db.executemany(
            "INSERT INTO audit (workspace_id, item_id, restored_from, reason, at, content_hash, data, "
            "key_slot) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    entry.workspace_id,
                    entry.item_id,
                    entry.restored_from,
                    entry.reason,
                    entry.at,
                    entry.content_hash,
                    *(sealed[index][::-1] if index in sealed else (texts[index], None)),
                )
                for index, entry in enumerate(entries)
            ],
        )

    def _scrub(self, *, wait: bool) -> None:
        """Move every page into the main file and truncate the WAL, so that no shredded key is left in either
        (then remove the scrub marker, if any). A reader on an older snapshot blocks the truncation: with
        `wait`, the busy handler waits for it up to lock_timeout; otherwise this gives up at once. Either way
        the marker is then left, and the next call of any store on the file retries."""
        if not wait:
            self._db.execute("PRAGMA busy_timeout = 0")
        try:
            (busy, _, _) = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            if busy:
                self._leave_scrub_marker()
            elif os.path.exists(self._scrub_marker_name):
                with self._transaction():  # under the write lock: no commit slips in between
                    if self._wal_bytes() == 0:  # truncated after the last commit: every page is clean
                        self.scrub_marker.unlink(missing_ok=True)
        except sqlite3.OperationalError:  # locked, busy or full
            self._leave_scrub_marker()
        finally:
            if not wait:
                self._db.execute(f"PRAGMA busy_timeout = {int(self.lock_timeout * 1000)}")

    def _leave_scrub_marker(self) -> None:
        # On a full disk the marker may not be written: the next open, which scrubs a WAL that is not
        # empty, still does the work.
        with suppress(OSError):
            self.scrub_marker.touch(mode=0o600)

    def _wal_bytes(self) -> int:
        try:
            return self.path.with_name(self.path.name + "-wal").stat().st_size
        except FileNotFoundError:
            return 0

    def _scrub_if_pending(self) -> None:
        if os.path.exists(self._scrub_marker_name):
            self._scrub(wait=False)

    def _query_audit(self, where: str, params: tuple[object, ...], suffix: str = "") -> list[AuditEntry]:
        rows = self._retrying(
            lambda: self._db.execute(
                "SELECT audit.data, content_keys.key FROM audit "
                f"LEFT JOIN content_keys ON content_keys.slot = audit.key_slot WHERE {where} {suffix}",
                params,
            ).fetchall()
        )
        return [
            AuditEntry.from_dict(json.loads(data if key is None else unseal(key, data))) for data, key in rows
        ]

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
        def prune() -> tuple[int, bool]:
            with self._transaction():
                where = "WHERE workspace_id = ? AND at < ?"
                slots = [
                    s
                    for (s,) in self._db.execute(
                        f"SELECT key_slot FROM audit {where}", (workspace_id, before)
                    )
                ]
                self._shred(slots)  # pruned entries may hold restorable content copies
                cursor = self._db.execute(f"DELETE FROM audit {where}", (workspace_id, before))
                return cursor.rowcount, any(slot is not None for slot in slots)

        pruned, shredded = self._retrying(prune)
        if shredded:
            self._scrub(wait=True)
        return pruned

    def changed_externally(self) -> bool:
        self._scrub_if_pending()
        version = self._read_data_version()
        changed = version != self._data_version
        self._data_version = version
        return changed

    def close(self) -> None:
        self._scrub_if_pending()
        self._db.close()


def _chunks(ids: Sequence[str]) -> Iterator[tuple[Sequence[str], str]]:
    """`ids` in chunks of at most _ID_CHUNK, each with its `?,?,...` placeholders."""
    for start in range(0, len(ids), _ID_CHUNK):
        chunk = ids[start : start + _ID_CHUNK]
        yield chunk, ",".join("?" * len(chunk))


def _carries_content(entry: AuditEntry) -> bool:
    """A restorable audit entry keeps the content (and the item's other fields): it is sealed like an item."""
    return entry.content is not None or entry.restore_fields is not None
