"""A credential is refused in every field a write stores — content, key, tags and source reference — and a
refused write leaves nothing behind: no item, no audit line, no byte in the SQLite files. The subject key
of a forgotten memory is not left readable in its audit line (outside restorable mode)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from amnesia import Amnesia, Config, SecretRefused, SimulatedClock, SQLiteStore

# Synthetic values in public formats (never real credentials).
GITLAB_TOKEN = "glpat-Zq3x9TfW2bLm7KpR4sVn"
DB_PASSWORD = "Vt8#mQ2!rLx9"
WRITES: list[tuple[str, dict[str, Any]]] = [
    ("content", {"content": f"The CI pushes tags with {GITLAB_TOKEN}."}),
    ("key", {"content": "The CI pushes tags with the release token.", "key": GITLAB_TOKEN}),
    ("tags", {"content": "The CI pushes tags with the release token.", "tags": ["ci", GITLAB_TOKEN]}),
    ("tags", {"content": "The CI pushes tags with the release token.", "tags": f"DB_PASSWORD={DB_PASSWORD}"}),
    ("source_ref", {"content": "The staging database moved.", "source_ref": {"password": DB_PASSWORD}}),
    ("source_ref", {"content": "The staging database moved.", "source_ref": {"url": [{"t": GITLAB_TOKEN}]}}),
]


def _raw_bytes(folder: Path) -> bytes:
    """Every byte of every file SQLite keeps in the folder (database, WAL, shared memory, journal)."""
    return b"".join(path.read_bytes() for path in sorted(folder.iterdir()) if path.is_file())


@pytest.mark.parametrize(
    ("field", "write"), WRITES, ids=[f"{field}-{n}" for n, (field, _) in enumerate(WRITES)]
)
def test_a_credential_in_any_field_is_refused_and_leaves_no_byte(tmp_path: Path, field: str, write: dict):
    engine = Amnesia(store=SQLiteStore(tmp_path / "memory.db"), clock=SimulatedClock(0.0))
    engine.remember("The deploy rota changes on Mondays.", key="rota", tags=["ops"])
    with pytest.raises(SecretRefused) as error:
        engine.remember(**write)
    assert error.value.field == field and str(error.value).startswith(f"{field} refused:")
    assert GITLAB_TOKEN not in str(error.value) and DB_PASSWORD not in str(error.value)
    assert [view.content for view in engine.plugs()] == ["The deploy rota changes on Mondays."]
    assert engine.audit(limit=None) == []
    engine.close()
    raw = _raw_bytes(tmp_path)
    assert GITLAB_TOKEN.encode() not in raw and DB_PASSWORD.encode() not in raw


def test_ordinary_keys_tags_and_source_references_are_stored():
    engine = Amnesia(clock=SimulatedClock(0.0))
    view = engine.remember(
        "The staging database moved to eu-west-1.",
        key="staging-db-region",
        tags=["ops", "database password rotation"],
        source_ref={"url": "https://wiki.example.com/ops?page=2", "password_policy": "12 characters"},
    )
    assert view.key == "staging-db-region" and view.tags == ("ops", "database-password-rotation")


@pytest.mark.parametrize("restorable", [False, True])
def test_the_subject_key_of_a_forgotten_memory_is_hashed_in_the_audit_unless_restorable(
    tmp_path: Path, restorable: bool
):
    subject = "acquisition-target-nightjar-2291"
    engine = Amnesia(
        store=SQLiteStore(tmp_path / "memory.db"),
        config=Config(restorable=restorable),
        clock=SimulatedClock(0.0),
    )
    view = engine.remember("The board meets on Thursday.", key=subject)
    engine.forget(view.id)
    [entry] = engine.audit(limit=None)
    engine.close()
    if restorable:  # restore() writes the key back: it is kept, as the content is
        assert entry.key == subject
        return
    assert entry.key is not None and entry.key.startswith("key:") and subject not in entry.key
    assert subject.encode() not in _raw_bytes(tmp_path)
