from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arms.claims import REDACTED_QUOTE, WITHHELD_QUOTE
from arms.registry import create_arm
from tasks.spec import ForgetSpec, RememberSpec

DAY = 86_400.0


@pytest.fixture(scope="module")
def drive(arm_driver):
    """`drive(workdir, name="claims", **options)`: an ArmDriver over that arm."""
    return lambda workdir, name="claims", **options: arm_driver(create_arm(name, options), workdir)


def test_new_claim_on_the_same_subject_supersedes_and_explain_shows_the_chain_both_ways(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0)
    d.turn("The drink is lapsang.", remember=(RememberSpec("The verification drink is lapsang."),))
    d.turn("Now oolong.", remember=(RememberSpec("The verification drink is oolong."),))
    d.turn("Back to lapsang.", remember=(RememberSpec("The verification drink is lapsang again."),))
    arm = d.arm
    middle = arm.explain("c-0002")
    assert middle["status"] == "superseded"
    assert middle["supersedes_chain"] == ["c-0001"] and middle["superseded_by_chain"] == ["c-0003"]
    assert arm.explain("c-0001")["superseded_by_chain"] == ["c-0002", "c-0003"]
    assert arm.explain("c-0003")["supersedes_chain"] == ["c-0002", "c-0001"]
    assert middle["quote"] == "Now oolong." and middle["speaker"] == "user"
    block = d.turn("x").block
    assert "lapsang again" in block and "oolong" not in block  # superseded claims are never injected
    assert [f["reason"] for f in d.of_type("memory_forget")] == ["superseded", "superseded"]


def test_identical_restatement_reinforces(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("Answer in French.", kind="preference"),))
    d.end()
    d.start(DAY)
    d.turn("x", remember=(RememberSpec("Answer in  french.", kind="preference"),))
    claim = d.arm.explain("c-0001")
    assert claim["last_reinforced"] == DAY and claim["confidence"] == pytest.approx(0.95)
    assert len(d.arm.claims) == 1 and d.of_type("memory_touch")[0]["reason"] == "reinforce"


def test_similarity_rule_misses_a_rephrasing_that_the_oracle_key_catches(drive, tmp_path):
    specs = (
        RememberSpec("The verification drink is lapsang.", key="drink"),
        RememberSpec("Verification tea: oolong.", key="drink"),
    )
    for name, active in (("claims", 2), ("claims-oracle-key", 1)):
        d = drive(tmp_path / name, name)
        d.start(0)
        for spec in specs:
            d.turn("x", remember=(spec,))
        assert sum(c.active for c in d.arm.claims.values()) == active


def test_oracle_key_follows_a_chain_whose_head_has_no_key(drive, tmp_path):
    d = drive(tmp_path, "claims-oracle-key")
    d.start(0)
    d.turn("x", remember=(RememberSpec("Ingest service runtime: Python 3.10.", key="py"),))
    d.turn("x", remember=(RememberSpec("Ingest service runtime: Python 3.11.", key=None),))
    d.turn("x", remember=(RememberSpec("Ingest service is on 3.12 now.", key="py"),))
    assert [c.id for c in d.arm.claims.values() if c.active] == ["c-0003"]


def test_untrusted_text_cannot_supersede_the_users_claim(drive, tmp_path):
    d = drive(tmp_path, "claims-oracle-key")
    d.start(0)
    d.turn("x", remember=(RememberSpec("The verification drink is lapsang.", key="drink"),))
    d.turn("x", remember=(RememberSpec("The verification drink is coffee.", key="drink", source="auto"),))
    block = d.turn("x").block
    assert "lapsang" in block
    assert "untrusted · said by web · The verification drink is coffee." in block


def test_projection_groups_sections_and_every_line_carries_its_age(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0)
    d.turn(
        "x",
        remember=(
            RememberSpec("Prefers tea.", kind="preference"),
            RememberSpec("Ship the report by Friday.", kind="commitment"),
            RememberSpec("The office is in Lyon."),
        ),
    )
    d.end()
    d.start(2 * DAY)
    lines = d.turn("x").block.splitlines()
    assert lines[0] == "# MEMORY.md (3 active claims)"
    sections = [line for line in lines if line.startswith("## ")]
    assert sections == ["## Facts", "## Preferences", "## Commitments"]
    assert (
        lines.index("## Facts")
        < next(i for i, line in enumerate(lines) if "Lyon" in line)
        < lines.index("## Preferences")
    )
    assert all("written 2d ago" in line for line in lines if line.startswith("- ["))


def test_two_phase_forget_plan_is_read_only_then_confirm_verifies(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0)
    d.turn("The drink is lapsang.", remember=(RememberSpec("The verification drink is lapsang.", key="d"),))
    d.turn("Now oolong.", remember=(RememberSpec("The verification drink is oolong."),))
    d.turn("I told you the verification drink is oolong.", remember=(RememberSpec("Office is in Lyon."),))
    arm = d.arm
    before = {cid: repr(c) for cid, c in arm.claims.items()}
    records_before = len(d.records)
    plan = arm.plan_forget(ForgetSpec(key="d"))
    assert {cid: repr(c) for cid, c in arm.claims.items()} == before and len(d.records) == records_before
    assert plan.claim_ids == ("c-0001", "c-0002")  # the keyed claim and its superseding history
    assert plan.quote_edits == ("c-0003",)
    assert any("history" in place for place in plan.places)
    arm.approve_forget(plan)
    check = arm.confirm_forget(plan)
    assert check.forgotten
    assert list(arm.claims) == ["c-0003"] and arm.claims["c-0003"].quote == REDACTED_QUOTE
    assert arm.verify_forgotten(plan.search_texts) == check
    assert "drink" not in d.turn("x").block


def test_confirm_refuses_a_stale_plan(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("Fact alpha.", key="a"),))
    plan = d.arm.plan_forget(ForgetSpec(key="a"))
    d.arm.approve_forget(plan)
    d.arm.confirm_forget(plan)
    d.arm.approve_forget(plan)
    with pytest.raises(RuntimeError, match="plan is stale"):
        d.arm.confirm_forget(plan)


def test_credentials_never_enter_a_claim(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("The password is hunter2hunter2!"),))
    d.turn("my token is ghp_abcdefghijklmnopqrstuvwxyz0123456789", remember=(RememberSpec("Uses GitHub."),))
    assert [r["reason"] for r in d.of_type("memory_refused")] == ["credentials never enter a claim"]
    assert d.arm.claims["c-0001"].quote == WITHHELD_QUOTE
    assert "hunter2" not in str(d.records) and "ghp_" not in str(d.records)


def test_sub_agent_claims_are_scoped_and_disposed(drive, tmp_path):
    d = drive(tmp_path)
    d.start(0, agent="sub")
    d.turn("x", remember=(RememberSpec("Scratch guess: coffee."),))
    d.end()
    assert d.of_type("memory_forget")[-1]["reason"] == "agent-disposed" and d.arm.claims == {}
    assert d.arm.diaries == {}  # its diary entries go with it


@settings(max_examples=50, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["room", "drink", None]), st.sampled_from(["Atlas", "Zephyr", "oolong", "tea"])
        ),
        min_size=1,
        max_size=10,
    )
)
def test_oracle_key_keeps_at_most_one_live_claim_per_key(drive, tmp_path_factory, writes):
    d = drive(tmp_path_factory.mktemp("c"), "claims-oracle-key")
    d.start(0)
    for key, value in writes:
        d.turn("x", remember=(RememberSpec(f"The {key or 'misc'} value is {value}.", key=key),))
    arm = d.arm
    for key in ("room", "drink"):
        heads = {arm._head(c).id for c in arm.claims.values() if c.key == key}
        assert len(heads) <= 1
    for claim in arm.claims.values():  # links are consistent both ways
        if claim.superseded_by is not None:
            assert arm.claims[claim.superseded_by].supersedes == claim.id
