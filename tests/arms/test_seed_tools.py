"""The seed arms' own model tools and the seed behaviours that arrived with them (issue 17): retrieval (seed
002) — memory_search / memory_get, the failure-then-success signal, the per-change audit, the pending queue's
adoption step, the "current request wins" statement; clue folding (seed 003) — recall through
recall_from_clues, the tool-pair check; claims (seed 004) — memory_search / memory_get / memory_explain with
citations, explain by id, URI or citation, the explicit approval step and the pending record."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from arms.claims import ForgetNotApproved
from arms.clue_folding import FADED_MARKER
from arms.registry import create_arm
from arms.retrieval import PRECEDENCE_NOTE
from tasks.spec import ForgetSpec, RememberSpec, ToolEventSpec

HOUR = 3600.0
DAY = 86_400.0
TOOL_USER = SimpleNamespace(calls_tools=True)  # what `scripted:tools` says about itself


def names(tools: list[dict]) -> list[str]:
    return [tool["function"]["name"] for tool in tools]


@pytest.mark.parametrize(
    ("arm", "offered"),
    [
        (
            "retrieval",
            [
                "memory_write",
                "memory_update",
                "memory_delete",
                "memory_list",
                "memory_search",
                "memory_get",
                "memory_pin",
                "memory_audit",
                "memory_pending",
            ],
        ),
        ("clue-folding", ["recall_from_clues"]),
        ("claims", ["memory_search", "memory_get", "memory_explain"]),
        ("amnesia", ["amnesia_remember", "amnesia_forget", "amnesia_status", "amnesia_audit"]),
    ],
)
def test_each_arm_offers_its_seed_tools_per_the_tools_option(arm_driver, tmp_path, arm, offered):
    for mode, model, expected in (
        ("auto", TOOL_USER, True),
        ("auto", SimpleNamespace(), False),
        ("on", None, True),
        ("off", TOOL_USER, False),
    ):
        d = arm_driver(create_arm(arm, {"tools": mode}), tmp_path / mode, model=model)
        d.start(0)
        shown = names(d.arm.tools)
        assert (shown[: len(offered)] == offered) is expected, (mode, shown)
        assert expected or shown == []
    with pytest.raises(ValueError, match="tools must be one of auto, on, off"):
        create_arm(arm, {"tools": "sometimes"})


def test_tool_arguments_are_checked_against_the_schema(arm_driver, tmp_path):
    d = arm_driver(create_arm("claims", {"tools": "on"}), tmp_path)
    d.start(0)
    assert d.tool("memory_search") == {"error": "missing required field", "field": "queries"}
    assert d.tool("memory_search", queries=["a", "b", "c", "d"])["field"] == "queries"
    assert d.tool("memory_search", queries=["x"], verbose=True)["field"] == "verbose"
    assert d.tool("memory_get", path="notes/other.md")["field"] == "path"
    assert "unknown tool" in d.tool("amnesia_recall", query="x")["error"]
    assert "not JSON" in json.loads(d.arm.dispatch_tool("memory_get", "{"))["error"]


# --- retrieval (seed 002) -------------------------------------------------------------------------------


def retrieval(arm_driver, path, **options):
    return arm_driver(create_arm("retrieval", {"tools": "on", **options}), path)


def test_retrieval_search_and_get_read_the_store_and_count_as_use(arm_driver, tmp_path):
    d = retrieval(arm_driver, tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("Deploy script lives in scripts/deploy.sh, port 8080."),))
    d.turn("x", remember=(RememberSpec("Code review comments need a reason each."),))
    found = d.tool("memory_search", query="which port does the deploy use?")
    assert found["results"][0]["id"] == "r-0001" and "8080" in found["results"][0]["line"]
    assert found["note"] == PRECEDENCE_NOTE
    assert d.tool("memory_get", id="r-0002")["content"] == "Code review comments need a reason each."
    assert d.tool("memory_get", id="r-0999") == {"error": "no memory 'r-0999'", "field": "id"}
    assert d.arm.entries["r-0001"].access_count == 1 and d.arm.entries["r-0002"].access_count == 1


def shell(status: str, output: str, arguments: str = "pnpm install") -> ToolEventSpec:
    return ToolEventSpec("shell", arguments, status, output)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("events", "streak", "captured"),
    [
        (
            (shell("error", "ETIMEDOUT"), shell("error", "ETIMEDOUT"), shell("ok", "done via npmmirror")),
            2,
            True,
        ),
        ((shell("error", "ETIMEDOUT"), shell("ok", "done via npmmirror")), 2, False),  # one failure only
        ((shell("error", "x"), shell("error", "x"), shell("ok", "done via npmmirror")), 0, False),  # off
        ((shell("error", "x"), shell("open", ""), shell("error", "x"), shell("ok", "npmmirror")), 2, True),
    ],
)
def test_failure_then_success_becomes_a_tool_quirk(arm_driver, tmp_path, events, streak, captured):
    d = retrieval(arm_driver, tmp_path, failure_streak=streak)
    d.start(0)
    d.turn("Install the dependencies.", tool_events=events[:1])
    d.turn("Try again.", tool_events=events[1:])
    d.end()
    pitfalls = [e for e in d.arm.entries.values() if e.category == "tool-quirk"]
    assert bool(pitfalls) is captured
    if captured:
        assert "npmmirror" in pitfalls[0].content and "after 2 failures" in pitfalls[0].content
        assert d.arm.audit[-1].source == "flush"  # drained by the dispose flush


def test_every_change_is_audited_with_its_source_and_a_monotonic_sequence(arm_driver, tmp_path):
    d = retrieval(arm_driver, tmp_path, janitor_idle="1d")
    d.start(0)
    d.turn("x", remember=(RememberSpec("The standup room is Atlas."),))
    d.turn("Remember that the office dog is called Biscuit.")
    d.turn("x", forget=(ForgetSpec(query="Atlas"),))
    d.end()
    d.start(3 * DAY)  # the janitor retires the unused entry
    audit = list(d.arm.audit)
    assert [(a.op, a.source) for a in audit] == [
        ("write", "tool"),
        ("delete", "tool"),
        ("write", "flush"),
        ("delete", "janitor"),
    ]
    assert [a.seq for a in audit] == [1, 2, 3, 4] and audit[0].preview == "The standup room is Atlas."
    assert audit[3].at == 3 * DAY


def test_pending_proposals_gain_hits_and_wait_for_adoption(arm_driver, tmp_path):
    d = retrieval(arm_driver, tmp_path, confirm_before_write=True)
    d.start(0)
    spec = RememberSpec("The standup room is Atlas.")
    d.turn("x", remember=(spec,))
    d.turn("x", remember=(spec,))
    d.turn("x", remember=(RememberSpec("Lunch is at noon."),))
    assert [(p.id, p.hits) for p in d.arm.pending] == [("r-0001", 2), ("r-0002", 1)]
    assert d.arm.entries == {}
    d.arm.adopt_pending("r-0001", "The standup room is Atlas (3rd floor).")
    d.arm.reject_pending("r-0002")
    assert d.arm.pending == [] and d.arm.entries["r-0001"].content.endswith("(3rd floor).")
    assert [(a.op, a.source) for a in d.arm.audit] == [("adopt", "ui"), ("reject", "ui")]
    d.end()
    d.start(HOUR)
    assert "Atlas (3rd floor)" in d.turn("where is standup?").block


def test_a_stand_in_reviewer_adopts_a_proposal_seen_often_enough(arm_driver, tmp_path):
    d = retrieval(arm_driver, tmp_path, confirm_before_write=True, adopt_after_hits=2)
    d.start(0)
    spec = RememberSpec("The standup room is Atlas.")
    d.turn("x", remember=(spec,))
    assert d.arm.entries == {}
    d.turn("x", remember=(spec,))
    assert list(d.arm.entries) == ["r-0001"] and d.arm.audit[-1].source == "review"


def test_every_injected_surface_says_the_present_wins(arm_driver, tmp_path):
    for note in (True, False):
        d = retrieval(arm_driver, tmp_path / str(note), precedence_note=note, snapshot_entries=1)
        d.start(0)
        d.turn("x", remember=(RememberSpec("The standup room is Atlas."),))
        d.turn("x", remember=(RememberSpec("Lunch is at noon, in the atrium."),))
        d.end()
        d.start(HOUR)
        context = d.turn("where is lunch?")
        snapshot, fence = context.block, context.messages[0]["content"]
        assert "Atlas" in snapshot and "atrium" in fence  # the index shows one entry, recall the other
        assert (PRECEDENCE_NOTE in snapshot) is note and (PRECEDENCE_NOTE in fence) is note


# --- clue folding (seed 003) ----------------------------------------------------------------------------


def test_seed_clue_folding_recalls_only_through_its_tool(arm_driver, tmp_path):
    d = arm_driver(create_arm("clue-folding", {"threshold_tokens": 1, "keep_completed_turns": 0}), tmp_path)
    d.start(0)
    blocks = [d.turn("The build flag is `ab_cd` in src/app.py.").block, d.turn("And lapsang.").block]
    blocks += [d.turn(f"what about ab_cd {i}?").block for i in range(3)]
    assert d.of_type("memory_write") and blocks == [""] * 5  # folded, but recall is the model's call
    found = d.tool("recall_from_clues", query="what was the ab_cd flag?")
    assert found["count"] >= 1 and "ab_cd" in found["prompt"] and found["faded"] is False
    assert d.tool("recall_from_clues", query="abXcd")["count"] == 0  # LIKE with `_` escaped
    assert create_arm("clue-folding-session-fold").model_tools() == []  # injected recall: no tool


def test_recall_tool_caps_at_1800_chars_with_the_faded_marker(arm_driver, tmp_path):
    d = arm_driver(create_arm("clue-folding", {"fold_at_session_end": True, "tools": "on"}), tmp_path)
    d.start(0)
    for i in range(40):
        d.turn(f"Project zebra note {i}: the zebra setting zebra_{i} is important for zebra rollout.")
    d.end()
    d.start(HOUR)
    found = d.tool("recall_from_clues", query="zebra", limit=20)
    assert found["faded"] is True and found["prompt"].endswith(FADED_MARKER)
    clue_lines = [line for line in found["prompt"].splitlines() if line.startswith("- [")]
    assert sum(len(line) + 1 for line in clue_lines) <= 1800 and found["count"] == len(clue_lines)


def test_a_range_with_an_unanswered_tool_call_is_never_folded(arm_driver, tmp_path):
    open_call = ToolEventSpec("shell", "deploy --region eu-west", "open")
    for check, folded in ((True, False), (False, True)):
        arm = create_arm("clue-folding-session-fold", {"tool_pair_check": check})
        d = arm_driver(arm, tmp_path / str(check))
        d.start(0)
        d.turn("Deploy to the Juniper cluster.", tool_events=(open_call,))
        d.turn("Status?", tool_events=(ToolEventSpec("shell", "status", "ok", "green"),))
        d.end()
        assert bool(d.of_type("memory_write")) is folded
        if folded:  # the tool's call and output are folded with their turn
            assert "deploy" in d.of_type("memory_write")[0]["content"]


def test_folding_keeps_tool_messages_with_their_turn(arm_driver, tmp_path):
    arm = create_arm("clue-folding", {"threshold_tokens": 1, "keep_completed_turns": 1, "forget_turns": 1})
    d = arm_driver(arm, tmp_path)
    d.start(0)
    d.turn("one", tool_events=(ToolEventSpec("shell", "ls", "ok", "a.txt"),))
    d.turn("two")
    context = d.turn("three")
    assert context.details["folded_turns"] == 1
    assert [m["role"] for m in context.history] == ["user", "user", "assistant"]
    assert context.history[1]["content"] == "two"


# --- claims (seed 004) ----------------------------------------------------------------------------------


def claims(arm_driver, path, **options):
    d = arm_driver(create_arm("claims", {"tools": "on", **options}), path)
    d.start(0)
    d.turn("My drink is oolong.", remember=(RememberSpec("The verification drink is oolong."),))
    d.turn("I prefer French.", remember=(RememberSpec("Answer in French.", kind="preference"),))
    d.turn("Office is Lyon.", remember=(RememberSpec("The office is in Lyon."),))
    return d


def test_search_cites_the_projection_and_get_reads_the_cited_line(arm_driver, tmp_path):
    d = claims(arm_driver, tmp_path)
    found = d.tool("memory_search", queries=["what is the verification drink?", "tea"], maxResults=2)
    hit = found["results"][0]
    assert (
        hit["claim_id"] == "c-0001" and hit["uri"] == "memory://claims/c-0001" and hit["status"] == "active"
    )
    assert hit["score"] == 1.0 and hit["citation"] == f"MEMORY.md#L{hit['line']}"
    got = d.tool("memory_get", path=hit["citation"])
    assert got["lines"] == 1 and "oolong" in got["text"] and "[c-0001]" in got["text"]
    whole = d.tool("memory_get", path="MEMORY.md")
    assert whole["text"].splitlines()[hit["line"] - 1] == got["text"]
    assert d.tool("memory_get", path="MEMORY.md", **{"from": 2, "lines": 1})["text"] == "## Facts"
    assert d.tool("memory_search", queries=["zeppelin"])["count"] == 0


def test_explain_takes_an_id_a_uri_or_a_citation(arm_driver, tmp_path):
    d = claims(arm_driver, tmp_path)
    citation = d.tool("memory_search", queries=["office"])["results"][0]["citation"]
    reports = [d.arm.explain(h) for h in ("c-0003", "memory://claims/c-0003", citation)]
    assert reports[0] == reports[1] == reports[2] and reports[0]["quote"] == "Office is Lyon."
    assert d.tool("memory_explain", citation=citation)["text"] == "The office is in Lyon."
    assert "exactly one" in d.tool("memory_explain", id="c-0003", uri="memory://claims/c-0003")["error"]
    assert "no claim" in d.tool("memory_explain", citation="MEMORY.md#L1")["error"]  # the title line


def test_forget_needs_an_approval_and_leaves_a_pending_record(arm_driver, tmp_path):
    d = claims(arm_driver, tmp_path / "run")
    arm = d.arm
    citation = d.tool("memory_search", queries=["office"])["results"][0]["citation"]
    plan = arm.plan_forget(ForgetSpec(query="Lyon"))
    with pytest.raises(ForgetNotApproved):
        arm.confirm_forget(plan)
    assert "c-0003" in arm.claims
    arm.approve_forget(plan)
    arm.confirm_forget(plan)
    pending = json.loads((tmp_path / "run" / "forget" / "pending.json").read_text(encoding="utf-8"))
    # the MEMORY.md line and the claim's diary entry (line 5: title, heading, two earlier entries)
    assert pending == {"claims": ["c-0003"], "citations": [citation, "memory/1970-01-01.md#L5"]}
    assert "Lyon" not in json.dumps(pending)
    empty = arm.plan_forget(ForgetSpec(query="zeppelin"))
    arm.approve_forget(empty)
    arm.confirm_forget(empty)
    assert json.loads((tmp_path / "run" / "forget" / "pending.json").read_text()) == {
        "claims": [],
        "citations": [],
    }


def test_forget_spec_stands_in_for_approval_unless_approval_is_off(arm_driver, tmp_path):
    for approval, kept in (("instruction", False), ("none", True)):
        d = claims(arm_driver, tmp_path / approval, forget_approval=approval)
        d.turn("Forget where the office is.", forget=(ForgetSpec(query="Lyon"),))
        assert ("Lyon" in d.turn("x").block) is kept


# --- amnesia ---------------------------------------------------------------------------------------------


def test_amnesia_dispatches_its_seven_tools_to_the_engine(arm_driver, tmp_path):
    d = arm_driver(create_arm("amnesia", {"tools": "on"}), tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("The verification drink is oolong.", ttl=DAY),))
    assert len(d.arm.tools) == 7
    found = d.tool("amnesia_recall", query="verification drink")
    assert found["count"] == 1 and found["items"][0]["content"] == "The verification drink is oolong."
