"""The two engine options that change a store's history rather than one selection's order (issue 18):
`relevance_renewal: strength` (a query changes what the model sees, not which memories are renewed) and
`supersede_same_subject` (an unkeyed "<subject> is <value>" write retires the older statements of that
subject). Each is off by default, and each test shows what changes when it is off."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock
from amnesia.errors import InvalidInput
from amnesia.text import subject_of

DAY = 86_400.0


def make(**config: object) -> tuple[Amnesia, SimulatedClock]:
    clock = SimulatedClock(1_000.0)
    engine = Amnesia(store=InMemoryStore(), config=Config(**config), clock=clock)  # type: ignore[arg-type]
    return engine, clock


def lifecycle(engine: Amnesia) -> dict[str, tuple[str, float, float, int]]:
    """Per live item: content, base strength, last access and access count (ids differ between engines)."""
    return {
        item.content: (item.content, item.strength, item.last_accessed_at, item.access_count)
        for item in engine._items.values()
    }


# ------------------------------------------------------------------ relevance_renewal


words = st.lists(
    st.sampled_from(["tea", "oolong", "deploy", "rota", "lunch", "room"]), min_size=1, max_size=3
)
step = st.one_of(
    st.tuples(st.just("remember"), words, st.sampled_from([3_600.0, DAY, 5 * DAY])),
    st.tuples(st.just("advance"), st.sampled_from([600.0, 6_000.0, 50_000.0])),
    st.tuples(st.just("select"), words, st.integers(20, 90)),
)


def replay(engine: Amnesia, clock: SimulatedClock, steps: list[tuple]) -> list[str]:
    """Play `steps` on `engine`; returns the blocks its selections injected."""
    blocks = []
    for number, op in enumerate(steps):
        if op[0] == "remember":  # the step number keeps contents distinct: `lifecycle` keys by content
            engine.remember(" ".join(op[1]) + f" (note {number}).", ttl=op[2])
        elif op[0] == "advance":
            clock.advance(op[1])
        else:
            blocks.append(engine.select_for_injection(op[2], query=" ".join(op[1])).block)
    return blocks


@settings(max_examples=80, deadline=None)
@given(st.lists(step, min_size=5, max_size=30))
def test_renewing_by_strength_gives_the_strength_orders_history_whatever_the_queries(
    steps: list[tuple],
) -> None:
    """With relevance_renewal "strength", after any writes, waits and queried selections the store is
    exactly the strength order's store: the same memories alive, with the same strengths, last accesses and
    access counts (what the blocks showed may differ)."""
    by_strength, strength_clock = make()
    relevance, relevance_clock = make(injection_order="relevance", relevance_renewal="strength")
    replay(by_strength, strength_clock, steps)
    replay(relevance, relevance_clock, steps)
    assert lifecycle(relevance) == lifecycle(by_strength)


def test_by_default_what_a_query_injects_is_renewed_and_the_history_differs() -> None:
    """The case the option exists for: an old line that a question pulled into a one-line block is renewed in
    relevance mode (default relevance_renewal "injected") and stays stronger than under the strength order;
    with "strength" it ages as it does there."""
    steps = [
        ("remember", ["tea"], 5 * DAY),
        ("advance", 50_000.0),
        ("remember", ["deploy", "rota"], 5 * DAY),
        ("advance", 50_000.0),
        ("select", ["tea"], 40),  # one line fits: relevance shows the tea note, strength the rota
        ("advance", 50_000.0),
    ]
    histories = {}
    for renewal in ("injected", "strength"):
        by_strength, strength_clock = make()
        relevance, relevance_clock = make(injection_order="relevance", relevance_renewal=renewal)
        shown = replay(by_strength, strength_clock, steps), replay(relevance, relevance_clock, steps)
        assert "tea" in shown[1][0] and "tea" not in shown[0][0]
        histories[renewal] = lifecycle(relevance) == lifecycle(by_strength)
    assert histories == {"injected": False, "strength": True}


def test_preview_says_what_the_strength_order_renews() -> None:
    engine, clock = make(injection_order="relevance", relevance_renewal="strength")
    engine.remember("The verification drink is oolong.", ttl="5d")
    clock.advance(DAY)
    engine.remember("The deploy rota changes on Monday.", ttl="5d")
    first, second = engine.preview(40, query="Which drink?").decisions
    assert first.decision == "injected" and "drink" in engine.inspect(first.id).content  # type: ignore[union-attr]
    assert first.why.endswith("; not renewed: the strength order does not (relevance_renewal: strength)")
    assert second.why.endswith("; renewed: the strength order injects it (relevance_renewal: strength)")
    # without a query, or with the option off, the reasons are the order's own
    assert "renewed" not in engine.preview(40).decisions[0].why
    plain, _ = make(injection_order="relevance")
    plain.remember("The verification drink is oolong.", ttl="5d")
    assert "renewed" not in plain.preview(40, query="drink").decisions[0].why
    with pytest.raises(InvalidInput, match=r"^relevance_renewal: expected injected\|strength, got 'used'$"):
        Config(relevance_renewal="used")


# ------------------------------------------------------------------ supersede_same_subject


@pytest.mark.parametrize(
    ("text", "subject"),
    [
        ("The CI provider is drone.", {"ci", "provider"}),
        ("The CI provider was circleci", {"ci", "provider"}),
        (
            "User preference: the test framework for this repo is pytest.",
            {"user", "preference", "test", "framework", "repo"},
        ),
        ("Merges to main are blocked until Friday.", {"merge", "main"}),
        ("部署区域是华东。", {"部", "署", "区", "域", "部署", "署区", "区域"}),
        ("Marcus holds the on-call pager this week.", None),  # no copula
        ("用户偏好：回复用口语化。", None),  # a label and a colon state no subject
        ("Done. The build is green.", None),  # a sentence ends before the copula
        ("This is it.", None),  # the subject is a stopword
        ("The build is.", None),  # no value
    ],
)
def test_the_subject_a_statement_states(text: str, subject: set[str] | None) -> None:
    assert subject_of(text) == (None if subject is None else frozenset(subject))


def test_an_unkeyed_restatement_retires_the_older_statement_of_its_subject() -> None:
    for on in (False, True):
        engine, clock = make(supersede_same_subject=on)
        old = engine.remember("The CI provider is drone.").id
        other = engine.remember("The standup room is aurora.").id
        clock.advance(DAY)
        new = engine.remember("The CI provider is circleci.")
        live = {plug.id for plug in engine.plugs()}
        if not on:
            assert live == {old, other, new.id} and new.superseded == ()
            continue
        assert live == {other, new.id} and new.superseded == (old,)
        (entry,) = engine.verify("The CI provider is drone.")
        assert entry.reason == "superseded" and entry.item_id == old


def test_same_subject_supersession_keeps_to_the_writers_scope_and_trust_and_leaves_keys_alone() -> None:
    engine, _ = make(supersede_same_subject=True)
    mine = engine.remember("The staging database is db-stage-3.").id
    session = engine.remember("The staging database is db-s1.", scope="session", owner_id="s1").id
    keyed = engine.remember("The staging database is db-keyed.", key="staging-db").id
    tool = engine.remember("The staging database is db-from-a-web-page.", source="auto")  # not refused
    assert tool.superseded == ()  # an untrusted write passes over the user's memories
    assert {p.id for p in engine.plugs()} == {mine, session, keyed, tool.id}
    newer = engine.remember("The staging database is db-stage-4.")
    assert set(newer.superseded) == {mine, tool.id}  # the workspace's unkeyed statements, oldest first
    assert newer.superseded[0] == mine


names = st.sampled_from(["ci provider", "standup room", "on-call lead", "部署区域"])
statement = st.tuples(
    names, st.sampled_from(["alpha", "beta", "gamma"]), st.sampled_from(["workspace", "session"])
)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(statement, st.integers(0, 30)), max_size=30))
def test_at_most_one_live_statement_per_subject_and_scope_after_any_history(history: list) -> None:
    """Whatever is written and forgotten: with the option on, each subject has at most one live unkeyed
    statement per scope and owner — the newest written — and the subject index holds exactly the live ones.
    The same history with the option off keeps every statement."""
    engines = {on: make(supersede_same_subject=on)[0] for on in (False, True)}
    newest: dict[tuple[frozenset[str] | None, str], str] = {}
    for number, op in enumerate(history):
        for on, engine in engines.items():
            if isinstance(op, int):
                live = list(engine._items)
                if live:
                    engine.forget(live[op % len(live)])
                continue
            name, value, scope = op
            text = (
                f"The {name} is {value} ({number})." if name.isascii() else f"{name}是{value}（{number}）。"
            )
            owner = "s1" if scope == "session" else None
            item = engine.remember(text, scope=scope, owner_id=owner)
            if on:
                newest[(subject_of(text), scope)] = item.id
    index = engines[True]._index
    live = list(engines[True]._items.values())
    keys = [(subject_of(item.content), item.scope) for item in live]
    assert len(keys) == len(set(keys))
    assert {item.id for item in live} <= set(newest.values())
    rebuilt: dict[frozenset[str], set[str]] = {}
    for item in live:
        rebuilt.setdefault(subject_of(item.content), set()).add(item.id)  # type: ignore[arg-type]
    assert index.ids_by_subject == rebuilt
    statements = [op for op in history if not isinstance(op, int)]
    if not any(isinstance(op, int) for op in history):
        assert len(engines[False]._items) == len(statements)
