"""Test-wide isolation: SQLite stores keep their audit keys under $XDG_CONFIG_HOME (amnesia.keys), so the
whole session writes them to a folder of its own instead of the user's ~/.config, with no audit key taken
from the caller's environment. Session scope, so that module-scoped fixtures are covered too."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def _private_audit_keys(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config-home")))
        patch.delenv("AMNESIA_AUDIT_KEY", raising=False)
        patch.delenv("AMNESIA_AUDIT_KEY_FILE", raising=False)
        yield
