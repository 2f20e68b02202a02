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
"""

from __future__ import annotations

import argparse
import gc
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
    sweep_idle_ms: float  # one sweep when nothing is due (settle and check only)
    sweep_due_ms: float  # one sweep with DUE_FRACTION of the items due (forgotten and audited)

    def markdown(self) -> str:
        select = "n/a" if self.select_ms is None else f"{self.select_ms:,.2f}"
        cells = [self.implementation, f"{self.size:,}", f"{self.remember_ops:,.0f}", select]
        cells += [f"{self.sweep_idle_ms:,.2f}", f"{self.sweep_due_ms:,.2f}"]
        return "| " + " | ".join(cells) + " |"


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
    idle_ms = _ms(engine.sweep)
    clock.advance(2 * SHORT_TTL)
    due_ms = _ms(engine.sweep)
    return Row(label, size, size / remember_ms * 1e3, select_ms, idle_ms, due_ms)


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


def run(sizes: list[int], sqlite_max: int, seed: int) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="amnesia-bench-") as folder:
        for size in sizes:
            rows.append(bench_engine("Amnesia in-memory", InMemoryStore, size, seed))
            if size <= sqlite_max:
                path = Path(folder) / f"bench-{size}.db"
                rows.append(
                    bench_engine(
                        "Amnesia SQLite", lambda p=path: SQLiteStore(p, secret=AUDIT_SECRET), size, seed
                    )
                )
            rows.append(bench_ttlcache(size, seed))
            rows.append(bench_dict(size, seed))
    return rows


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
    args = parser.parse_args(argv)
    try:
        sizes = [int(part) for part in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: expected comma-separated integers, got {args.sizes!r}")
    rows = run(sizes, args.sqlite_max, args.seed)
    print("| implementation | items | remember ops/s | select ms | sweep ms, none due | sweep ms, 10% due |")
    print("|---|---:|---:|---:|---:|---:|")
    for row in rows:
        print(row.markdown())
    failures = floor_failures(rows)
    for failure in failures:
        print(f"FLOOR MISSED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
