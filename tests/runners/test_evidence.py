"""Evidence retention in the runner: each probe with evidence logs what became of the task's writes that
carry it (injected / stored, not injected / forgotten / never stored), read through the arm protocol only."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia.tokens import count_tokens
from arms.base import MemoryContext
from runners.evidence import EvidenceTracker
from tasks.importers.common import parse_ttl_policy
from tasks.importers.locomo import import_locomo
from tasks.logschema import MemoryForget, MemoryTouch, MemoryWrite
from tasks.spec import RememberSpec


def test_tracker_ties_items_to_writes_and_counts_each_state():
    logged = []
    tracker = EvidenceTracker(logged.append)
    specs = [RememberSpec(content=f"fact {i}", refs=(f"D1:{i}",)) for i in range(4)]
    with tracker.writing(specs[0]):
        tracker.log(MemoryWrite(item_id="m-1", content="fact 0"))
    with tracker.writing(specs[1]):
        tracker.log(MemoryWrite(item_id="m-2", content="fact 1"))
    with tracker.writing(specs[2]):  # an arm that folds a write into an existing memory touches it instead
        tracker.log(MemoryTouch(item_id="m-1", reason="reinforce"))
        tracker.log(MemoryForget(item_id="m-9", reason="superseded"))  # not this write's item
    with tracker.writing(specs[3]):
        pass  # refused or not stored
    tracker.log(MemoryForget(item_id="m-2", reason="expired"))
    with tracker.writing(RememberSpec(content="no refs")):
        tracker.log(MemoryWrite(item_id="m-3", content="no refs"))
    assert len(logged) == 6  # every record still reaches the log
    evidence = ("D1:0", "D1:1", "D1:2", "D1:3", "D9:9")
    state = tracker.state_at_probe(evidence, MemoryContext(items=[{"id": "m-1", "tokens": 3}]))
    assert _per_memory(state) == {"memories": 4, "injected": 2, "stored": 0, "forgotten": 1, "not_stored": 1}
    # per evidence id: D1:0 and D1:2 injected (m-1), D1:1 forgotten, D1:3 not stored, D9:9 in no write
    assert _per_id(state) == _ids(5, 2, 0, 1, 1, 1)
    state = tracker.state_at_probe(("D1:0",), MemoryContext())
    assert _per_memory(state) == {"memories": 1, "injected": 0, "stored": 1, "forgotten": 0, "not_stored": 0}
    assert tracker.state_at_probe(("D7:7",), MemoryContext())["memories"] == 0


def test_an_id_carried_by_several_writes_takes_its_best_state_and_counts_once():
    tracker = EvidenceTracker(lambda record: None)
    for index, refs in enumerate([("D1:1",), ("D1:1", "D1:2"), ("D1:2",)]):
        with tracker.writing(RememberSpec(content=f"fact {index}", refs=refs)):
            tracker.log(MemoryWrite(item_id=f"m-{index}", content=f"fact {index}"))
    tracker.log(MemoryForget(item_id="m-0", reason="expired"))
    state = tracker.state_at_probe(("D1:1", "D1:2"), MemoryContext(items=[{"id": "m-2", "tokens": 3}]))
    assert _per_memory(state) == {"memories": 3, "injected": 1, "stored": 1, "forgotten": 1, "not_stored": 0}
    assert _per_id(state) == _ids(2, 1, 1, 0, 0, 0)
    assert state["content_tokens"] == count_tokens("fact 2")  # the injected memory's own text


def _per_memory(state):
    return {
        key: value for key, value in state.items() if not key.startswith("ids") and key != "content_tokens"
    }


def _ids(ids, injected, stored, forgotten, not_stored, no_memory):
    return {"ids": ids, "injected": injected, "stored": stored, "forgotten": forgotten,
            "not_stored": not_stored, "no_memory": no_memory}  # fmt: skip


def _per_id(state):
    return {key.removeprefix("ids_"): value for key, value in state.items() if key.startswith("ids")}


def _evidence_by_question(logs):
    turns = {}
    for record in logs:
        if record["type"] == "turn":
            turns[(record["session_index"], record["turn_index"])] = record["user"]
    return {
        turns[(r["session_index"], r["turn_index"])]: r["evidence_memories"]
        for r in logs
        if r["type"] == "probe" and "evidence_memories" in r
    }


def test_run_on_imported_conversations_logs_evidence_per_probe(tmp_path, write_locomo, run_ok, run_logs):
    # Memories written with a 1-day ttl: those of 1 March are gone by the questions on 20 March.
    import_locomo(write_locomo(tmp_path / "in"), tmp_path / "tasks", parse_ttl_policy("fixed:1d"))
    run_ok(tmp_path / "tasks", tmp_path / "run")
    logs = run_logs(tmp_path / "run")
    full = _evidence_by_question(logs["full-memory/locomo__conv-7.jsonl"])
    amnesia = _evidence_by_question(logs["amnesia/locomo__conv-7.jsonl"])
    none = _evidence_by_question(logs["no-memory/locomo__conv-7.jsonl"])
    tortoise, moved = "What is the name of Ada's tortoise?", "When did Ada move?"
    assert _per_memory(full[tortoise]) == {
        "memories": 1,
        "injected": 1,
        "stored": 0,
        "forgotten": 0,
        "not_stored": 0,
    }
    assert _per_memory(amnesia[tortoise]) == {
        "memories": 1,
        "injected": 0,
        "stored": 0,
        "forgotten": 1,
        "not_stored": 0,
    }
    assert _per_memory(amnesia[moved]) == {
        "memories": 1,
        "injected": 1,
        "stored": 0,
        "forgotten": 0,
        "not_stored": 0,
    }
    assert none[tortoise]["not_stored"] == 1
    # Evidence that no observation was drawn from is logged with zero memories (coverage, not retention).
    assert full["What did Ben ask for?"]["memories"] == 0
    assert full["What did Ben ask for?"]["ids_no_memory"] == full["What did Ben ask for?"]["ids"] > 0
    probe = next(r for r in logs["full-memory/locomo__conv-7.jsonl"] if r["type"] == "probe")
    assert (
        probe["mechanism"] == "single-hop"
        and probe["evidence"] == ["D1:1"]
        and probe["gold_answer"] == "Quillon"
    )


def test_a_tight_budget_leaves_evidence_stored_but_not_injected(tmp_path, write_locomo, run_ok, run_logs):
    import_locomo(write_locomo(tmp_path / "in"), tmp_path / "tasks", parse_ttl_policy("none"))
    run_ok(tmp_path / "tasks", tmp_path / "run", "--budget", "40", arms="full-memory")
    states = _evidence_by_question(run_logs(tmp_path / "run")["full-memory/locomo__conv-7.jsonl"])
    totals = {state: sum(counts[state] for counts in states.values()) for state in ("injected", "stored")}
    assert totals["stored"] > 0 and totals["injected"] > 0


@settings(max_examples=100, deadline=None)
@given(
    events=st.lists(
        st.tuples(
            st.sampled_from(["write", "fold", "forget", "refuse"]), st.integers(0, 5), st.integers(0, 3)
        ),
        max_size=30,
    ),
    injected=st.sets(st.integers(0, 5)),
    evidence=st.sets(st.integers(0, 3), min_size=1),
)
def test_every_evidence_write_is_in_exactly_one_state(events, injected, evidence):
    tracker = EvidenceTracker(lambda record: None)
    writes = 0
    for kind, item, ref in events:
        if kind == "forget":
            tracker.log(MemoryForget(item_id=f"m-{item}", reason="expired"))
            continue
        writes += ref in evidence
        with tracker.writing(RememberSpec(content="x", refs=(f"D1:{ref}",))):
            if kind == "write":
                tracker.log(MemoryWrite(item_id=f"m-{item}", content="x"))
            elif kind == "fold":
                tracker.log(MemoryTouch(item_id=f"m-{item}", reason="reinforce"))
    context = MemoryContext(items=[{"id": f"m-{i}"} for i in sorted(injected)])
    state = tracker.state_at_probe(tuple(f"D1:{ref}" for ref in sorted(evidence)), context)
    assert state["memories"] == writes
    assert sum(state[name] for name in ("injected", "stored", "forgotten", "not_stored")) == writes
