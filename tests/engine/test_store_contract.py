"""The Store interface, checked identically on both backends."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, InMemoryStore, MemoryItem, SimulatedClock, SQLiteStore
from amnesia.audit import AuditEntry, content_hash


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path):
    made = (
        InMemoryStore(secret=b"k" * 32)
        if request.param == "memory"
        else SQLiteStore(tmp_path / "s.db", secret=b"k" * 32)
    )
    yield made
    made.close()


def item(item_id: str, workspace: str = "w") -> MemoryItem:
    return MemoryItem(id=item_id, content=f"content {item_id}", workspace_id=workspace, ttl=10.0, tags=("t",))


def entry(item_id: str, at: float, workspace: str = "w") -> AuditEntry:
    return AuditEntry(item_id, "fact", "manual", at, content_hash(b"k" * 32, f"content {item_id}"), workspace)


def test_save_load_forget_round_trip(store):
    store.commit("w", save=[item("a"), item("b")])
    store.commit("v", save=[item("c", "v")])
    assert [i.id for i in store.load_items("w")] == ["a", "b"]
    assert store.load_items("w")[0].tags == ("t",)
    assert store.commit("w", forget=[entry("a", 1.0)]) == ["a"]
    assert store.commit("w", forget=[entry("a", 2.0)]) == []  # second delete: no-op, no second entry
    assert [e.item_id for e in store.audit_entries("w")] == ["a"]
    assert store.count_forgets("w") == 1 and store.count_forgets("v") == 0
    assert [i.id for i in store.load_items("w")] == ["b"]


def test_audit_queries_and_pruning(store):
    store.commit("w", save=[item(x) for x in "abc"])
    store.commit("w", forget=[entry("a", 1.0), entry("b", 5.0), entry("c", 9.0)])
    assert [e.item_id for e in store.audit_entries("w", limit=2)] == ["c", "b"]
    assert [e.item_id for e in store.audit_entries("w", since=5.0)] == ["c", "b"]
    assert [e.item_id for e in store.audit_by_hash("w", content_hash(b"k" * 32, "content b"))] == ["b"]
    assert store.prune_audit("w", before=5.0) == 1
    assert [e.item_id for e in store.audit_for_item("w", "b")] == ["b"]
    assert store.secret == b"k" * 32


operations = st.lists(
    st.one_of(
        st.tuples(
            st.just("remember"),
            st.sampled_from(["tea is oolong", "deploy on friday", "北京会议"]),
            st.sampled_from([30, 300, 3000]),
            st.booleans(),
        ),
        st.tuples(st.just("advance"), st.sampled_from([5, 60, 400])),
        st.tuples(st.just("select"), st.sampled_from([40, 200])),
        st.tuples(st.just("forget"), st.sampled_from(["oolong", "friday"])),
        st.tuples(
            st.just("sweep"),
        ),
    ),
    max_size=25,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(operations)
def test_both_stores_behave_identically_and_sqlite_survives_reopening(tmp_path: Path, ops):
    path = tmp_path / f"parity-{len(list(tmp_path.iterdir()))}.db"

    def engine(store):
        counter = itertools.count()
        return Amnesia(store=store, clock=clock, id_factory=lambda: f"m-{next(counter):04d}")

    clock = SimulatedClock(0)
    memory, sqlite = engine(InMemoryStore(secret=b"k" * 32)), engine(SQLiteStore(path, secret=b"k" * 32))
    for op in ops:
        results = []
        for target in (memory, sqlite):
            if op[0] == "remember":
                results.append(target.remember(op[1], ttl=op[2], pin=op[3]).id)
            elif op[0] == "select":
                results.append(target.select_for_injection(op[1]).block)
            elif op[0] == "forget":
                results.append(target.forget(query=op[1]).ids)
            elif op[0] == "sweep":
                results.append(target.sweep().ids)
        if op[0] == "advance":
            clock.advance(op[1])
        assert results[:1] == results[1:]
    assert [p.to_dict() for p in memory.plugs()] == [p.to_dict() for p in sqlite.plugs()]
    assert memory.audit(limit=None) == sqlite.audit(limit=None)
    sqlite.close()
    reopened = engine(SQLiteStore(path))
    assert [p.to_dict() for p in reopened.plugs()] == [p.to_dict() for p in memory.plugs()]
    reopened.close()
