"""The process that holds LangGraph's `SqliteStore` for the `langgraph-store` arm (arms/langgraph_store.py).

It runs as a plain script (it imports nothing from this project) under libfaketime, so that both clocks the
store reads (Python's `time.time()`, which sets `expires_at` on a put, and SQLite's `CURRENT_TIMESTAMP`, which
refreshes and sweeps compare against) are the simulated time the arm writes into the timestamp file.

Protocol: one JSON request a line on stdin, one JSON answer a line on stdout (`{"ok": result}` or
`{"error": "one line"}`). The first line it prints is `{"ok": "ready"}` once the store is set up, or an error
(for instance LangGraph not installed)."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from typing import Any

MISSING = "missing-extra"  # the error code the arm turns into its install hint


def _answer(payload: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(payload, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def _items(found: list[Any]) -> list[dict[str, Any]]:
    return [
        {"namespace": list(item.namespace), "key": item.key, "text": item.value["text"]} for item in found
    ]


def main(db_path: str, ttl_json: str) -> int:
    try:
        from langgraph.store.base import NOT_PROVIDED
        from langgraph.store.sqlite import SqliteStore
    except ImportError as error:
        _answer({"error": f"{MISSING}: {error}"})
        return 1
    ttl = json.loads(ttl_json)  # a TTLConfig, or null: no TTL at all
    conn = sqlite3.connect(db_path, check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn, ttl=ttl)
    store.setup()
    _answer({"ok": "ready"})
    for line in sys.stdin:
        request = json.loads(line)
        op = request["op"]
        try:
            if op == "put":
                # "default": the store's default_ttl (TTLConfig); null: never expires (a pinned write).
                item_ttl = NOT_PROVIDED if request["ttl"] == "default" else request["ttl"]
                store.put(
                    tuple(request["namespace"]), request["key"], {"text": request["text"]}, ttl=item_ttl
                )
                result: Any = None
            elif op == "search":
                # refresh_ttl None: the store's own refresh_on_read decides; False: an inventory, not a read.
                found = store.search(
                    tuple(request["namespace"]),
                    query=request.get("query"),
                    limit=request["limit"],
                    refresh_ttl=request.get("refresh_ttl"),
                )
                result = _items(found)
            elif op == "delete":
                store.delete(tuple(request["namespace"]), request["key"])
                result = None
            elif op == "sweep":
                result = store.sweep_ttl()
            elif op == "now":  # both clocks the store reads, for the arm's check and the tests
                (sqlite_now,) = conn.execute("SELECT unixepoch(CURRENT_TIMESTAMP)").fetchone()
                result = {"python": time.time(), "sqlite": float(sqlite_now)}
            else:
                raise ValueError(f"unknown op {op!r}")
        except Exception as error:  # every failure goes back to the arm as one line
            _answer({"error": f"{op}: {type(error).__name__}: {error}".replace("\n", " ")})
            continue
        _answer({"ok": result})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
