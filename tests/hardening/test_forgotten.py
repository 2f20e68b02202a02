"""Forgotten means gone: after a forget, an expiry, an eviction, a supersession or the end of a sub-agent, the
content, and the content key it was sealed under, are absent from the raw bytes of the database file and its
side files (see also test_forensic.py), from the engine's cache and views,
from the audit (unless restorable mode keeps it, until pruned) and from every later prompt of a run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amnesia import Amnesia, Config, SimulatedClock, SQLiteStore
from amnesia.relevance import terms
from amnesia.stores.forensics import content_keys, database_files
from amnesia_bench.cli import app

SECRET_EN = "Zebracorn-4471 is the name of the blue staging harbor"
SECRET_ZH = "斑马角兽四四七一是蓝色预发布港口的名字"
FILLER = [f"Filler memory number {n} about the weekly deploy rota." for n in range(40)]


def _raw_bytes(db: Path) -> bytes:
    """Every byte SQLite and the store keep for this database: the main file, the WAL, the shared-memory
    index, any journal and the scrub marker."""
    return b"".join(path.read_bytes() for path in database_files(db))


def _present_anywhere(engine: Amnesia, db: Path, text: str, keys: list[bytes]) -> list[str]:
    """Where `text` can still be read; `keys` are the content keys it was sealed under (with one of them,
    any sealed copy left in the files reads as the text)."""
    where = []
    raw = _raw_bytes(db)
    if text.encode("utf-8") in raw or any(key in raw for key in keys):
        where.append("database files")
    if any(text in item.content for item in engine._items.values()):
        where.append("engine cache")
    queried = engine.preview(query=text).to_dict()
    del queried["query"]  # the caller's own text, echoed back: everything else must not hold it
    views = [p.to_dict() for p in engine.plugs()] + [engine.status().to_dict(), engine.preview().to_dict()]
    if text in json.dumps([*views, queried], ensure_ascii=False):
        where.append("views")
    relevance = engine._index.relevance  # injection_order "relevance": the BM25 postings of the live items
    others = [item.content for item in engine._items.values() if text not in item.content]
    live_terms = {term for content in others for term in terms(content)}  # other live items' terms stay
    if relevance is not None and (set(terms(text)) - live_terms) & set(relevance.postings):
        where.append("relevance index")
    if text in json.dumps([e.to_dict() for e in engine.audit(limit=None)], ensure_ascii=False):
        where.append("audit")
    return where


def _engine(db: Path, clock: SimulatedClock, **config: object) -> Amnesia:
    return Amnesia(store=SQLiteStore(db), config=Config(**config), clock=clock)  # type: ignore[arg-type]


def _forget_by_id(engine: Amnesia, clock: SimulatedClock, item_id: str) -> None:
    engine.forget(item_id)


def _expire(engine: Amnesia, clock: SimulatedClock, item_id: str) -> None:
    clock.advance(2 * 3_600)
    engine.sweep()


def _evict(engine: Amnesia, clock: SimulatedClock, item_id: str) -> None:
    clock.advance(60)  # the secret is now the weakest memory: the next writes evict it first
    for n in range(60):
        engine.remember(f"Newer memory {n} that needs room in the small store.", ttl="30d")


def _supersede(engine: Amnesia, clock: SimulatedClock, item_id: str) -> None:
    engine.remember("The staging harbor was renamed; ask the on-call lead.", ttl="30d", key="harbor")


def _end_agent(engine: Amnesia, clock: SimulatedClock, item_id: str) -> None:
    engine.end_agent("sub-1")


PATHS: dict[str, tuple[Callable[[Amnesia, SimulatedClock, str], None], dict[str, object], str]] = {
    "manual": (_forget_by_id, {}, "manual"),
    "expiry": (_expire, {"ttl": "1h"}, "expired"),
    "eviction": (_evict, {"ttl": "1d"}, "evicted"),
    "supersession": (_supersede, {"key": "harbor"}, "superseded"),
    "agent end": (_end_agent, {"scope": "session", "owner_id": "sub-1"}, "agent-disposed"),
}


@pytest.mark.parametrize("order", ["strength", "relevance"])
@pytest.mark.parametrize("secret", [SECRET_EN, SECRET_ZH], ids=["en", "zh"])
@pytest.mark.parametrize("path", list(PATHS))
def test_forgotten_content_is_gone_from_every_byte(
    tmp_path: Path, path: str, secret: str, order: str
) -> None:
    forget, options, reason = PATHS[path]
    db, clock = tmp_path / "memory.db", SimulatedClock(1_000.0)
    engine = _engine(db, clock, max_store_bytes=4_096, injection_order=order)
    for text in FILLER[:20]:
        engine.remember(text, ttl="30d")
    view = engine.remember(secret, **options)  # type: ignore[arg-type]
    keys = list(content_keys(db, [view.id]).values())
    for text in FILLER[20:30]:
        engine.remember(text, ttl="30d")
    assert secret.encode("utf-8") not in _raw_bytes(db)  # stored sealed, never in the clear
    assert keys and keys[0] in _raw_bytes(db)  # the scan does see the key of content that is stored
    if order == "relevance":  # the scans do see it in the index and in a query's explanations
        assert _present_anywhere(engine, db, secret, keys) == [
            "database files",
            "engine cache",
            "views",
            "relevance index",
        ]
    forget(engine, clock, view.id)
    assert engine.inspect(view.id) is None
    assert _present_anywhere(engine, db, secret, keys) == []
    assert [e.reason for e in engine.verify(secret)] == [reason]  # provable by keyed hash, not by content
    engine.close()
    assert secret.encode("utf-8") not in _raw_bytes(db) and keys[0] not in _raw_bytes(db)
    reopened = _engine(db, clock, max_store_bytes=4_096, injection_order=order)
    assert _present_anywhere(reopened, db, secret, keys) == []
    assert {path.name for path in tmp_path.iterdir()} <= {"memory.db", "memory.db-shm", "memory.db-wal"}


def test_restorable_mode_keeps_content_in_the_audit_only_until_it_is_pruned(tmp_path: Path) -> None:
    db, clock = tmp_path / "memory.db", SimulatedClock(1_000.0)
    engine = _engine(db, clock, restorable=True, audit_retention="7d")
    view = engine.remember(SECRET_EN, ttl="1d")
    keys = list(content_keys(db, [view.id]).values())
    engine.forget(view.id)
    keys += content_keys(db, [view.id], table="audit").values()  # the audit copy is sealed under its own
    # The documented exception: the audit (a table of the same file) keeps a copy for restore().
    assert _present_anywhere(engine, db, SECRET_EN, keys) == ["database files", "audit"]
    assert keys[0] not in _raw_bytes(db)  # the item's own key is gone; the copy's key is there
    clock.advance(8 * 86_400)
    engine.sweep()  # prunes audit entries older than audit_retention
    assert _present_anywhere(engine, db, SECRET_EN, keys) == []
    engine.close()
    assert not any(needle in _raw_bytes(db) for needle in [SECRET_EN.encode("utf-8"), *keys])


FORGET_TASK = {
    "id": "harmful/forget-harbor",
    "group": "harmful",
    "category": "explicit-forget",
    "description": "A memory the user withdraws, and one that expires, never reach a later prompt.",
    "sessions": [
        {
            "at": "0s",
            "turns": [
                {
                    "user": "Note the harbor name for this week.",
                    "remember": [
                        {"content": f"{SECRET_EN}.", "ttl": "30d", "tags": ["harbor"]},
                        {"content": f"{SECRET_ZH}。", "ttl": "2h"},
                    ],
                },
                {"user": "Thanks, that is all."},
            ],
        },
        {"at": "1h", "turns": [{"user": "Please drop the harbor note.", "forget": {"tags": ["harbor"]}}]},
        {"at": "1d", "turns": [{"user": "What is the staging harbor called?", "probe": {"abstain": True}}]},
        {"at": "2d", "turns": [{"user": "Anything I asked you to remember?"}]},
    ],
}


@pytest.mark.parametrize("arm", ["amnesia", "full-memory"])
def test_no_prompt_after_the_forget_carries_the_content(write_tasks, tmp_path: Path, arm: str) -> None:
    tasks = write_tasks(tmp_path / "tasks", [FORGET_TASK])
    out = tmp_path / "run"
    args = ["run", "--no-progress", "--no-report", "--tasks", str(tasks), "--arms", arm, "--out", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in next((out / "logs").rglob("*.jsonl")).read_text().splitlines()]
    writes = {r["item_id"]: r["content"] for r in records if r["type"] == "memory_write"}
    checked = 0
    for record in records:
        if record["type"] != "memory_forget":
            continue
        content = writes[record["item_id"]]
        later = [r for r in records if r["seq"] > record["seq"] and r["type"] in ("model_call", "injection")]
        assert later, "the forget happened after the last prompt: nothing to check"
        assert all(content not in json.dumps(r, ensure_ascii=False) for r in later), content
        checked += 1
    forgotten = {writes[r["item_id"]] for r in records if r["type"] == "memory_forget"}
    assert f"{SECRET_EN}." in forgotten  # the explicit forget happened on every arm
    if arm == "amnesia":
        assert f"{SECRET_ZH}。" in forgotten  # and the 2h memory expired
    assert checked == len(forgotten)
