"""The `ttl_policy` arm option: ttls as people and agents really set them (issue 11)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from arms.arm_options import TtlPolicy
from arms.registry import create_arm
from tasks.errors import ArmConfigError
from tasks.spec import RememberSpec

DAY = 86_400.0


def _written_ttls(arm_driver, tmp_path: Path, policy: str | None, seed: int = 7) -> list[float | None]:
    options = {} if policy is None else {"ttl_policy": policy}
    driver = arm_driver(create_arm("amnesia", options), tmp_path, seed=seed)
    driver.start(0.0)
    driver.turn(
        "remember these",
        remember=(
            RememberSpec("The standup room is Juniper.", ttl=14 * DAY),
            RememberSpec("The deploy region is Dublin.", ttl=2 * DAY),
            RememberSpec("The build host is kiln-07."),  # no ttl: the arm's default (30d)
            RememberSpec("Answer in French.", kind="preference", pin=True),
        ),
    )
    return [r["ttl"] for r in driver.records if r["type"] == "memory_write"]


def test_task_policy_keeps_the_writers_ttl(arm_driver, tmp_path: Path) -> None:
    default = _written_ttls(arm_driver, tmp_path / "a", None)
    assert default == [14 * DAY, 2 * DAY, 30 * DAY, None]
    assert _written_ttls(arm_driver, tmp_path / "b", "task") == default


def test_fixed_scaled_and_noisy(arm_driver, tmp_path: Path) -> None:
    assert _written_ttls(arm_driver, tmp_path / "f", "fixed:1d") == [DAY, DAY, DAY, None]  # pins untouched
    assert _written_ttls(arm_driver, tmp_path / "s", "scaled:0.5") == [7 * DAY, DAY, 15 * DAY, None]
    noisy = _written_ttls(arm_driver, tmp_path / "n1", "noisy:0.8")
    factors = {round(ttl / (days * DAY), 9) for ttl, days in zip(noisy[:3], (14, 2, 30), strict=True)}
    assert noisy[3] is None and len(factors) == 3  # one draw per write
    assert _written_ttls(arm_driver, tmp_path / "n2", "noisy:0.8") == noisy  # same (seed, task, write)
    assert _written_ttls(arm_driver, tmp_path / "n3", "noisy:0.8", seed=8) != noisy  # another run seed
    assert _written_ttls(arm_driver, tmp_path / "n4", "noisy:0") == [14 * DAY, 2 * DAY, 30 * DAY, None]


def _tool_ttls(arm_driver, tmp_path: Path, arm: str, policy: str | None) -> list[float | None]:
    """The stored ttls of the model's amnesia_remember calls (and what each call's result told the model)."""
    options = {} if policy is None else {"ttl_policy": policy}
    driver = arm_driver(create_arm(arm, options), tmp_path)
    driver.start(0.0)
    driver.turn("remember these")
    results = [
        driver.tool("amnesia_remember", content="The standup room is Juniper.", ttl="14d"),
        driver.tool("amnesia_remember", content="The deploy region is Dublin.", ttl=2 * DAY),
        driver.tool("amnesia_remember", content="The build host is kiln-07."),  # no ttl: the default (30d)
        driver.tool("amnesia_remember", content="Answer in French.", kind="preference", pin=True),
    ]
    stored = [r["ttl"] for r in driver.records if r["type"] == "memory_write"]
    assert [r["ttl"] for r in results] == stored  # the model reads the ttl that was stored
    return stored


@pytest.mark.parametrize("arm", ["amnesia", "agent-managed"])
def test_the_policy_applies_to_the_models_tool_writes(arm_driver, tmp_path: Path, arm: str) -> None:
    """`fixed` ignores every writer's ttl, the model's included (agent-managed has no other writer)."""
    assert _tool_ttls(arm_driver, tmp_path / "t", arm, None) == [14 * DAY, 2 * DAY, 30 * DAY, None]
    assert _tool_ttls(arm_driver, tmp_path / "f", arm, "fixed:1d") == [DAY, DAY, DAY, None]  # pins untouched
    assert _tool_ttls(arm_driver, tmp_path / "s", arm, "scaled:0.5") == [7 * DAY, DAY, 15 * DAY, None]


def test_tool_writes_draw_their_own_noise_and_leave_the_tasks_draws_alone(arm_driver, tmp_path: Path) -> None:
    def ttls(folder: str, with_tool_write: bool) -> list[float | None]:
        driver = arm_driver(create_arm("amnesia", {"ttl_policy": "noisy:0.8"}), tmp_path / folder)
        driver.start(0.0)
        driver.turn("first", remember=(RememberSpec("The standup room is Juniper.", ttl=14 * DAY),))
        if with_tool_write:
            driver.tool("amnesia_remember", content="The deploy region is Dublin.", ttl="2d")
        driver.turn("second", remember=(RememberSpec("The build host is kiln-07.", ttl=14 * DAY),))
        return [r["ttl"] for r in driver.records if r["type"] == "memory_write"]

    plain, with_tool = ttls("plain", False), ttls("tool", True)
    assert [with_tool[0], with_tool[2]] == plain  # the task's writes draw the same factors either way
    assert with_tool[1] != 2 * DAY  # the tool write was drawn too
    assert ttls("again", True) == with_tool  # deterministic


def test_a_bad_tool_ttl_is_refused_as_before_under_a_policy(arm_driver, tmp_path: Path) -> None:
    driver = arm_driver(create_arm("amnesia", {"ttl_policy": "fixed:1d"}), tmp_path)
    driver.start(0.0)
    driver.turn("remember")
    assert driver.tool("amnesia_remember", content="x y", ttl="soon") == {
        "error": "ttl: expected a duration like 15s, 2h30m, 7d or 1w, got 'soon'"
    }
    assert "error" in driver.tool("amnesia_remember", content="x y", ttl=None)  # null needs pin
    assert driver.of_type("memory_write") == []


@pytest.mark.parametrize(
    "value",
    [
        "fixed",
        "fixed:",
        "fixed:0s",
        "fixed:soon",
        "scaled:0",
        "scaled:-2",
        "scaled:x",
        "noisy:-1",
        "noisy:nan",
        "noisy:9",
        "random:1",
        7,
        True,
    ],
)
def test_bad_values_are_one_line_arm_config_errors(value) -> None:
    with pytest.raises(ArmConfigError) as caught:
        create_arm("amnesia", {"ttl_policy": value})
    message = str(caught.value)
    assert "\n" not in message and message.startswith("amnesia: option ttl_policy must be task, fixed:")
    assert repr(value) in message


@settings(max_examples=60, deadline=None)
@given(
    ttl=st.one_of(st.none(), st.floats(min_value=1.0, max_value=3e9)),
    sigma=st.floats(min_value=0.0, max_value=5.0),
    seed=st.integers(min_value=0, max_value=2**63),
    index=st.integers(min_value=0, max_value=10_000),
)
def test_noisy_ttls_are_deterministic_positive_and_bounded(ttl, sigma, seed, index) -> None:
    policy = TtlPolicy.parse("amnesia", f"noisy:{sigma}")
    first = policy.apply(ttl, 30 * DAY, seed=seed, write_index=index)
    assert first == policy.apply(ttl, 30 * DAY, seed=seed, write_index=index)
    assert first is not None and 1.0 <= first <= 100 * 365 * DAY and math.isfinite(first)


def test_set_on_the_command_line(write_tasks, run_args, run_logs, drink_task, tmp_path: Path) -> None:
    from amnesia_bench.cli import app

    folder = write_tasks(tmp_path / "tasks", [drink_task])
    ok = CliRunner().invoke(
        app, run_args(folder, tmp_path / "run", "--set", "amnesia.ttl_policy=fixed:7d", arms="amnesia")
    )
    assert ok.exit_code == 0, ok.output
    writes = [r for log in run_logs(tmp_path / "run").values() for r in log if r["type"] == "memory_write"]
    assert [r["ttl"] for r in writes] == [7 * DAY, 7 * DAY]
    bad = CliRunner().invoke(
        app, run_args(folder, tmp_path / "bad", "--set", "amnesia.ttl_policy=fixed:soon", arms="amnesia")
    )
    assert bad.exit_code == 2
    assert "ttl_policy must be task, fixed:<duration>, scaled:<factor> or noisy:<sigma>" in bad.output


def test_default_policy_logs_are_byte_identical_to_task(
    write_tasks, run_ok, run_logs, small_set_tasks, tmp_path: Path
) -> None:
    folder = write_tasks(tmp_path / "tasks", small_set_tasks)
    run_ok(folder, tmp_path / "default", arms="amnesia")
    run_ok(folder, tmp_path / "task", "--set", "amnesia.ttl_policy=task", arms="amnesia")
    default, task = run_logs(tmp_path / "default"), run_logs(tmp_path / "task")
    for name, records in default.items():
        for before, after in zip(records, task[name], strict=True):
            if before["type"] == "task_start":  # the explicit option is recorded, nothing else differs
                assert after["arm_config"]["options"] == {"ttl_policy": "task"}
                before, after = {**before, "arm_config": None}, {**after, "arm_config": None}
            assert before == after


@pytest.mark.parametrize("arm", ["full-memory", "amnesia-keep-all-oracle-key"])
def test_a_ttl_policy_on_an_arm_that_never_forgets_is_refused(
    arm, write_tasks, run_args, drink_task, tmp_path
) -> None:
    from amnesia_bench.cli import app

    with pytest.raises(ArmConfigError, match=r"option ttl_policy=fixed:7d does nothing on an arm that never"):
        create_arm(arm, {"ttl_policy": "fixed:7d"})
    create_arm(arm, {"ttl_policy": "task"})  # the default is no change, so it is accepted
    folder = write_tasks(tmp_path / "tasks", [drink_task])
    result = CliRunner().invoke(
        app, run_args(folder, tmp_path / "run", "--set", f"{arm}.ttl_policy=scaled:2", arms=arm)
    )
    assert result.exit_code == 2
    (line,) = [text for text in result.output.splitlines() if "ttl_policy" in text]
    assert "never forgets" in line and not (tmp_path / "run").exists()
