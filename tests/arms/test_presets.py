from __future__ import annotations

import pytest

from arms.registry import VARIANTS, create_arm, resolve
from tasks.errors import ArmConfigError
from tasks.spec import RememberSpec

PRESETS = {name: options for name, (base, options) in VARIANTS.items() if name.startswith("amnesia-")}

DAY = 86_400.0


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_are_amnesia_variants(name):
    base, options = resolve(name)
    assert base == "amnesia" and options == PRESETS[name]
    assert create_arm(name).describe()["options"] == PRESETS[name]


def seen_on_day(arm_driver, tmp_path, name, probe_days):
    """Write a 3-day memory, then look on each probe day (each look is an injection, i.e. a read)."""
    d = arm_driver(create_arm(name), tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("The standup room is Atlas.", ttl=3 * DAY),))
    d.end()
    seen = []
    for day in probe_days:
        d.start(day * DAY)
        seen.append("Atlas" in d.turn("Which room?").block)
        d.end()
    return seen


def test_hard_ttl_expires_despite_reads_and_sliding_ttl_renews_on_read(arm_driver, tmp_path):
    days = (2, 4, 6, 8)
    hard = seen_on_day(arm_driver, tmp_path / "hard", "amnesia-hard-ttl", days)
    sliding = seen_on_day(arm_driver, tmp_path / "sliding", "amnesia-sliding-ttl", days)
    assert hard == [True, False, False, False]
    assert sliding == [True, True, True, True]


def test_keep_all_oracle_key_supersedes_by_key_and_never_expires(arm_driver, tmp_path):
    d = arm_driver(create_arm("amnesia-keep-all-oracle-key"), tmp_path)
    d.start(0)
    d.turn("x", remember=(RememberSpec("The drink is lapsang.", key="drink", ttl=DAY),))
    d.turn("x", remember=(RememberSpec("The drink is oolong now.", key="drink", ttl=DAY),))
    d.end()
    d.start(30 * DAY)
    block = d.turn("x").block
    assert "oolong" in block and "lapsang" not in block


@pytest.mark.parametrize("options", [{}, {"query": "none"}])
def test_relevance_preset_ranks_by_the_current_user_message(arm_driver, tmp_path, options):
    """The arm passes the user's message as the query (arm option `query: user`, the default): with room for
    one line, the memory the question is about is injected, not the newer one; `query: none` gives the
    strength order."""
    d = arm_driver(create_arm("amnesia-relevance", options), tmp_path, budget_tokens=45)
    d.start(0)
    d.turn("x", remember=(RememberSpec("The standup room is Atlas.", ttl=30 * DAY),))
    d.end()
    d.start(DAY)
    d.turn("x", remember=(RememberSpec("The deploy rota changes every Monday.", ttl=30 * DAY),))
    d.end()
    d.start(2 * DAY)
    context = d.turn("Which standup room do we use?")
    assert ("Atlas" in context.block) is (options.get("query", "user") == "user")
    assert context.details.get("order") == ("relevance" if "Atlas" in context.block else None)


def test_relevance_arm_option_query_is_checked():
    with pytest.raises(ArmConfigError, match=r"query: expected user\|none, got 'model'"):
        create_arm("amnesia-relevance", {"query": "model"})
