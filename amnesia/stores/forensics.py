"""What a forensic examiner holding the files of a SQLite store could read: the raw bytes of the database,
its `-wal`, `-shm`, any rollback journal and the scrub marker, searched for byte strings (a forgotten
memory's text, or the content key it was sealed under, which would unseal every leftover copy of it).

The tests and the crash and concurrency benchmarks use it to check that forgetting leaves nothing behind;
`content_keys` reads the keys of live items, so that a caller can look for them again after the forget.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

SIDE_FILES = ("-wal", "-shm", "-journal", "-scrub")


def database_files(db: Path) -> list[Path]:
    """The database file and every side file SQLite or the store keeps next to it, those that exist."""
    candidates = [db, *(db.with_name(db.name + suffix) for suffix in SIDE_FILES)]
    return [path for path in candidates if path.exists()]


def content_keys(db: Path, ids: list[str] | None = None, *, table: str = "items") -> dict[str, bytes]:
    """The content key of each live item (of `ids`, or all), read through a connection of its own. With
    `table="audit"`: the keys of the restorable audit copies, by the forgotten item's id."""
    item_id = "id" if table == "items" else "item_id"
    connection = sqlite3.connect(db)
    try:
        rows = connection.execute(
            f"SELECT {table}.{item_id}, content_keys.key FROM {table} "
            f"JOIN content_keys ON content_keys.slot = {table}.key_slot"
        ).fetchall()
    finally:
        connection.close()
    wanted = None if ids is None else set(ids)
    return {item: bytes(key) for item, key in rows if wanted is None or item in wanted}


@dataclass(frozen=True)
class Scan:
    """One raw-byte scan: how much was read and which searched strings were found where."""

    files: int  # files read
    bytes_read: int
    searched: int  # strings searched for
    found: dict[str, list[str]]  # label -> the names of the files the string was found in
    found_bytes: int  # the found strings' lengths, once per file they were found in


def read_files(db: Path) -> list[tuple[str, bytes]]:
    """Every byte of the database's files, by file name."""
    return [(path.name, path.read_bytes()) for path in database_files(db)]


def scan(db: Path, needles: Mapping[str, bytes], blobs: list[tuple[str, bytes]] | None = None) -> Scan:
    """Search every byte of the database's files (or of `blobs`, read earlier with `read_files`) for each
    of `needles` (label -> bytes)."""
    blobs = read_files(db) if blobs is None else blobs
    found = {
        label: names
        for label, needle in needles.items()
        if (names := [name for name, blob in blobs if needle in blob])
    }
    return Scan(
        files=len(blobs),
        bytes_read=sum(len(blob) for _, blob in blobs),
        searched=len(needles),
        found=found,
        found_bytes=sum(len(needles[label]) * len(names) for label, names in found.items()),
    )
