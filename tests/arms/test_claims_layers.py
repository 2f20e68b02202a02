"""Seed 004's memory layers around the claim store: diaries, entity pages (the bank), write-before-reply,
admission rules, explain's salience and dated source message, hybrid search with the stand-in embedding."""

from __future__ import annotations

import math

import pytest

from arms.claims_layers import entities_of, refusal
from arms.embedding import HashedNgramEmbedder, cosine, hybrid_scores
from arms.registry import create_arm
from runners.armconfig import ArmSpec
from runners.models.scripted import ScriptedModel
from runners.replay import PairJob, replay_pair
from tasks.logschema import read_log
from tasks.spec import ForgetSpec, ProbeSpec, RememberSpec, Session, Task, Turn

DAY = 86_400.0
MARCH_2 = 1_772_409_600.0  # 2026-03-02T00:00:00Z


@pytest.fixture(scope="module")
def drive(arm_driver):
    """`drive(workdir, **options)`: an ArmDriver over the `claims` arm with these options."""
    return lambda workdir, **options: arm_driver(create_arm("claims", options), workdir)


def drink_history(d, start: float = MARCH_2):
    """Two sessions a day apart: the drink is lapsang, then oolong (a supersession)."""
    d.start(start)
    d.turn("The drink is lapsang.", remember=(RememberSpec("The verification drink is lapsang."),))
    d.end()
    d.start(start + DAY + 9 * 3600)
    d.turn("Now it is oolong.", remember=(RememberSpec("The verification drink is oolong."),))


# --- diaries ---------------------------------------------------------------------------------------------


def test_diaries_are_dated_by_the_simulated_clock_and_never_injected(drive, tmp_path):
    d = drive(tmp_path)
    drink_history(d)
    files = d.arm.files()
    assert [p for p in files if p.startswith("memory/2")] == ["memory/2026-03-02.md", "memory/2026-03-03.md"]
    second = [text for text, _ in files["memory/2026-03-03.md"]]
    assert second[:2] == ["# 2026-03-03", "## Verified extraction — 09:00 UTC (session s1)"]
    assert (
        second[2]
        == "- claim: c-0002 · supersedes c-0001 · fact · The verification drink is oolong. · said by user"
    )
    block = d.turn("What is the drink?").block
    assert "lapsang" not in block and "Verified extraction" not in block


def test_a_superseded_claim_is_found_through_its_diary_entry_only_with_diaries(drive, tmp_path):
    for diaries, statuses in (
        (True, {"c-0002": "active", "c-0001": "superseded"}),
        (False, {"c-0002": "active"}),
    ):
        d = drive(tmp_path / str(diaries), tools="on", diaries=diaries)
        drink_history(d)
        found = d.tool("memory_search", queries=["verification drink"])["results"]
        assert {r["claim_id"]: r["status"] for r in found} == statuses
        if diaries:
            old = next(r for r in found if r["claim_id"] == "c-0001")
            assert old["citation"] == "memory/2026-03-02.md#L3"
            assert "lapsang" in d.tool("memory_get", path=old["citation"])["text"]
        else:
            assert "unknown path" in d.tool("memory_get", path="memory/2026-03-02.md")["error"]


def test_a_confirmed_forget_removes_the_diary_entries_and_verifies_them(drive, tmp_path):
    d = drive(tmp_path)
    drink_history(d)
    plan = d.arm.plan_forget(ForgetSpec(query="drink"))
    assert "diary line memory/2026-03-02.md#L3" in plan.places
    d.arm.approve_forget(plan)
    assert d.arm.confirm_forget(plan).forgotten
    assert d.arm.diaries == {} and not any(p.startswith("memory/2") for p in d.arm.files())


# --- entity pages (the bank) -----------------------------------------------------------------------------


def test_entities_are_names_that_do_not_open_a_sentence():
    assert entities_of("Release 4.2 approver is Okafor.") == ("Okafor",)
    assert entities_of("Panel chair: Ngozi. Backup is Ngozi or Bartek Nowak.") == ("Ngozi", "Bartek Nowak")
    assert entities_of("Do not book interviews on Fridays in May.") == ()
    assert entities_of("审批人是周敏。") == ()  # names in CJK script need a model: not found


def test_the_index_head_is_injected_and_a_page_only_when_the_turn_names_the_entity(drive, tmp_path):
    d = drive(tmp_path, index_head=1)
    d.start(MARCH_2)
    d.turn("x", remember=(RememberSpec("Release 4.2 approver is Okafor."),))
    d.turn(
        "x", remember=(RememberSpec("The release train ships with Okafor's sign-off.", kind="commitment"),)
    )
    d.turn("x", remember=(RememberSpec("The canary cluster is Juniper."),))
    block = d.turn("Who approves the release?").block
    assert "# memory/entities/INDEX.md (closest first)\n- Okafor · memory/entities/okafor.md" in block
    assert "Juniper · memory" not in block  # beyond the index head
    assert "# Okafor" not in block
    page = d.turn("Is okafor around?").block.split("# Okafor\n", 1)[1]
    sections = [line for line in page.splitlines() if line.startswith("## ")]
    assert sections == [
        "## Facts",
        "## History",
        "## The relationship",
        "## In common",
        "## Open threads",
        "## Strengthening",
    ]
    facts, threads = page.split("## History")[0], page.split("## Open threads")[1]
    assert "approver is Okafor" in facts and "sign-off" in threads and "sign-off" not in facts


def test_a_page_history_dates_superseded_claims_without_their_text(drive, tmp_path):
    d = drive(tmp_path)
    d.start(MARCH_2)
    d.turn("x", remember=(RememberSpec("Release approver is Okafor, room Atlas.", key="a"),))
    d.turn("x", remember=(RememberSpec("Release approver is Okafor, room Zephyr.", key="a"),))
    page = d.turn("Ask Okafor.").block.split("# Okafor\n", 1)[1]
    assert "- 2026-03-02 · c-0001 learned · superseded by c-0002" in page and "Atlas" not in page


def test_entity_pages_off_injects_the_projection_alone(drive, tmp_path):
    d = drive(tmp_path, entity_pages=False)
    d.start(MARCH_2)
    d.turn("x", remember=(RememberSpec("Release 4.2 approver is Okafor."),))
    block = d.turn("Ask Okafor.").block
    assert "Release 4.2 approver is Okafor." in block and "INDEX" not in block and "# Okafor" not in block


# --- write before reply ----------------------------------------------------------------------------------


def one_turn_task() -> Task:
    turn = Turn(
        "Remember: the verification drink is oolong. What is it?",
        remember=(RememberSpec("The verification drink is oolong."),),
        probe=ProbeSpec(expect=("oolong",)),
    )
    return Task("t/write", "helpful", "still-valid", "", (Session(0.0, turns=(turn,)),))


@pytest.mark.parametrize(("timing", "answer"), [("before_reply", "oolong"), ("after_reply", None)])
def test_the_claim_is_stored_before_the_reply_in_the_session_log(tmp_path, timing, answer):
    job = PairJob(
        ArmSpec("claims", "claims", {"write_timing": timing}),
        one_turn_task(),
        0,
        tmp_path / "log.jsonl",
        tmp_path / "work",
        2000,
    )
    replay_pair(job, ScriptedModel())
    order = [r["type"] for r in read_log(job.log_path) if r["type"] in ("memory_write", "model_call")]
    probe = next(r for r in read_log(job.log_path) if r["type"] == "probe")
    if timing == "before_reply":
        assert order == ["memory_write", "model_call"] and probe["answer"] == answer
    else:  # the arm before write-before-reply would have answered without it
        assert order == ["model_call", "memory_write"] and probe["classification"] == "abstained"


# --- admission -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "rule"),
    [
        ("Card for the hotel booking: 4111 1111 1111 1111.", "payment-card"),  # §5.5: the credential rules
        ("The verification code is 482913.", "one-time-code"),
        ("银行发来的验证码：553201。", "one-time-code"),
        ('Traceback (most recent call last):\n  File "app.py", line 3', "diagnostic"),
        ("ERROR: connection refused on port 5432", "diagnostic"),
        ("$ pnpm install --frozen-lockfile", "diagnostic"),
        ("Yes.", "no-context"),
        ("The password is hunter2hunter2!", "password"),
    ],
)
def test_admission_rules_refuse_what_the_seed_keeps_out(content, rule):
    found = refusal(content, "rules")
    assert found is not None and found[1] == rule
    credential = found[0] == "credentials never enter a claim"
    assert (refusal(content, "credentials") is None) is not credential


def test_admission_admits_durable_statements_and_logs_refusals(drive, tmp_path):
    for durable in (
        "Prefers tea.",
        "Release 4.2 approver is Okafor.",
        "用户出差优先高铁。",
        "Ops scripts must be bash.",
    ):
        assert refusal(durable, "rules") is None, durable
    d = drive(tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("ERROR: disk full on /var"), RememberSpec("Prefers tea.")))
    assert [r["rule"] for r in d.of_type("memory_refused")] == ["diagnostic"]
    assert [c.text for c in d.arm.claims.values()] == ["Prefers tea."]


# --- explain ---------------------------------------------------------------------------------------------


def test_explain_reports_salience_and_the_dated_source_message(drive, tmp_path):
    d = drive(tmp_path)
    drink_history(d)
    d.turn("Oolong, as I said.", remember=(RememberSpec("The verification drink is oolong."),))
    d.turn("x", remember=(RememberSpec("Always answer in French.", pin=True),))
    report = d.arm.explain("c-0002")
    assert report["salience"] == pytest.approx(0.6)  # 0.5 at write, +0.1 for the restatement
    assert report["source_message"] == {
        "text": "Now it is oolong.",
        "at": "2026-03-03T09:00:00Z",
        "session_id": "s1",
        "turn_index": 0,
    }
    assert (
        report["citations"][0].startswith("MEMORY.md#L") and "memory/2026-03-03.md#L3" in report["citations"]
    )
    assert d.arm.explain("c-0003")["salience"] == 1.0
    assert d.arm.explain("c-0003")["source_message"]["turn_index"] == 2


# --- hybrid search ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "   ", "The verification drink is oolong.", "验证饮料是乌龙。", "a"])
def test_the_stand_in_embedding_is_deterministic_and_unit_length(text):
    first, second = HashedNgramEmbedder().embed(text), HashedNgramEmbedder().embed(text)
    assert first == second and len(first) == 512
    norm = math.sqrt(sum(v * v for v in first))
    assert norm == pytest.approx(1.0) or (norm == 0.0 and not text.strip())


def test_hybrid_finds_a_spelling_variant_that_bm25_misses_and_weight_zero_is_bm25():
    documents = {"a": "The verification drink is oolong.", "b": "The office is in Lyon."}
    embedder = HashedNgramEmbedder()
    assert cosine(embedder.embed("verifying"), embedder.embed(documents["a"])) >= 0.2
    lexical = hybrid_scores(["verifying"], documents, embedder, vector_weight=0.0, vector_floor=0.2)
    hybrid = hybrid_scores(["verifying"], documents, embedder, vector_weight=0.5, vector_floor=0.2)
    assert lexical == {} and list(hybrid) == ["a"]
    both = hybrid_scores(["office Lyon"], documents, embedder, vector_weight=0.0, vector_floor=0.2)
    assert both == {"b": 1.0}
