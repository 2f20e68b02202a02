"""Engine throughput: remember, select_for_injection and sweep at 10^3, 10^4, 10^5 items.

Compared with `cachetools.TTLCache` (insert + expire) and a plain dict (the floor: insert, a full sort
for selection, a scan-and-delete sweep). Prints a Markdown table; checks the issue's floors (select over
10^5 items in memory < 50 ms, sweep of 10^5 < 100 ms) and exits 1 if the in-memory engine misses one.

    python benchmarks/engine_ops.py                      # full table (SQLite at 10^5 takes a while)
    python benchmarks/engine_ops.py --sizes 1000,10000   # quicker

Every run uses a SimulatedClock, a seeded id factory and a seeded random.Random, so the work is identical
across runs; only the timings vary. Sweep is measured twice: right after the writes (nothing due: settle and
check only) and after moving the clock 2h, when the 10% of items with a 1h TTL are due (forgotten + audited).
Each timed call starts after a `gc.collect()`, so it pays for the collections its own allocations trigger,
not for the setup's.

With the `[langgraph]` extra installed, the same run measures LangGraph's long-term store on the same items
(`put` vs remember, `search` vs select, `sweep_ttl()` vs sweep) and prints the engine's speed over LangGraph's
per operation: `InMemoryStore` beside the in-memory engine (it has no TTL: `supports_ttl` is False, so its
sweep is measured on `SqliteStore` over `:memory:`), `SqliteStore` on a file beside the engine on SQLite.
LangGraph's search reads as many items as the engine's selection injected (newest first: without an
embedding index the store does not rank). Its sweep compares `expires_at` with SQLite's CURRENT_TIMESTAMP,
which this benchmark does not move, so the due 10% are put with a ttl already past (-1h); the due sweep runs
first and the idle sweep after it (90% of the items, nothing due), where the engine's idle sweep sees 100%.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import itertools
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cachetools import TTLCache

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock, SQLiteStore

LANGGRAPH_HINT = "pip install 'dsh-memory-forget[langgraph]'"

SHORT_TTL = 3_600.0  # seconds: the 10% of items a sweep finds due
LONG_TTL = 30 * 86_400.0
DUE_FRACTION = 0.1
SELECT_REPEATS = 5
SELECT_FLOOR_MS = 50.0
SWEEP_FLOOR_MS = 100.0
FLOOR_SIZE = 100_000
AUDIT_SECRET = b"engine-ops-benchmark-audit-key!!"  # fixed: the run writes no key file
WORDS = ("tea", "oolong", "lapsang", "deploy", "staging", "cache", "budget", "answer", "french", "ticket")


@dataclass(frozen=True)
class Row:
    implementation: str
    size: int
    remember_ops: float  # writes per second
    select_ms: float | None  # one selection over the whole store (None: the implementation has none)
    sweep_idle_ms: float | None  # one sweep when nothing is due (settle and check only); None: no TTL
    sweep_due_ms: float | None  # one sweep with DUE_FRACTION of the items due (forgotten and audited)
    selected: int = 0  # items the selection returned (LangGraph's search reads as many)

    def markdown(self) -> str:
        cells = [self.implementation, f"{self.size:,}", f"{self.remember_ops:,.0f}"]
        cells += [_cell(value) for value in (self.select_ms, self.sweep_idle_ms, self.sweep_due_ms)]
        return "| " + " | ".join(cells) + " |"


def _cell(milliseconds: float | None) -> str:
    return "n/a" if milliseconds is None else f"{milliseconds:,.2f}"


def _contents(size: int, seed: int) -> list[tuple[str, float]]:
    """Distinct short sentences and their TTLs; DUE_FRACTION of them short-lived."""
    rng = random.Random(seed)
    short = set(rng.sample(range(size), int(size * DUE_FRACTION)))
    return [
        (f"Item {i}: {' '.join(rng.choices(WORDS, k=6))}.", SHORT_TTL if i in short else LONG_TTL)
        for i in range(size)
    ]


def _ms(action: Callable[[], object]) -> float:
    # Settle the garbage the setup left behind first: otherwise a full collection over every live object
    # (about 60 ms at 10^5 items) lands in whichever timed call happens to trigger it.
    gc.collect()
    started = time.perf_counter()
    action()
    return (time.perf_counter() - started) * 1e3


def bench_engine(label: str, make_store: Callable[[], object], size: int, seed: int) -> Row:
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    # Byte cap lifted so that eviction does not interfere with the throughput measured here.
    config = Config(max_store_bytes=size * 4_096)
    engine = Amnesia(
        store=make_store(), config=config, clock=clock, id_factory=lambda: f"m-{next(counter):012x}"
    )
    items = _contents(size, seed)

    def write_all() -> None:
        for content, ttl in items:
            engine.remember(content, ttl=ttl)

    remember_ms = _ms(write_all)
    select_ms = min(_ms(engine.select_for_injection) for _ in range(SELECT_REPEATS))
    selected = len(engine.select_for_injection().items)
    idle_ms = _ms(engine.sweep)
    clock.advance(2 * SHORT_TTL)
    due_ms = _ms(engine.sweep)
    return Row(label, size, size / remember_ms * 1e3, select_ms, idle_ms, due_ms, selected)


def bench_langgraph(label: str, make_store: Callable[[], object], size: int, seed: int, limit: int) -> Row:
    """LangGraph's store on the same items: put each, search `limit` items, sweep_ttl (see the docstring)."""
    store = make_store()
    ttl = getattr(store, "supports_ttl", False)
    items = _contents(size, seed)
    namespace = ("memories",)

    def put_all() -> None:
        for index, (content, item_ttl) in enumerate(items):
            minutes = (-SHORT_TTL if item_ttl == SHORT_TTL else item_ttl) / 60.0
            options = {"ttl": minutes} if ttl else {}
            store.put(namespace, f"m-{index:012x}", {"text": content}, **options)  # type: ignore[attr-defined]

    put_ms = _ms(put_all)

    def search() -> object:
        return store.search(namespace, limit=limit, refresh_ttl=False)  # type: ignore[attr-defined]

    search_ms = min(_ms(search) for _ in range(SELECT_REPEATS))
    due_ms = _ms(store.sweep_ttl) if ttl else None  # type: ignore[attr-defined]
    idle_ms = _ms(store.sweep_ttl) if ttl else None  # type: ignore[attr-defined]
    return Row(label, size, size / put_ms * 1e3, search_ms, idle_ms, due_ms)


def _langgraph_sqlite(path: str) -> object:
    import sqlite3

    from langgraph.store.sqlite import SqliteStore

    # As `SqliteStore.from_conn_string` opens it (autocommit), with a TTLConfig so that its TTL is on.
    store = SqliteStore(
        sqlite3.connect(path, check_same_thread=False, isolation_level=None),
        ttl={"default_ttl": LONG_TTL / 60.0, "refresh_on_read": False},
    )
    store.setup()
    return store


def _langgraph_in_memory() -> object:
    from langgraph.store.memory import InMemoryStore as LangGraphInMemoryStore

    return LangGraphInMemoryStore()


def bench_ttlcache(size: int, seed: int) -> Row:
    """TTLCache has one ttl per cache, so the due 10% are inserted first and the rest half a ttl later."""
    now = [0.0]
    cache: TTLCache = TTLCache(maxsize=size, ttl=LONG_TTL, timer=lambda: now[0])
    items = _contents(size, seed)
    ordered = sorted(range(size), key=lambda index: items[index][1] != SHORT_TTL)

    def insert_all() -> None:
        for index in ordered:
            if items[index][1] != SHORT_TTL:
                now[0] = LONG_TTL / 2
            cache[index] = items[index][0]

    insert_ms = _ms(insert_all)
    idle_ms = _ms(cache.expire)
    now[0] = LONG_TTL + 1
    due_ms = _ms(cache.expire)
    assert len(cache) == size - int(size * DUE_FRACTION), "the TTLCache setup must expire exactly the due 10%"
    return Row("cachetools.TTLCache", size, size / insert_ms * 1e3, None, idle_ms, due_ms)


def bench_dict(size: int, seed: int, budget_tokens: int = 2_000) -> Row:
    store: dict[int, tuple[str, float, float]] = {}  # id -> (content, expires_at, strength)
    items = _contents(size, seed)

    def insert_all() -> None:
        for index, (content, ttl) in enumerate(items):
            store[index] = (content, ttl, 1.0)

    def select() -> list[int]:
        chosen, used = [], 0
        for key, (content, _expires, _strength) in sorted(store.items(), key=lambda kv: -kv[1][2]):
            cost = len(content) // 4
            if used + cost <= budget_tokens:
                chosen.append(key)
                used += cost
        return chosen

    def sweep(now: float) -> None:
        for key in [key for key, (_content, expires, _strength) in store.items() if expires <= now]:
            del store[key]

    insert_ms = _ms(insert_all)
    select_ms = min(_ms(select) for _ in range(SELECT_REPEATS))
    idle_ms = _ms(lambda: sweep(0.0))
    due_ms = _ms(lambda: sweep(2 * SHORT_TTL))
    return Row("dict (floor)", size, size / insert_ms * 1e3, select_ms, idle_ms, due_ms)


def run(sizes: list[int], sqlite_max: int, seed: int, langgraph: bool) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="amnesia-bench-") as folder:
        for size in sizes:
            in_memory = bench_engine("Amnesia in-memory", InMemoryStore, size, seed)
            rows.append(in_memory)
            if langgraph:
                rows.append(
                    bench_langgraph(
                        "LangGraph InMemoryStore", _langgraph_in_memory, size, seed, in_memory.selected
                    )
                )
                memory_sqlite = functools.partial(_langgraph_sqlite, ":memory:")
                rows.append(
                    bench_langgraph(
                        "LangGraph SqliteStore :memory:", memory_sqlite, size, seed, in_memory.selected
                    )
                )
            if size <= sqlite_max:
                path = Path(folder) / f"bench-{size}.db"
                on_disk = bench_engine(
                    "Amnesia SQLite", lambda p=path: SQLiteStore(p, secret=AUDIT_SECRET), size, seed
                )
                rows.append(on_disk)
                if langgraph:
                    file = str(Path(folder) / f"langgraph-{size}.db")
                    rows.append(
                        bench_langgraph(
                            "LangGraph SqliteStore file",
                            functools.partial(_langgraph_sqlite, file),
                            size,
                            seed,
                            on_disk.selected,
                        )
                    )
            rows.append(bench_ttlcache(size, seed))
            rows.append(bench_dict(size, seed))
    return rows


# (engine row, LangGraph row, and for the sweep the LangGraph row that has a TTL)
RATIO_PAIRS = (
    ("Amnesia in-memory", "LangGraph InMemoryStore", "LangGraph SqliteStore :memory:"),
    ("Amnesia SQLite", "LangGraph SqliteStore file", "LangGraph SqliteStore file"),
)


def ratio_lines(rows: list[Row]) -> list[str]:
    """The engine's speed over LangGraph's per operation (> 1: the engine is faster), as Markdown rows."""
    found = {(row.implementation, row.size): row for row in rows}
    lines = []
    for size in sorted({row.size for row in rows}):
        for engine_name, store_name, ttl_name in RATIO_PAIRS:
            engine, store, ttl = (found.get((name, size)) for name in (engine_name, store_name, ttl_name))
            if engine is None or store is None or ttl is None:
                continue
            cells = [
                f"{engine.remember_ops / store.remember_ops:.2f}",
                _speed(store.select_ms, engine.select_ms),
                _speed(ttl.sweep_due_ms, engine.sweep_due_ms),
                _speed(ttl.sweep_idle_ms, engine.sweep_idle_ms),
            ]
            pair = f"{engine_name} / {store_name}" + (
                f" (sweeps: {ttl_name})" if ttl_name != store_name else ""
            )
            lines.append(f"| {pair} | {size:,} | " + " | ".join(cells) + " |")
    return lines


def _speed(theirs_ms: float | None, ours_ms: float | None) -> str:
    if theirs_ms is None or ours_ms is None or ours_ms <= 0:
        return "n/a"
    return f"{theirs_ms / ours_ms:.2f}"


def floor_failures(rows: list[Row]) -> list[str]:
    failures = []
    for row in rows:
        if row.implementation != "Amnesia in-memory" or row.size < FLOOR_SIZE:
            continue
        if row.select_ms is not None and row.select_ms >= SELECT_FLOOR_MS:
            failures.append(
                f"select over {row.size:,} items: {row.select_ms:.1f} ms (floor {SELECT_FLOOR_MS})"
            )
        for label, sweep_ms in (("nothing due", row.sweep_idle_ms), ("10% due", row.sweep_due_ms)):
            if sweep_ms >= SWEEP_FLOOR_MS:
                failures.append(
                    f"sweep of {row.size:,} items, {label}: {sweep_ms:.1f} ms (floor {SWEEP_FLOOR_MS})"
                )
    return failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated item counts")
    parser.add_argument("--sqlite-max", type=int, default=100_000, help="largest size measured on SQLite")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-langgraph", action="store_true", help="skip LangGraph's store")
    args = parser.parse_args(argv)
    try:
        sizes = [int(part) for part in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: expected comma-separated integers, got {args.sizes!r}")
    langgraph = not args.no_langgraph and importlib.util.find_spec("langgraph") is not None
    if not langgraph and not args.no_langgraph:
        print(f"LangGraph's store not measured: {LANGGRAPH_HINT}", file=sys.stderr)
    rows = run(sizes, args.sqlite_max, args.seed, langgraph)
    print("| implementation | items | remember ops/s | select ms | sweep ms, none due | sweep ms, 10% due |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(row.markdown())
    ratios = ratio_lines(rows)
    if ratios:
        print(
            "\nThe engine's speed over LangGraph's store, same items, same run (> 1: the engine is faster):\n"
        )
        print("| pair | items | remember vs put | select vs search | sweep, 10% due | sweep, none due |")
        print("|---|---:|---:|---:|---:|---:|")
        print("\n".join(ratios))
    failures = floor_failures(rows)
    for failure in failures:
        print(f"FLOOR MISSED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
