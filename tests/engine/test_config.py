"""Config: seed defaults, YAML/TOML files, environment variables, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from amnesia import Config, InvalidInput


def test_defaults_follow_the_seed():
    config = Config()
    assert config.default_ttl == 30 * 86_400 and config.default_curve == "ebbinghaus"
    assert (config.stale_strength, config.forgotten_strength) == (0.3, 0.05)
    assert (config.max_injected_tokens, config.max_store_bytes, config.max_item_bytes) == (
        2000,
        262_144,
        2048,
    )
    assert config.auto_expire and not config.restorable and config.audit_retention == 90 * 86_400
    assert config.promote_after_accesses == 0 and config.sweep_interval == 0 and config.decay_k == 3
    assert config.renew_on_inject == "full" and config.untrusted_max_ttl == 86_400


def test_yaml_file_with_durations(tmp_path: Path):
    path = tmp_path / "amnesia.yaml"
    path.write_text("default_ttl: 2h30m\nrestorable: true\nmax_injected_tokens: 500\naudit_retention: 1w\n")
    config = Config.from_file(path)
    assert config.default_ttl == 9000 and config.restorable and config.max_injected_tokens == 500
    assert config.audit_retention == 7 * 86_400


def test_toml_file_nested_section(tmp_path: Path):
    path = tmp_path / "amnesia.toml"
    path.write_text('[amnesia]\ndefault_ttl = "7d"\nrenew_on_inject = "used"\n')
    config = Config.from_file(path)
    assert config.default_ttl == 7 * 86_400 and config.renew_on_inject == "used"


def test_environment_overrides_file(tmp_path: Path):
    path = tmp_path / "c.yaml"
    path.write_text("default_ttl: 1d\n")
    env = {"AMNESIA_CONFIG": str(path), "AMNESIA_DEFAULT_TTL": "15s", "AMNESIA_DB": "/tmp/x.db", "HOME": "/"}
    config = Config.load(environ=env)
    assert config.default_ttl == 15 and config.db_path == "/tmp/x.db"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("default_ttl: 1d\nstale_strength: 2\n", "c.yaml:2: stale_strength"),
        ("default_ttl: soon\n", "c.yaml:1: default_ttl"),
        ("restorable: maybe\n", "c.yaml:1: restorable"),
        ("renew_on_inject: sometimes\n", "c.yaml:1: renew_on_inject"),
        ("\nnot_a_key: 1\n", "c.yaml:2: not_a_key: unknown config key"),
        ("a: [1\n", "c.yaml:"),
        ("- 1\n", "c.yaml:1: expected a mapping"),
    ],
)
def test_bad_files_give_one_line_errors_with_file_and_line(tmp_path: Path, text: str, expected: str):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    with pytest.raises(InvalidInput) as error:
        Config.from_file(path)
    message = str(error.value)
    assert expected in message and "\n" not in message


def test_bad_env_and_direct_values():
    with pytest.raises(InvalidInput, match="env AMNESIA_MAX_STORE_BYTES: max_store_bytes"):
        Config.from_env({"AMNESIA_MAX_STORE_BYTES": "lots"})
    with pytest.raises(InvalidInput, match="forgotten_strength"):
        Config(forgotten_strength=0.5)
    with pytest.raises(InvalidInput, match="cannot read"):
        Config.from_file("/nonexistent/amnesia.yaml")


def test_yaml_keys_nested_under_amnesia_keep_their_line_numbers(tmp_path: Path):
    path = tmp_path / "shared.yaml"
    path.write_text("other_tool: {x: 1}\namnesia:\n  default_ttl: 1d\n  stale_strength: 7\n")
    with pytest.raises(InvalidInput, match=r"shared\.yaml:4: stale_strength"):
        Config.from_file(path)
    path.write_text("other_tool: {x: 1}\namnesia:\n  default_ttl: 1d\n")
    assert Config.from_file(path).default_ttl == 86_400
