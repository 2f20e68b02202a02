"""Session logs: one JSONL file per (arm, task), one record per event, appended and flushed per record so
that a crash loses at most the record in flight. Field layout: docs/ARCHITECTURE.md, "Session logs".

Every record carries `v`, `seq`, `type`, `arm`, `task_id`, `sim_time` and `wall_time`; wall-clock values live
only under `wall*` keys so a determinism diff can drop them.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from amnesia.clock import Clock

LOG_FORMAT_VERSION = 1


def log_filename(task_id: str) -> str:
    return task_id.replace("/", "__") + ".jsonl"


class LogWriter:
    """Appends records for one (arm, task) pair. Opening truncates: a pair is always logged from scratch."""

    def __init__(self, path: Path, *, arm: str, task_id: str, clock: Clock) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._arm = arm
        self._task_id = task_id
        self._clock = clock
        self._seq = 0
        self._file = path.open("w", encoding="utf-8")

    def write(self, record_type: str, fields: dict[str, Any]) -> None:
        record = {
            "v": LOG_FORMAT_VERSION,
            "seq": self._seq,
            "type": record_type,
            "arm": self._arm,
            "task_id": self._task_id,
            "sim_time": self._clock.now(),
            **fields,
            "wall_time": time.time(),
        }
        self._file.write(json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n")
        self._file.flush()
        self._seq += 1

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> LogWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def is_finished(path: Path) -> bool:
    """A pair is finished iff its log's last record is `task_end`."""
    if not path.exists():
        return False
    with path.open("rb") as handle:
        handle.seek(0, 2)
        size = handle.tell()
        handle.seek(max(0, size - 65536))
        lines = handle.read().splitlines()
    if not lines:
        return False
    try:
        return json.loads(lines[-1]).get("type") == "task_end"
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False


def read_records(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]
