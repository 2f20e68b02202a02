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
    """Yield an empty folder beside `target`; on success it replaces `target`, on error it is removed."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=prefix, dir=target.parent))
    try:
        yield staging
        if target.exists():
            shutil.rmtree(target)
        staging.rename(target)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
