"""Folders that appear whole or not at all: a report or rescore is written beside its target and swapped in
only when every file is done, so a failure never leaves a half-written folder behind."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def staged_folder(target: Path, prefix: str) -> Iterator[Path]:
    """Yield an empty folder beside `target`; on success it replaces `target`, on error it is removed.

    The folder gets the permissions the user's umask gives any new folder: it is made with a plain mkdir
    inside a private scratch folder (mkdtemp's own folder is always 0700), then moved into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
    staging = scratch / target.name
    try:
        staging.mkdir()
        yield staging
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
