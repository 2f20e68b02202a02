"""tasks.fairness: which probe values an arm's own time rule (curve, thresholds, renewal, ttl policy) puts on
its wrong side, the oracle rule, exact-gap probes, and `amnesia-bench validate --fairness` on a constructed
oracle set (fails), the shipped sets and a generated set (pass)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from amnesia.config import Config
from tasks.fairness import (
    MIN_VALUES,
    TimeRule,
    exact_gaps,
    oracle_problem,
    separated_mechanisms,
    value_fates,
    wrong_side_counts,
)
from tasks.generate import generate
from tasks.load import load_tasks
from tasks.spec import NEVER, ForgetSpec, ProbeSpec, RememberSpec, Session, Task, Turn

DAY = 86_400.0
HOUR = 3600.0
EBBINGHAUS = TimeRule(Config())
FLAT = TimeRule(Config(default_curve="flat", renew_on_inject="none"))
SHIPPED = Path(__file__).resolve().parents[2] / "tasks"


def _task(
    write: RememberSpec, probe_at: float, *, between: tuple[float, ...] = (), forget: ForgetSpec | None = None
) -> Task:
    probe = ProbeSpec(expect=("Juniper",), mechanism="still-valid")
    middle = tuple(
        Session(at=at, turns=(Turn(user="chat", forget=(forget,) if forget else ()),)) for at in between
    )
    return Task(
        id="t",
        group="helpful",
        category="c",
        description="d",
        sessions=(
            Session(at=0.0, turns=(Turn(user="u", remember=(write,)),)),
            *middle,
            Session(at=probe_at, turns=(Turn(user="q", probe=probe),)),
        ),
    )


def _kept(task: Task, rule: TimeRule) -> bool:
    (fate,) = value_fates([task], rule)
    return fate.kept


def test_the_cut_off_is_the_arms_curve_not_the_writers_ttl() -> None:
    write = RememberSpec(content="The standup room is Juniper.", ttl=10 * DAY)
    # 0.40 x ttl under the default ebbinghaus curve (stale_strength 0.3, k 3), the ttl itself when flat
    assert _kept(_task(write, 3.9 * DAY), EBBINGHAUS) and not _kept(_task(write, 4.1 * DAY), EBBINGHAUS)
    assert _kept(_task(write, 9.9 * DAY), FLAT) and not _kept(_task(write, 10 * DAY), FLAT)
    linear = TimeRule(Config(default_curve="linear"))
    assert _kept(_task(write, 6.9 * DAY), linear) and not _kept(_task(write, 7.1 * DAY), linear)
    custom = TimeRule(Config(stale_strength=0.1))  # ln(10)/3 = 0.77 x ttl
    assert _kept(_task(write, 7.6 * DAY), custom) and not _kept(_task(write, 7.8 * DAY), custom)


def test_renewal_by_injection_and_the_ttl_policy_move_the_cut_off() -> None:
    write = RememberSpec(content="The standup room is Juniper.", ttl=10 * DAY)
    # a main session at 3d shows it: its clock restarts at strength 0.41 x 1.5 + 0.1 = 0.71, shown to 5.87d
    renewed = _task(write, 5.8 * DAY, between=(3 * DAY,))
    assert _kept(renewed, EBBINGHAUS)
    assert not _kept(renewed, TimeRule(Config(renew_on_inject="none")))
    assert not _kept(_task(write, 6 * DAY, between=(5 * DAY,)), EBBINGHAUS)  # already hidden at 5d

    def fixed_1d(ttl: float | None, seed: int, index: int) -> float | None:
        return DAY

    assert not _kept(_task(write, 2 * DAY), TimeRule(Config(), fixed_1d))
    no_ttl = RememberSpec(content="The standup room is Juniper.")
    assert _kept(_task(no_ttl, 11 * DAY), EBBINGHAUS)  # the default 30d ttl: shown to 12.04d
    assert not _kept(_task(no_ttl, 2 * DAY), TimeRule(Config(default_ttl=DAY)))
    untrusted = RememberSpec(content="The standup room is Juniper.", ttl=30 * DAY, source="auto")
    assert _kept(_task(untrusted, 23 * HOUR), FLAT) and not _kept(_task(untrusted, 25 * HOUR), FLAT)


def test_values_not_decided_by_time_are_left_out() -> None:
    pinned = RememberSpec(content="The standup room is Juniper.", pin=True)
    scratch = RememberSpec(content="The standup room is Juniper.", ttl=DAY, scope="session")
    deleted = _task(RememberSpec(content="Room Juniper.", ttl=DAY, key="room"), DAY, between=(HOUR,),
                    forget=ForgetSpec(key="room"))  # fmt: skip
    assert value_fates([_task(pinned, 9 * DAY), _task(scratch, HOUR), deleted], EBBINGHAUS) == []


def _changed_fact(index: int, *, old_hidden: bool = True, new_kept: bool = True) -> Task:
    """The old value written with a 1d ttl, the new one a day later with 30d, probed on day 3: time alone
    hides the old one and keeps the new one — unless told otherwise (a counter-example)."""
    old_ttl = 1 * DAY if old_hidden else 60 * DAY
    new_ttl = 30 * DAY if new_kept else 2 * HOUR
    old, new = f"Aurora{index}", f"Juniper{index}"
    return Task(
        id=f"oracle/{index}",
        group="harmful",
        category="fact-change",
        description="d",
        sessions=(
            Session(
                at=0.0, turns=(Turn(user="u", remember=(RememberSpec(f"The room is {old}.", old_ttl),)),)
            ),
            Session(
                at=DAY, turns=(Turn(user="u", remember=(RememberSpec(f"The room is {new}.", new_ttl),)),)
            ),
            Session(
                at=3 * DAY,
                turns=(
                    Turn(user="q", probe=ProbeSpec(expect=(new,), stale=(old,), mechanism="changed-fact")),
                ),
            ),
        ),
    )


def test_a_set_whose_ttls_sort_95_percent_of_values_is_an_oracle_one_counter_example_is_not_enough() -> None:
    oracle = [_changed_fact(i) for i in range(19)]
    counter = [_changed_fact(19, old_hidden=False), _changed_fact(20, new_kept=False)]
    fates = value_fates(oracle + counter, EBBINGHAUS)
    assert wrong_side_counts(fates) == {"expect": [1, 21], "stale": [1, 21]}
    problem = oracle_problem(fates)
    assert problem is not None and problem.startswith("the set: time alone keeps 95% of 21 expected values")
    assert separated_mechanisms(fates) == [problem.replace("the set", "mechanism changed-fact")]
    # a fifth of each side against the ttl is no oracle; nor is a set too small to show a pattern
    fair = oracle + [_changed_fact(100 + i, old_hidden=i % 2 == 0, new_kept=i % 2 == 1) for i in range(10)]
    assert oracle_problem(value_fates(fair, EBBINGHAUS)) is None
    assert oracle_problem(value_fates(oracle[: MIN_VALUES - 1], EBBINGHAUS)) is None
    # flat keeps the 1d ttl's old value to the end of day 1 only: the same set is an oracle for it too
    assert oracle_problem(value_fates(oracle + counter, FLAT)) is not None


def test_a_probe_on_the_cut_off_is_an_exact_gap() -> None:
    write = RememberSpec(content="The standup room is Juniper.", ttl=DAY)
    assert [f.probe_at for f in exact_gaps(value_fates([_task(write, DAY)], FLAT))] == [DAY]
    assert exact_gaps(value_fates([_task(write, DAY - 2 * HOUR)], FLAT)) == []
    long = RememberSpec(content="The standup room is Juniper.", ttl=100 * DAY)  # tolerance: 1% of the ttl
    assert exact_gaps(value_fates([_task(long, 99.5 * DAY)], FLAT)) != []
    assert exact_gaps(value_fates([_task(long, 98.5 * DAY)], FLAT)) == []
    never = RememberSpec(
        content="The standup room is Juniper.", ttl=NEVER
    )  # kept for good, no cut-off to sit on
    assert [(f.kept, f.hidden_at) for f in value_fates([_task(never, 400 * DAY)], FLAT)] == [(True, math.inf)]
    assert exact_gaps(value_fates([_task(never, 400 * DAY)], FLAT)) == []


def _validate(path: Path, *extra: str):
    from amnesia_bench.cli import app

    return CliRunner().invoke(app, ["validate", str(path), "--fairness", *extra])


def test_validate_fairness_fails_a_constructed_oracle_set(tmp_path: Path) -> None:
    tasks = [_changed_fact(i) for i in range(19)] + [_changed_fact(19, old_hidden=False)]
    documents = [
        {
            "id": t.id,
            "group": t.group,
            "category": t.category,
            "description": t.description,
            "sessions": [
                {
                    "at": f"{int(s.at)}s",
                    "turns": [
                        {
                            "user": turn.user,
                            "remember": {
                                "content": turn.remember[0].content,
                                "ttl": f"{int(turn.remember[0].ttl)}s",
                            },
                        }
                        if turn.remember
                        else {
                            "user": turn.user,
                            "probe": {
                                "mechanism": "changed-fact",
                                "expect": list(turn.probe.expect),
                                "stale": list(turn.probe.stale),
                            },
                        }
                        for turn in s.turns
                    ],
                }
                for s in t.sessions
            ],
        }
        for t in tasks
    ]
    (tmp_path / "oracle.yaml").write_text(yaml.safe_dump(documents), encoding="utf-8")
    result = _validate(tmp_path / "oracle.yaml", "--arms", "amnesia,full-memory")
    assert result.exit_code == 1, result.output
    assert "ORACLE: the set: time alone keeps 100% of 20 expected values and drops 95%" in result.output
    assert "fairness: the set acts as an oracle for amnesia" in result.output
    assert "not checked (they do not forget by the writer's ttl): full-memory" in result.output
    # the same set under a one-week ttl for every write is no oracle: the old value outlives its change
    fixed = _validate(tmp_path / "oracle.yaml", "--arms", "amnesia", "--set", "amnesia.ttl_policy=fixed:7d")
    assert fixed.exit_code == 0, fixed.output


def test_validate_fairness_passes_the_shipped_sets_with_no_exact_gap() -> None:
    result = _validate(SHIPPED)
    assert result.exit_code == 0, result.output
    assert "fairness: no arm's time rule is an oracle for this set" in result.output
    assert "exact gap" not in result.output and "ORACLE" not in result.output
    for arm in ("amnesia", "amnesia-hard-ttl", "amnesia-sliding-ttl"):
        assert f"\n{arm}\n" in result.output


@pytest.mark.parametrize("group", ["helpful", "harmful", "mixed"])
def test_generated_sets_are_no_oracle(group: str, tmp_path: Path) -> None:
    """The generator draws ttls the way people set them: in each group, time alone puts values on both
    sides for the default curve and for a flat one."""
    path = tmp_path / f"{group}.yaml"
    path.write_text(yaml.safe_dump(generate(group, 60, seed=3), allow_unicode=True), encoding="utf-8")
    for rule in (EBBINGHAUS, FLAT):
        fates = value_fates(load_tasks(path), rule)
        assert {f.wrong_side for f in fates} == {True, False}, group
        assert oracle_problem(fates) is None, group
