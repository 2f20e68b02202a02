"""The arm protocol's compaction hooks (`on_compaction_start`, `on_compaction_end`) and their event
(`CompactionInfo`): every built-in arm has them, a plugin without them is refused by name, and the event is
immutable so that no arm can change what the runner logs."""

from __future__ import annotations

import dataclasses

import pytest

from arms import ArmBase, CompactionInfo, registry
from tasks.errors import UnknownArmError


def _info(**changes: object) -> CompactionInfo:
    base = CompactionInfo(
        session_id="s0",
        at=60.0,
        trigger="event",
        dropped=(
            {"role": "user", "content": "The gate code is 4471."},
            {"role": "assistant", "content": "OK"},
        ),
        summary="",
        tokens_before=12,
        tokens_after=0,
    )
    return dataclasses.replace(base, **changes)


def test_the_event_is_frozen_and_the_start_form_has_no_summary_yet() -> None:
    info = _info()
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.summary = "changed"  # type: ignore[misc]
    assert (info.summary, info.tokens_after, info.kept) == ("", 0, ())
    ended = dataclasses.replace(info, summary="[conversation compacted]", tokens_after=5)
    assert ended.dropped == info.dropped and ended.tokens_after == 5


@pytest.mark.parametrize("name", sorted(registry.ARMS.names()))
def test_every_built_in_arm_passes_the_protocol_check_with_the_hooks(name: str) -> None:
    assert {"on_compaction_start", "on_compaction_end"} <= set(registry._PROTOCOL)
    cls = registry.load_reference(registry.ARMS.target(name))  # the check a plugin gets
    assert callable(cls.on_compaction_start) and callable(cls.on_compaction_end)


class WithoutCompactionHooks:
    """Every protocol method but the compaction hooks (an arm written before they existed, not on ArmBase)."""


for _name in registry._PROTOCOL:
    if not _name.startswith("on_compaction"):
        setattr(WithoutCompactionHooks, _name, lambda self, *args: None)


def test_a_plugin_without_the_hooks_is_refused_by_name() -> None:
    with pytest.raises(UnknownArmError, match=r"no on_compaction_start\); subclass arms\.ArmBase"):
        registry.load_reference(f"{__name__}:WithoutCompactionHooks")


def test_arm_base_hooks_change_nothing() -> None:
    arm = ArmBase()
    before = dict(vars(arm))
    assert arm.on_compaction_start(_info()) is None
    assert arm.on_compaction_end(_info(summary="digest", tokens_after=3)) is None
    assert vars(arm) == before
