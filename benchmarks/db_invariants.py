"""What "nothing lost, nothing half-done" means for an Amnesia SQLite file, checked against a ledger of what
the clients were told (shared by crash_safety.py and concurrency.py).

Clients append one JSON line per event to a ledger file and flush it: an `intent` before each operation
(with the content, for writes) and an `ack` after the engine returned. After a crash or a concurrent run,
`check_database` opens the raw file and reports every broken promise:

- the file passes `PRAGMA integrity_check`, and every stored item parses and validates (no half-written item);
- no live item has a forget entry in the audit (no audit entry whose forget did not happen);
- no item has two forget entries, no content is stored twice, and no stored content was never asked for;
- every acknowledged write is live with the same content, or audited as forgotten with the keyed hash of
  that content (nothing gone without its audit line);
- every id an acknowledged forget/sweep/eviction/supersession reported is gone and audited;
- the live items fit `max_store_bytes` and no two live items share a key in one scope.

`scan_forgotten` is the forensic check: it greps every byte of the database, its -wal, -shm, any journal and
the scrub marker for each forgotten memory's text and for the content key it was sealed under (clients log
each write's key in their ack line, read while the memory was live).
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from amnesia.audit import FORGET_REASONS, content_hash
from amnesia.config import Config
from amnesia.item import MemoryItem, validate_item
from amnesia.keys import existing_key
from amnesia.stores.forensics import content_keys, scan
from amnesia.stores.shredding import unseal


@dataclass
class Ledger:
    """What the clients attempted and what they were told succeeded."""

    attempted: set[str] = field(default_factory=set)  # every content a write was started with
    written: dict[str, str] = field(default_factory=dict)  # acknowledged write: id -> content
    keys: dict[str, bytes] = field(default_factory=dict)  # acknowledged write: id -> its content key
    forgotten: set[str] = field(default_factory=set)  # ids an acknowledged operation reported as forgotten
    acks: Counter[str] = field(default_factory=Counter)  # acknowledged operations per kind
    in_flight: Counter[str] = field(default_factory=Counter)  # operations started and never acknowledged

    def read(self, path: Path) -> None:
        """Fold one client's ledger file in: a `start` line opens each process's stretch; an intent without
        its ack (or a line cut by the kill) is the operation that was in flight."""
        pending: str | None = None
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue  # the last line, cut by the kill
            if event["t"] == "start":  # a new process appends to the same file: the last one was killed
                if pending is not None:
                    self.in_flight[pending] += 1
                pending = None
                continue
            if event["t"] == "intent":
                pending = event["op"]
                if "content" in event:
                    self.attempted.add(event["content"])
                continue
            pending = None
            self.acks[event["op"]] += 1
            if "id" in event:
                self.written[event["id"]] = event["content"]
            if event.get("key"):
                self.keys[event["id"]] = bytes.fromhex(event["key"])
            self.forgotten.update(event.get("gone", ()))
        if pending is not None:
            self.in_flight[pending] += 1


def read_ledgers(paths: Iterable[Path]) -> Ledger:
    ledger = Ledger()
    for path in paths:
        if path.exists():
            ledger.read(path)
    return ledger


@dataclass(frozen=True)
class Verdict:
    problems: list[str]
    live: int
    forgotten: set[str]  # ids the audit records as forgotten
    forget_entries: int
    writes_checked: int
    forgets_checked: int


def check_database(db_path: Path, ledger: Ledger, config: Config) -> Verdict:
    db = sqlite3.connect(db_path)
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        store_id = db.execute("SELECT value FROM meta WHERE key = 'store_id'").fetchone()[0]
        rows = db.execute(
            "SELECT items.id, items.data, content_keys.key FROM items "
            "LEFT JOIN content_keys ON content_keys.slot = items.key_slot"
        ).fetchall()
        audit = db.execute("SELECT item_id, reason, content_hash FROM audit").fetchall()
    finally:
        db.close()
    secret, _ = existing_key(store_id)  # the audit key lives outside the database (amnesia.keys)
    problems = [] if integrity == "ok" else [f"integrity_check: {integrity}"]
    live: dict[str, MemoryItem] = {}
    for item_id, data, key in rows:
        try:
            if key is None:
                raise ValueError("no content key")
            item = MemoryItem.from_dict(json.loads(unseal(key, data)))
            validate_item(item, max_item_bytes=config.max_item_bytes)
        except (ValueError, TypeError) as error:
            problems.append(f"half-written item {item_id}: {error}")
            continue
        live[item.id] = item
    forget_hashes: dict[str, str] = {}
    forget_counts: Counter[str] = Counter()
    for item_id, reason, digest in audit:
        if reason in FORGET_REASONS:
            forget_counts[item_id] += 1
            forget_hashes[item_id] = digest
    problems += [f"{i}: audited as forgotten but still stored" for i in live.keys() & forget_hashes.keys()]
    problems += [f"{i}: {n} forget entries" for i, n in forget_counts.items() if n > 1]
    contents = Counter(item.content for item in live.values())
    problems += [f"content stored {n} times: {c[:40]!r}" for c, n in contents.items() if n > 1]
    problems += [
        f"{i}: stored content nobody wrote" for i, it in live.items() if it.content not in ledger.attempted
    ]
    for item_id, content in ledger.written.items():
        if item_id in live:
            if live[item_id].content != content:
                problems.append(f"{item_id}: stored content differs from the acknowledged write")
        elif item_id not in forget_hashes:
            problems.append(f"{item_id}: acknowledged write is neither stored nor audited (lost)")
        elif forget_hashes[item_id] != content_hash(secret, content):
            problems.append(f"{item_id}: audit hash does not match the written content")
    for item_id in ledger.forgotten:
        if item_id in live:
            problems.append(f"{item_id}: acknowledged as forgotten but still stored")
        elif item_id not in forget_hashes:
            problems.append(f"{item_id}: acknowledged as forgotten but not audited")
    stored_bytes = sum(item.size_bytes for item in live.values())
    if stored_bytes > config.max_store_bytes:
        problems.append(f"{stored_bytes} bytes stored, over max_store_bytes {config.max_store_bytes}")
    keys = Counter((i.key, i.scope, i.owner_id) for i in live.values() if i.key is not None)
    problems += [f"key {k[0]!r} held by {n} live items" for k, n in keys.items() if n > 1]
    return Verdict(
        problems=problems,
        live=len(live),
        forgotten=set(forget_hashes),
        forget_entries=sum(forget_counts.values()),
        writes_checked=len(ledger.written),
        forgets_checked=len(ledger.forgotten),
    )


def key_of(db_path: Path, item_id: str) -> str:
    """The content key of a live item as hex, read by a client right after its write ("" if another process
    has already forgotten it); the forensic scans look for it once the item is forgotten."""
    return content_keys(db_path, [item_id]).get(item_id, b"").hex()


@dataclass
class ForensicTally:
    """Raw-byte scans for forgotten memories, added up over a run."""

    scans: int = 0
    files: int = 0
    bytes_read: int = 0
    forgotten_checked: int = 0  # forgotten memories looked for, summed over the scans
    found: int = 0  # forgotten memories found (text or key), summed over the scans
    found_bytes: int = 0

    def scan(
        self,
        db_path: Path,
        ledger: Ledger,
        forgotten: Iterable[str],
        blobs: list[tuple[str, bytes]] | None = None,
    ) -> list[str]:
        """Grep every byte of the database's files (or `blobs`, read before) for each forgotten memory's text
        (as the client wrote it) and its content key; returns one line per string found."""
        needles: dict[str, bytes] = {}
        for item_id in forgotten:
            if item_id in ledger.written:
                needles[f"{item_id} text"] = ledger.written[item_id].encode("utf-8")
            if item_id in ledger.keys:
                needles[f"{item_id} key"] = ledger.keys[item_id]
        result = scan(db_path, needles, blobs)
        self.scans += 1
        self.files += result.files
        self.bytes_read += result.bytes_read
        self.forgotten_checked += len({label.split()[0] for label in needles})
        self.found += len(result.found)
        self.found_bytes += result.found_bytes
        return [f"forgotten {label} found in {', '.join(names)}" for label, names in result.found.items()]

    def figures(self) -> dict[str, int]:
        return {
            "scans": self.scans,
            "files_scanned": self.files,
            "bytes_scanned": self.bytes_read,
            "forgotten_checked": self.forgotten_checked,
            "forgotten_found": self.found,
            "forgotten_bytes_found": self.found_bytes,
        }


def print_figures(figures: dict, as_json: bool, most_problems: int | None = None) -> int:
    """Print a benchmark's figures (JSON, or one `name: value` line each, then the problems); exit code 1 if
    any problem was found."""
    if as_json:
        print(json.dumps(figures))
    else:
        for name, value in figures.items():
            if name != "problems":
                print(f"{name}: {value}")
        print(f"problems: {len(figures['problems'])}")
        for problem in figures["problems"][:most_problems]:
            print(f"  {problem}")
    return 1 if figures["problems"] else 0
