from __future__ import annotations

from pathlib import Path

import pytest

from runners.armconfig import load_arm_config, parse_overrides, resolve_arm_specs
from tasks.errors import ArmConfigError


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "arms.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_config_file_defines_named_arms_on_a_base(tmp_path: Path) -> None:
    path = _write(tmp_path, "quiet:\n  base: no-memory\n")
    specs = load_arm_config(path)
    assert specs["quiet"].base == "no-memory"
    arm = specs["quiet"].build()
    assert arm.name == "quiet"


def test_unknown_base_names_file_line_and_field(tmp_path: Path) -> None:
    path = _write(tmp_path, "ok:\n  base: no-memory\nbad:\n  base: nonsense\n")
    with pytest.raises(ArmConfigError, match=rf"^{path}:4: bad\.base: unknown arm 'nonsense'"):
        load_arm_config(path)


def test_unknown_entry_field_and_bad_yaml(tmp_path: Path) -> None:
    with pytest.raises(ArmConfigError, match=r":2: x\.opts: unknown field"):
        load_arm_config(_write(tmp_path, "x:\n  opts: {}\n"))
    with pytest.raises(ArmConfigError, match=r"invalid YAML"):
        load_arm_config(_write(tmp_path, "x: [unclosed\n"))
    with pytest.raises(ArmConfigError, match=r"expected a mapping"):
        load_arm_config(_write(tmp_path, "- a\n- b\n"))


def test_overrides_are_typed_like_yaml() -> None:
    assert parse_overrides(["amnesia.k=4", "amnesia.curve=linear", "amnesia.auto_expire=false"]) == {
        "amnesia": {"k": 4, "curve": "linear", "auto_expire": False}
    }
    with pytest.raises(ArmConfigError, match=r"expected arm\.option=value"):
        parse_overrides(["amnesia-k4"])


def test_resolve_rejects_unknown_arms_duplicates_stray_sets_and_bad_options() -> None:
    with pytest.raises(ArmConfigError, match="unknown arm 'nope'"):
        resolve_arm_specs(["nope"])
    with pytest.raises(ArmConfigError, match="listed twice"):
        resolve_arm_specs(["no-memory", "no-memory"])
    with pytest.raises(ArmConfigError, match="not in --arms"):
        resolve_arm_specs(["no-memory"], assignments=["amnesia.k=4"])
    with pytest.raises(ArmConfigError, match="no-memory: takes no options"):
        resolve_arm_specs(["no-memory"], assignments=["no-memory.k=4"])


def test_all_expands_to_every_arm_that_needs_no_function_calling_and_no_program_of_its_own() -> None:
    names = [spec.name for spec in resolve_arm_specs(["all"])]
    assert {"no-memory", "full-memory", "amnesia", "retrieval", "claims", "memorybank"} <= set(names)
    assert "agent-managed" not in names
    assert "mcp-memory" not in names  # its MCP server is a program of its own: `all` runs on any machine
    assert names == sorted(names)
