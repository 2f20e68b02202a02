"""Write a task set to disk atomically: YAML files plus MANIFEST.json with the set's content hash.

Shared by the generator (`tasks.generate`) and the dataset importers (`tasks.importers`): the output folder
must not exist or be empty; everything is written into a sibling temporary folder and renamed into place, so
a failure leaves nothing half-written, and the manifest's `content_hash` is the same hash `amnesia-bench run`
records for the set (`tasks.load.task_set_hash`)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import yaml

from tasks.load import task_set_hash

_Dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def dump_tasks(tasks: list[dict[str, Any]]) -> str:
    """YAML text of a list of task dicts (key order kept, Unicode as is): byte-identical for equal input."""
    return yaml.dump(tasks, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=120)


def write_task_set(
    files: dict[str, list[dict[str, Any]]], out_dir: str | Path, manifest: dict[str, Any]
) -> Path:
    """Write `files` ({relative path: task dicts}) under `out_dir`, plus MANIFEST.json holding `manifest`, the
    task count, the content hash and each file's sha256. Refuses a non-empty `out_dir` (FileExistsError).
    Returns the manifest path."""
    out = Path(out_dir)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise FileExistsError(f"{out} exists and is not an empty folder")
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = out.parent / f".{out.name}.tmp-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for relpath, tasks in sorted(files.items()):
            file = staging / relpath
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_text(dump_tasks(tasks), encoding="utf-8")
        staging.mkdir(parents=True, exist_ok=True)
        content_hash, hashes = task_set_hash(staging)
        full = {
            "format": 1,
            **manifest,
            "count": sum(len(tasks) for tasks in files.values()),
            "content_hash": content_hash,
            "files": hashes,
        }
        (staging / "MANIFEST.json").write_text(
            json.dumps(full, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        if out.exists():
            out.rmdir()
        os.replace(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return out / "MANIFEST.json"
