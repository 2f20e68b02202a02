"""The shortcuts taken for speed give exactly what the slow way gives: token counts that are summed or counted
once per item instead of recounted, and audit entries built as named tuples."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from amnesia import Amnesia, Config, SimulatedClock
from amnesia.audit import AuditEntry
from amnesia.tokens import count_tokens

step = st.fixed_dictionaries(
    {
        "words": st.lists(
            st.sampled_from(["kettle", "left", "東京", "版本", "42", "x-9", "cupboard!"]), min_size=1
        ),
        "ttl": st.floats(min_value=60.0, max_value=1e6),
        "pin": st.booleans(),
        "auto": st.booleans(),
        "deadline": st.none() | st.floats(min_value=1.0, max_value=1e6),
        "advance": st.floats(min_value=0.0, max_value=1e5),
        "select": st.booleans(),
    }
)


@settings(max_examples=80, deadline=None)
@given(st.lists(step, min_size=1, max_size=15), st.sampled_from(["forget", "rank"]), st.integers(0, 400))
def test_planned_costs_and_block_size_match_a_fresh_count(steps, mode, budget):
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    config = Config(decay_mode=mode, max_store_bytes=10**7)
    engine = Amnesia(config=config, clock=clock, id_factory=lambda: f"m-{next(counter):04d}")
    for spec in steps:
        pinned = spec["pin"] and not spec["auto"]
        deadline = None if pinned or spec["deadline"] is None else clock.now() + spec["deadline"]
        engine.remember(
            " ".join(spec["words"]),
            ttl=spec["ttl"],
            pin=pinned,
            source="auto" if spec["auto"] else "user",
            expires_at=deadline,
        )
        clock.advance(spec["advance"])
        if spec["select"]:  # touches what it injects: line costs must survive renewals
            engine.select_for_injection(budget)
    plan = engine.preview(budget)
    assert plan.tokens == count_tokens(plan.block)
    lines = plan.block.splitlines()[1:]
    injected = [d for d in plan.decisions if d.decision == "injected"]
    for line, decision in zip(lines, injected, strict=True):
        assert count_tokens(line) == decision.tokens
        assert " · expires in " not in line  # the same line format whether or not the item can expire


def test_audit_entries_are_immutable_and_round_trip():
    entry = AuditEntry("m-1", "fact", "stale", 5.0, "ab" * 32, ttl=60.0)
    with pytest.raises(AttributeError):
        entry.reason = "manual"  # type: ignore[misc]
    assert AuditEntry.from_dict(entry.to_dict()) == entry
    assert list(entry.to_dict()) == [
        "item_id",
        "kind",
        "reason",
        "at",
        "content_hash",
        "workspace_id",
        "scope",
        "owner_id",
        "key",
        "ttl",
        "content",
        "restored_from",
        "restore_fields",
    ]


def _secret_rule_by_every_rule(text: str) -> str | None:
    """The slow way: every rule in order, then the card check."""
    from amnesia import safety

    expected = next((rule.name for rule in safety.RULES if rule.fires(text)), None)
    if expected is None and safety.find_card_number(text):
        return "payment-card"
    return expected


_TEXT = st.lists(
    st.sampled_from([*"aZ0_ -·.:=\t\x1c", "東", "ア", "한", "ſ", "K", "é", "sk-", "pin", "token", "密码"]),
    max_size=30,
).map("".join)
_SECRETISH = st.sampled_from(
    [
        "my password is hunter22",
        "PIN code: 48213",
        "the token = abcdefghijklmnop",
        "sk-proj-ABCDEFGHIJKLMNOPQRSTUV",
        "card 4111 1111 1111 1111",
        "Verification code 123456",
        "密码是 abc123",
        "ghp_" + "a" * 36,
        "ſk-" + "A" * 24,  # non-ASCII: IGNORECASE equivalences the ASCII shortcut must not decide
    ]
)


_FRAGMENTS = st.sampled_from(
    [
        "-----BEGIN RSA PRIVATE KEY-----",
        "AKIA",
        "ASIA1234567890ABCDEF",
        "sk-",
        "sk_live_",
        "rk_test_abcdefghijklmnopq",
        "pk-abc-",
        "AIza",
        "ghp_",
        "github_pat_",
        "xoxb-",
        "Bearer ",
        "eyJ",
        "api key",
        "secret_key",
        "Access-Token",
        "auth token",
        "client secret",
        "token",
        "password",
        "passwd",
        "pwd",
        "PIN code",
        "one-time code",
        "OTP code",
        "2fa code",
        " is ",
        ": ",
        "=",
        "'",
        "4111 1111 1111 1111",
        "1234567890123",
        "a" * 20,
        "A1b2" * 6,
        ".",
        "-",
        "_",
        " ",
    ]
)


@settings(max_examples=1000, deadline=None)
@given(
    st.lists(_TEXT | _SECRETISH, max_size=4).map(" ".join)
    | st.lists(_FRAGMENTS | st.text(alphabet=st.characters(max_codepoint=127), max_size=60), max_size=6).map(
        "".join
    )
)
def test_secret_detection_with_the_literal_shortcut_equals_running_every_rule(text):
    from amnesia import safety

    assert safety.find_secret_rule(text) == _secret_rule_by_every_rule(text)


@settings(max_examples=600, deadline=None)
@given(st.data())
def test_every_rule_s_matches_are_found_through_the_literal_shortcut(data):
    """Text drawn from each rule's own regex: a literal missing from a rule's needles shows here (the
    shortcut once skipped `github_pat_` tokens)."""
    from amnesia import safety

    rule = data.draw(st.sampled_from(safety.RULES))
    text = data.draw(st.from_regex(rule.pattern))
    found = safety.find_secret_rule(text)
    assert found == _secret_rule_by_every_rule(text)
    assert found is not None or rule.accept is not None  # a match counts unless the rule tests its value


@settings(max_examples=400, deadline=None)
@given(_TEXT)
def test_token_count_in_one_findall_equals_the_per_run_rule(text):
    import re

    from amnesia.tokens import _CJK

    runs = re.findall(rf"[{_CJK}]|[^\W{_CJK}]+|[^\s\w]", text)
    assert count_tokens(text) == sum(-(-len(run) // 4) for run in runs)


def test_the_view_of_a_write_fills_every_field_of_its_dataclass():
    from dataclasses import fields

    from amnesia.views import MemoryView

    view = Amnesia(clock=SimulatedClock(0.0)).remember("Deploys freeze on Friday.", ttl="1d", key="freeze")
    assert set(vars(view)) == {field.name for field in fields(MemoryView)}
    assert view == MemoryView(**vars(view))


def test_the_dict_of_a_write_s_view_is_the_generic_one_of_its_fields():
    """`MemoryView.to_dict` (every `written` event) builds the dict from the filled-in fields at once: the
    same keys in the same order and the same values as the generic view dict, tags and ids as lists."""
    from amnesia.views import _View

    engine = Amnesia(clock=SimulatedClock(0.0), config=Config(max_store_bytes=60, max_item_bytes=60))
    engine.remember("Deploys freeze on Friday.", ttl="1d", key="freeze", tags=["ops", "deploy"])
    views = [
        engine.remember("Deploys freeze on Monday.", ttl="2d", key="freeze"),  # supersedes the first
        engine.remember("The build cache lives in /var/cache/ci now.", ttl="3d"),  # evicts to make room
    ]
    assert views[0].superseded and views[1].evicted
    for view in views:
        expected = _View.to_dict(view)
        assert list(view.to_dict().items()) == list(expected.items())


def test_every_secret_literal_is_written_folded():
    """find_secret_rule looks the literals up in text lower-cased with its digits all made "0"."""
    from amnesia import safety

    for needle in safety._NEEDLES:
        assert needle == needle.lower() and not any(char.isdigit() and char != "0" for char in needle)
