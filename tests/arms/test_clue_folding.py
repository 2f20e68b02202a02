from __future__ import annotations

import dataclasses
import sqlite3

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arms.clue_folding import FADED_MARKER, distill, like_escape
from arms.registry import create_arm
from tasks.spec import ForgetSpec

HOUR = 3600.0


@pytest.fixture(scope="module")
def drive(arm_driver):
    """`drive(workdir, name="clue-folding-session-fold", **options)`: an ArmDriver over that arm (by default
    the variant that folds at session end and injects the recall, so a test reads in two sessions)."""
    return lambda workdir, name="clue-folding-session-fold", **options: arm_driver(
        create_arm(name, options), workdir
    )


def long_turn(i: int) -> str:
    return f"Turn {i}: the `config_{i}` flag lives in src/app_{i}.py and matters for project alpha."


def test_distill_keeps_names_paths_identifiers_and_cjk_phrases():
    clue = distill(
        'Deploy "blue green" via E:/Fishwork/app.ts using recall_from_clues and v3; 记住周会在三楼会议室。'
    )
    for seed in ("blue green", "E:/Fishwork/app.ts", "recall_from_clues", "v3", "三楼会议室"):
        assert seed in clue.seed_tokens
    assert "deploy" in clue.keywords and clue.summary.startswith("Deploy")


IDENTIFIER_PART = st.from_regex(r"[A-Za-z0-9]{1,6}", fullmatch=True)
# letters and digits joined by `-`, `_` or `.`: QX-5519, vega-7, cache-v7-amber, app.v2, my_var
IDENTIFIERS = st.builds(
    lambda first, rest: first + "".join(sep + part for sep, part in rest),
    IDENTIFIER_PART,
    st.lists(st.tuples(st.sampled_from("-_."), IDENTIFIER_PART), min_size=1, max_size=3),
)


def said(identifier: str, chinese: bool) -> str:
    return f"密钥是{identifier}，别忘了。" if chinese else f"The courier reference is {identifier}, keep it."


@settings(max_examples=60, deadline=None)
@given(identifier=IDENTIFIERS, chinese=st.booleans())
@example(identifier="QX-5519", chinese=False)
@example(identifier="cache-v7-amber", chinese=True)
def test_a_joined_identifier_stays_one_token(identifier, chinese):
    clue = distill(said(identifier, chinese))
    assert identifier in clue.seed_tokens
    # no piece of it stands beside it (`5519` of QX-5519), nor a keyword cut at a joint (`qx-`)
    assert all(seed == identifier or seed not in identifier for seed in clue.seed_tokens)
    assert not any(keyword.endswith(("-", ".")) for keyword in clue.keywords)


@settings(max_examples=4, deadline=None)  # each example sets up a SQLite store: a few, beside the examples
@given(identifier=IDENTIFIERS, chinese=st.booleans())
@example(identifier="QX-5519", chinese=False)
@example(identifier="vega-7", chinese=True)
def test_a_folded_identifier_is_recalled_by_its_full_text(arm_driver, tmp_path_factory, identifier, chinese):
    d = arm_driver(create_arm("clue-folding", {"fold_at_session_end": True}), tmp_path_factory.mktemp("cf"))
    d.start(0)
    d.turn(said(identifier, chinese))
    d.end()
    d.start(HOUR)
    result = d.tool("recall_from_clues", query=identifier)
    assert result["count"] == 1 and identifier in result["prompt"]


def test_below_threshold_history_is_untouched(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0)
    for i in range(8):
        context = d.turn(long_turn(i))
        assert context.history is None and context.details["folded_turns"] == 0


def test_folds_oldest_two_and_always_keeps_the_recent_four(drive, tmp_path):
    d = drive(tmp_path, threshold_tokens=1)
    d.start(0)
    folds = []
    for i in range(10):
        context = d.turn(long_turn(i))
        folds.append(context.details["folded_now"])
        folded = context.details["folded_turns"]
        if context.history is not None:
            checkpoints = [m for m in context.history if m["content"].startswith("[memory folded]")]
            assert len(checkpoints) == folded // 2  # one checkpoint line per fold of two turns
            assert len(context.history) - len(checkpoints) == 2 * (i - folded)  # the unfolded turns, verbatim
            assert i - folded >= 4  # the most recent four completed turns always stay
            assert context.history[len(checkpoints)]["content"] == long_turn(folded)
    # the guard needs 2 + 4 completed turns: first fold at the 7th call, then one fold every other call
    assert [f is not None for f in folds] == [False] * 6 + [True, False, True, False]


def test_fold_failure_leaves_history_untouched(drive, tmp_path):
    d = drive(tmp_path, threshold_tokens=1)
    d.start(0)
    for i in range(6):
        d.turn(long_turn(i))
    d.arm.db.execute(  # the insert fails inside the fold transaction
        "CREATE TRIGGER full_disk BEFORE INSERT ON memory_clues BEGIN SELECT RAISE(ABORT, 'disk full'); END"
    )
    context = d.turn(long_turn(6))
    assert context.history is None and context.details["folded_turns"] == 0 and d.arm.state.checkpoints == []
    assert d.of_type("memory_write") == []


def test_clues_live_in_a_wal_sqlite_table(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0)
    d.turn("The verification drink is lapsang.")
    d.end()
    db = sqlite3.connect(tmp_path / "memory_clues.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    (keywords,) = db.execute("SELECT keywords FROM memory_clues").fetchone()
    assert "lapsang" in keywords


def test_session_end_fold_carries_clues_to_the_next_session_and_the_seed_arm_does_not(drive, tmp_path):
    for name, recalled in (
        ("clue-folding-session-fold", True),
        ("clue-folding-strict", False),
        ("clue-folding", False),
    ):
        d = drive(tmp_path / name, name)
        d.start(0)
        d.turn("Remember: the verification drink is lapsang.")
        d.end()
        d.start(HOUR)
        block = d.turn("What is the verification drink?").block
        assert ("lapsang" in block) is recalled
        if recalled:
            assert "written 1h ago" in block


def test_like_matching_escapes_wildcards(drive, tmp_path):
    assert like_escape("100%_done\\") == "100\\%\\_done\\\\"
    d = drive(tmp_path)
    d.start(0)
    d.turn("The build flag is ab_cd.")
    d.end()
    d.start(HOUR)
    assert d.turn("what about abXcd?").block == ""  # `_` must not match any character
    assert "ab_cd" in d.turn("what about ab_cd?").block


def test_recall_limit_char_cap_and_faded_marker(drive, tmp_path):
    d = drive(tmp_path, max_prompt_chars=300, limit=3)
    d.start(0)
    for i in range(6):
        d.turn(f"Project zebra note {i}: the zebra setting {i} is important.")
        d.turn(f"Filler {i}.")
    d.end()
    d.start(HOUR)
    lines = d.turn("zebra?").block.splitlines()
    clue_lines = [line for line in lines if line.startswith("- [")]
    assert 1 <= len(clue_lines) <= 3 and sum(len(line) + 1 for line in clue_lines) <= 300
    assert lines[-1] == FADED_MARKER


def test_forget_by_query_and_sub_agent_clues_end_with_it(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0)
    d.turn("The verification drink is lapsang.")
    d.end()
    d.start(HOUR)
    d.turn("forget it", forget=(ForgetSpec(query="lapsang"),))
    assert d.of_type("memory_forget")[-1]["reason"] == "manual"
    d.end()
    d.start(2 * HOUR, agent="sub")
    d.arm.config = dataclasses.replace(d.arm.config, threshold_tokens=1, keep_completed_turns=0)
    for i in range(3):
        d.turn(long_turn(i))
    d.end()
    assert d.of_type("memory_forget")[-1]["reason"] == "agent-disposed"


@settings(max_examples=10, deadline=None)
@given(
    agents=st.lists(st.sampled_from(["main", "sub"]), min_size=1, max_size=4),
    keys=st.sampled_from(["session", "scope"]),
    reader=st.sampled_from(["main", "sub"]),
)
@example(agents=["main", "sub", "main"], keys="session", reader="sub")
@example(agents=["sub", "main"], keys="scope", reader="main")
def test_clues_are_keyed_by_the_session_that_folded_them(drive, tmp_path_factory, agents, keys, reader):
    """The seed writes each clue with its session's id into one table and recalls across all of it
    (`clue_keys: session`); `clue_keys: scope` keeps the harness's agent scopes (a sub-agent's clues are
    private to it and deleted when it ends)."""
    options = {"threshold_tokens": 1, "forget_turns": 1, "keep_completed_turns": 0, "clue_keys": keys}
    d = drive(tmp_path_factory.mktemp("keys"), "clue-folding", **options)
    for i, agent in enumerate(agents):
        d.start(i * HOUR, agent)
        d.turn(f"The marker is zq{i}x.")
        assert d.turn("And then?").details["folded_now"] is not None  # the marker turn is folded
        assert d.tool("recall_from_clues", query=f"zq{i}x")["count"] == 1  # a session sees its own clues
        d.end()
    rows = d.arm.db.execute("SELECT session_id, seed_tokens FROM memory_clues ORDER BY id").fetchall()
    kept = [i for i, agent in enumerate(agents) if keys == "session" or agent == "main"]
    assert [tuple(row) for row in rows] == [(f"s{i}", f"zq{i}x") for i in kept]
    d.start(len(agents) * HOUR, reader)
    for i in range(len(agents)):
        found = d.tool("recall_from_clues", query=f"what was zq{i}x?")
        seen = keys == "session" or (reader == "main" and agents[i] == "main")
        assert found["count"] == int(seen)
        assert (f"session s{i}" in found["prompt"]) is (seen and keys == "session")
    d.end()
    disposed = [r for r in d.of_type("memory_forget") if r["reason"] == "agent-disposed"]
    assert len(disposed) == (0 if keys == "session" else agents.count("sub"))


def test_options_are_validated():
    with pytest.raises(ValueError, match="limit must be at most 20"):
        create_arm("clue-folding", {"limit": 21})
