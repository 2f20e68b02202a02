"""Staged report folders: whole or absent, and with the permissions the user's umask gives a new folder."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from reports.staging import staged_folder


@contextmanager
def _umask(mask: int) -> Iterator[None]:
    previous = os.umask(mask)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.mark.parametrize(("mask", "mode"), [(0o022, 0o755), (0o002, 0o775), (0o077, 0o700)])
def test_the_folder_follows_the_umask(tmp_path: Path, mask: int, mode: int) -> None:
    target = tmp_path / "report"
    with _umask(mask), staged_folder(target, ".report-") as staging:
        (staging / "report.md").write_text("ok", encoding="utf-8")
    assert stat.S_IMODE(target.stat().st_mode) == mode
    assert (target / "report.md").read_text(encoding="utf-8") == "ok"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]  # no scratch folder left behind


def test_a_failure_keeps_the_old_folder_and_leaves_no_scratch(tmp_path: Path) -> None:
    target = tmp_path / "report"
    target.mkdir()
    (target / "old.md").write_text("old", encoding="utf-8")
    with pytest.raises(RuntimeError), staged_folder(target, ".report-") as staging:
        (staging / "half.md").write_text("half", encoding="utf-8")
        raise RuntimeError("figure failed")
    assert sorted(p.name for p in target.iterdir()) == ["old.md"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
