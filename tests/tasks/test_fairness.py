"""tasks.fairness: the ttl-vs-probe-age ratios that say whether a set's ttls act as an oracle."""

from __future__ import annotations

from pathlib import Path

import yaml

from tasks.fairness import DEFAULT_TTL, oracle_check, ttl_ratios
from tasks.generate import generate
from tasks.load import load_tasks
from tasks.spec import ProbeSpec, RememberSpec, Session, Task, Turn

DAY = 86_400.0


def _task(ttl: float | None, probe_at: float, *, pin: bool = False) -> Task:
    write = RememberSpec(content="The standup room is Juniper.", ttl=ttl, pin=pin)
    probe = ProbeSpec(expect=("Juniper",), mechanism="still-valid")
    return Task(
        id="t",
        group="helpful",
        category="c",
        description="d",
        sessions=(
            Session(at=0.0, turns=(Turn(user="u", remember=(write,)),)),
            Session(at=probe_at, turns=(Turn(user="q", probe=probe),)),
        ),
    )


def test_ratio_is_age_over_the_writers_ttl_or_the_default() -> None:
    (ratio,) = ttl_ratios([_task(7 * DAY, 21 * DAY)])
    assert (ratio.kind, ratio.value, ratio.mechanism, ratio.ratio) == (
        "expect",
        "Juniper",
        "still-valid",
        3.0,
    )
    (default,) = ttl_ratios([_task(None, 15 * DAY)])
    assert default.ttl == DEFAULT_TTL and default.ratio == 0.5
    assert ttl_ratios([_task(None, 15 * DAY, pin=True)]) == []  # a pin has no ttl to obey


def test_oracle_check_flags_a_set_on_one_side_only() -> None:
    inside = ttl_ratios([_task(30 * DAY, DAY), _task(30 * DAY, 2 * DAY)])
    assert oracle_check(inside) == [
        "every expected value is younger than its ttl: a ttl-obeying policy never forgets one"
    ]
    assert oracle_check(inside + ttl_ratios([_task(DAY, 2 * DAY)])) == []


def test_generated_ttls_are_on_both_sides(tmp_path: Path) -> None:
    """The generator draws ttls the way people set them: some too short for a lasting fact, some outliving a
    changed fact, in each group."""
    for group in ("helpful", "harmful", "mixed"):
        path = tmp_path / f"{group}.yaml"
        path.write_text(yaml.safe_dump(generate(group, 60, seed=3), allow_unicode=True), encoding="utf-8")
        ratios = [r for r in ttl_ratios(load_tasks(path)) if r.kind != "poison"]
        assert {r.ratio > 1 for r in ratios} == {True, False}, group
        assert oracle_check(ratios) == [], group
