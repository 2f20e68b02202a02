"""Test-wide isolation: SQLite stores keep their audit keys under $XDG_CONFIG_HOME (amnesia.keys), so every
test gets its own folder for them instead of the user's ~/.config, and no audit key from the caller's
environment."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _private_audit_keys(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path_factory.mktemp("config-home")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(folder))
    monkeypatch.delenv("AMNESIA_AUDIT_KEY", raising=False)
    monkeypatch.delenv("AMNESIA_AUDIT_KEY_FILE", raising=False)
    return folder
