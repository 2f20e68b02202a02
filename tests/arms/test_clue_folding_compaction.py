"""Seed 003's compaction framing in `clue-folding`: each fold is compaction/start → summary → replace →
compaction/end, no fold starts while a compaction is open (a start without its end), and at the host's
compaction the turns it drops become clues."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from arms.base import CompactionInfo
from arms.registry import create_arm
from runners.replay import build_messages

SUMMARY = "[summary] Earlier turns, summarised by the host."
FRAMED = ["start", "summary", "replace", "end"]


def compaction(d, keep_turns: int) -> CompactionInfo:
    """The host's compaction of the driver's history as the start hook gets it: every message before the
    last `keep_turns` turns (an earlier summary included) is dropped."""
    starts = [i for i, m in enumerate(d.history) if m["role"] == "user" and m["content"] != SUMMARY]
    cut = starts[len(starts) - keep_turns] if keep_turns else len(d.history)
    return CompactionInfo(
        session_id=d.session.session_id,
        at=d.clock.now(),
        trigger="event",
        dropped=tuple(d.history[:cut]),
        summary="",
        tokens_before=0,
        tokens_after=0,
        kept=tuple(d.history[cut:]),
    )


def finish(d, info: CompactionInfo) -> None:
    """The host replaces the dropped messages with its summary (a user message, as a host may send it) and
    ends the compaction."""
    d.history = [{"role": "user", "content": SUMMARY}, *info.kept]
    d.arm.on_compaction_end(dataclasses.replace(info, summary=SUMMARY))


def compact(d, keep_turns: int) -> None:
    info = compaction(d, keep_turns)
    d.arm.on_compaction_start(info)
    finish(d, info)


def test_a_host_compaction_folds_the_dropped_turns_with_the_seeds_framing(arm_driver, tmp_path):
    d = arm_driver(
        create_arm("clue-folding"), tmp_path
    )  # the seed's defaults: 8,000 tokens are never reached
    d.start(0)
    d.turn("The staging host is `vega-7`.")
    d.turn("And the deploy script is tools/ship.sh.")
    d.turn("Thanks.")
    compact(d, keep_turns=1)
    context = d.turn("Which host was it?")
    assert context.details["fold"] == {
        "compaction": "k-0001",
        "by": "host",
        "turns": [0, 1],
        "tokens": context.details["fold"]["tokens"],
        "phases": FRAMED,
    }
    system, summary, checkpoint, *kept, user = build_messages(context.block, context.history, "Which host?")
    assert system["role"] == "system" and summary["content"] == SUMMARY  # the system head is never cut
    assert [m["content"] for m in kept] == ["Thanks.", "OK."] and user["content"] == "Which host?"
    assert checkpoint["content"].startswith("[memory folded] To free space I let go of the 2 earlier turn(s)")
    assert "vega-7" in checkpoint["content"] and "tools/ship.sh" in checkpoint["content"]
    (write,) = d.of_type("memory_write")
    assert write["owner_id"] == "s0" and "vega-7" in write["content"]
    row = d.arm.db.execute("SELECT session_id, turn_from, turn_to FROM memory_clues").fetchone()
    assert tuple(row) == ("s0", 0, 1)
    assert "vega-7" in d.tool("recall_from_clues", query="vega-7 host")["prompt"]
    # the framing as typed records, in order: start, the clue stored, end with the checkpoint line
    framed = [(r["type"], r.get("phase")) for r in d.records if r["type"] in ("fold", "memory_write")]
    assert framed == [("fold", "start"), ("memory_write", None), ("fold", "end")]
    started, ended = d.of_type("fold")
    assert started["summary"] == "" and ended["summary"] == checkpoint["content"] and "skipped" not in ended
    for record in (started, ended):
        assert (record["fold_id"], record["trigger"], record["turns"]) == ("k-0001", "host", [0, 1])
        assert (record["session_index"], record["turn_index"]) == (0, 3)
    assert d.turn("More?").details.get("fold") is None  # reported once, with the turn it came before


@pytest.mark.parametrize(
    ("turns", "line"),
    [
        (
            ("The staging host is vega7.", "Thanks."),
            "[memory folded] To free space I let go of the 2 earlier",
        ),
        (
            ("暂存主机是 vega7。", "谢谢。"),
            "【🧠 记忆已折叠】为了腾出空间，我已淡忘更早的 2 轮对话，留下的线索：",
        ),
    ],
)
def test_the_checkpoint_line_speaks_the_turns_language(arm_driver, tmp_path, turns, line):
    d = arm_driver(create_arm("clue-folding"), tmp_path)
    d.start(0)
    for text in (*turns, "OK?"):
        d.turn(text)
    compact(d, keep_turns=1)
    checkpoint = d.turn("?").history[1]["content"]
    assert checkpoint.startswith(line) and "vega7" in checkpoint


@pytest.mark.parametrize(
    "options", [{"host_compaction": "yield"}, {"auto_forget": False, "threshold_tokens": 1}]
)
def test_yield_and_auto_forget_off_leave_the_dropped_turns_unclued(arm_driver, tmp_path, options):
    d = arm_driver(create_arm("clue-folding", {**options, "keep_completed_turns": 0}), tmp_path)
    d.start(0)
    d.turn("The staging host is `vega-7`.")
    d.turn("Thanks.")
    d.turn("And?")
    compact(d, keep_turns=1)
    context = d.turn("Which host was it?")
    assert context.history is None and "fold" not in context.details  # the runner's compacted history as is
    assert d.of_type("memory_write") == [] and d.tool("recall_from_clues", query="vega-7")["count"] == 0


def test_a_later_compaction_passes_the_earlier_checkpoints_on_and_clues_only_new_turns(arm_driver, tmp_path):
    """The seed's checkpoint goes the host's own compaction path, so a later compaction that covers it passes
    it on as the host passes an earlier summary's lines on: after the host's summary, oldest first."""
    d = arm_driver(create_arm("clue-folding"), tmp_path)
    d.start(0)
    for text in ("alpha_1 set.", "beta_2 set.", "gamma_3 set."):
        d.turn(text)
    compact(d, keep_turns=1)  # drops turns 0-1 → k-0001
    first = d.turn("delta_4 set.").history[1]
    d.turn("epsilon_5 set.")
    compact(d, keep_turns=1)  # covers the summary, k-0001's checkpoint and turns 2-3 → k-0002
    context = d.turn("Now?")
    assert context.details["fold"]["turns"] == [2, 3]
    summary, earlier, checkpoint, *kept = context.history
    assert summary["content"] == SUMMARY and earlier == first and "alpha_1" in earlier["content"]
    assert "gamma_3" in checkpoint["content"] and "alpha_1" not in checkpoint["content"]
    assert [m["content"] for m in kept] == ["epsilon_5 set.", "OK."]
    turns = d.arm.db.execute("SELECT turn_from, turn_to FROM memory_clues ORDER BY id").fetchall()
    assert [tuple(row) for row in turns] == [(0, 1), (2, 3)]


def test_turns_the_arm_folded_before_the_host_are_not_clued_twice(arm_driver, tmp_path):
    d = arm_driver(
        create_arm("clue-folding", {"threshold_tokens": 1, "forget_turns": 2, "keep_completed_turns": 1}),
        tmp_path,
    )
    d.start(0)
    for i in range(4):
        d.turn(f"Note zz{i}.")  # the fourth call folds turns 0-1
    assert d.arm.state.folded == 2
    compact(d, keep_turns=1)  # the host drops turns 0-2: only turn 2 is new to the clues
    context = d.turn("Next.")
    assert context.details["fold"]["turns"] == [2]
    summary, earlier, checkpoint, *kept = context.history
    assert summary["content"] == SUMMARY and "zz2" in checkpoint["content"]
    assert "zz0" in earlier["content"]  # turns 0-1's checkpoint, passed on
    assert [m["content"] for m in kept] == ["Note zz3.", "OK."]


def test_a_failed_fold_still_ends_its_compaction(arm_driver, tmp_path):
    d = arm_driver(create_arm("clue-folding", {"threshold_tokens": 1, "keep_completed_turns": 0}), tmp_path)
    d.start(0)
    d.turn("one")
    d.turn("two")
    d.arm.db.execute(
        "CREATE TRIGGER full BEFORE INSERT ON memory_clues BEGIN SELECT RAISE(ABORT, 'full'); END"
    )
    failed = d.turn("three").details["fold"]
    assert failed["skipped"].startswith("clue not stored") and d.arm.state.open_compaction is None
    started, ended = d.of_type("fold")  # the end is logged on the failed path too, saying why
    assert (started["phase"], ended["phase"]) == ("start", "end") and ended["skipped"] == failed["skipped"]
    assert ended["summary"] == "" and d.of_type("memory_write") == []
    d.arm.db.execute("DROP TRIGGER full")
    assert d.turn("four").details["fold"]["phases"] == FRAMED
    assert [(r["phase"], r["trigger"]) for r in d.of_type("fold")[2:]] == [
        ("start", "threshold"),
        ("end", "threshold"),
    ]


@settings(max_examples=10, deadline=None)
@given(ops=st.lists(st.sampled_from(["turn", "turn", "start", "end"]), max_size=12))
@example(ops=["turn", "turn", "start", "end", "turn"])
@example(ops=["turn", "start", "turn", "turn", "end", "turn", "turn", "start"])
def test_no_fold_starts_while_a_compaction_is_open(arm_driver, tmp_path_factory, ops):
    """The seed's check: a compaction/start without its end blocks every fold (the threshold's and the
    session end's); once it ends, folding resumes. Folds here are due at every turn (threshold 1, fold
    1, keep 0) except at the turn that follows the host's compaction (one cut per turn)."""
    options = {
        "threshold_tokens": 1,
        "forget_turns": 1,
        "keep_completed_turns": 0,
        "fold_at_session_end": True,
    }
    d = arm_driver(create_arm("clue-folding", options), tmp_path_factory.mktemp("open"))
    d.start(0)
    pending: CompactionInfo | None = None
    host_cut = False
    for op in ops:
        held = sum(1 for m in d.history if m["role"] == "user" and m["content"] != SUMMARY)
        if op == "start" and pending is None and held:  # a host compacts only a history with turns
            pending = compaction(d, keep_turns=0)
            d.arm.on_compaction_start(pending)
        elif op == "end" and pending is not None:
            finish(d, compaction(d, keep_turns=min(held - 1, 1)))  # the turns made while open too
            pending, host_cut = None, True
        elif op == "turn":
            state = d.arm.state
            due = len(state.turns) > state.folded and not host_cut
            fold = d.turn(f"turn {len(state.turns)}").details.get("fold")
            if pending is not None and due:
                assert fold["skipped"] == "unclosed compaction"
            elif due:
                assert fold["phases"] == FRAMED and fold["by"] == "threshold"
            elif host_cut:  # one cut per turn: the host's
                assert fold is None or fold["by"] == "host"
            host_cut = False
        if pending is None:
            assert d.arm.state.open_compaction is None
    writes_before_end = len(d.of_type("memory_write"))
    d.end()
    if pending is not None:  # the session-end fold is blocked too
        assert len(d.of_type("memory_write")) == writes_before_end
    rows = d.arm.db.execute("SELECT COUNT(*) FROM memory_clues").fetchone()[0]
    assert rows == len(d.of_type("memory_write"))
    # every fold that started was logged start then end, never interleaved with another; a blocked one neither
    folds = [(r["phase"], r["fold_id"]) for r in d.of_type("fold")]
    assert folds == [(phase, fold_id) for _, fold_id in folds[::2] for phase in ("start", "end")]
    assert len(folds) == 2 * rows
