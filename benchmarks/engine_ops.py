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
per operation (> 1: the engine is faster). What is paired, and how fair it is:

- Same items: the same seeded sentences, in the same order, one call per item on both sides; LangGraph's keys
  are the engine's ids. In memory: the engine's `InMemoryStore` beside LangGraph's `InMemoryStore`, which has
  no TTL (`supports_ttl` is False), so the renewing search and the sweeps are those of `SqliteStore` over
  `:memory:`. On disk: the engine's `SQLiteStore` beside `SqliteStore` on a file.
- Same durability: the engine's store runs SQLite in WAL mode with `synchronous=NORMAL` (no fsync per commit;
  a commit can be lost on power failure, never corrupted), and commits one transaction per write. LangGraph's
  `SqliteStore` sets no pragma, so as `from_conn_string` opens it (autocommit: one transaction per `put`) it
  runs SQLite's defaults, a rollback journal and `synchronous=FULL` (an fsync per put). The paired row sets
  WAL and NORMAL on its connection first; `--langgraph-default-max N` also measures it with the defaults.
- Same number of results: LangGraph's search reads as many items as the engine's selection injected (a
  2,000-token block). The work differs: without an embedding index LangGraph ranks nothing. `InMemoryStore`
  returns the first `limit` items of the namespace in insertion order (the oldest) and stops there;
  `SqliteStore` returns the `limit` most recently updated (`ORDER BY updated_at DESC` over every row of the
  namespace: no index on it). Neither leaves out an item past its expiry that was not swept yet. The engine
  computes every live item's strength at the current time, forgets what is due, leaves stale items out,
  orders the rest (pinned, strength, last access) and fills the token budget with whole rendered lines.
- Renewal: by default (`renew_on_inject: full`) a selection renews what it injects (an access: strength
  boosted, decay clock restarted, committed to the store). "select vs search, no renewal" pairs an engine with
  `renew_on_inject: none` (a second engine on the same store) with `search(refresh_ttl=False)`; "renewing"
  pairs the default engine with `search(refresh_ttl=True)` on a store with a TTL (one UPDATE of `expires_at`
  for the rows returned). The engine rewrites each renewed item whole: it is stored sealed under its own key.
- Sweeps: LangGraph's `sweep_ttl()` is one `DELETE ... WHERE expires_at < CURRENT_TIMESTAMP`. It compares
  with SQLite's clock, which this benchmark does not move, so the due 10% are put with a ttl already past
  (-1h); its due sweep runs first and its idle sweep after it (90% of the items, nothing due), where the
  engine's idle sweep sees 100%. Each due sweep must remove exactly the due 10% (checked). The engine's sweep
  writes an audit entry per forgotten item (with the keyed hash of its content), shreds its key, and on SQLite
  truncates the WAL after the commit, so that no byte of it is left in either file; with nothing due it still
  reads the store for other processes' changes, settles every item's strength and prunes the audit.
- Timing: selections and idle sweeps are the best of 5 calls; writes are one pass over every item; a due
  sweep happens once. The machine's load average is printed with the table: on a shared machine wall-clock
  figures swing by 2-10x between runs, so compare the ratios, which come from one run. `--cpu-time` times
  everything in the process's CPU time instead: steadier under load, but blind to waits for the disk
  (which is most of a SQLite commit's and sweep's time).
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.util
import itertools
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from cachetools import TTLCache

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock, SQLiteStore

LANGGRAPH_HINT = "pip install 'dsh-memory-forget[langgraph]'"

SHORT_TTL = 3_600.0  # seconds: the 10% of items a sweep finds due
LONG_TTL = 30 * 86_400.0
DUE_FRACTION = 0.1
SELECT_REPEATS = 5  # selections and idle sweeps: the best of this many calls
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
    # The same selection without renewing what it injects (the engine: renew_on_inject "none"; LangGraph:
    # search with refresh_ttl=False), and with it (engine default "full"; LangGraph refresh_ttl=True, on a
    # store with a TTL). `select_ms` is the implementation's default.
    select_read_ms: float | None = None
    select_renew_ms: float | None = None

    def markdown(self) -> str:
        cells = [self.implementation, f"{self.size:,}", f"{self.remember_ops:,.0f}"]
        cells += [
            _cell(value)
            for value in (self.select_read_ms, self.select_renew_ms, self.sweep_idle_ms, self.sweep_due_ms)
        ]
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


# What every timing reads: wall time, or with --cpu-time the process's CPU time, which the other jobs of a
# loaded machine disturb less but which leaves out the time spent waiting for the disk.
timer: Callable[[], float] = time.perf_counter


def _ms(action: Callable[[], object]) -> float:
    # Settle the garbage the setup left behind first: otherwise a full collection over every live object
    # (about 60 ms at 10^5 items) lands in whichever timed call happens to trigger it.
    gc.collect()
    started = timer()
    action()
    return (timer() - started) * 1e3


def bench_engine(label: str, make_store: Callable[[], object], size: int, seed: int) -> Row:
    clock = SimulatedClock(0.0)
    counter = itertools.count()
    # Byte cap lifted so that eviction does not interfere with the throughput measured here.
    config = Config(max_store_bytes=size * 4_096)
    store = make_store()
    engine = Amnesia(store=store, config=config, clock=clock, id_factory=lambda: f"m-{next(counter):012x}")
    items = _contents(size, seed)

    def write_all() -> None:
        for content, ttl in items:
            engine.remember(content, ttl=ttl)

    remember_ms = _ms(write_all)
    # A second engine on the same store and clock that renews nothing it injects: a selection that only reads,
    # as LangGraph's search with refresh_ttl=False. Measured first, so that it sees the store as written.
    reader = Amnesia(store=store, config=replace(config, renew_on_inject="none"), clock=clock)
    read_ms = min(_ms(reader.select_for_injection) for _ in range(SELECT_REPEATS))
    del reader
    select_ms = min(_ms(engine.select_for_injection) for _ in range(SELECT_REPEATS))
    selected = len(engine.select_for_injection().items)
    idle_ms = min(_ms(engine.sweep) for _ in range(SELECT_REPEATS))
    clock.advance(2 * SHORT_TTL)
    due = int(size * DUE_FRACTION)
    due_ms = _ms(functools.partial(_check_swept, engine.sweep, due, lambda result: result.forgotten))
    return Row(
        label, size, size / remember_ms * 1e3, select_ms, idle_ms, due_ms, selected, read_ms, select_ms
    )


def _check_swept(sweep: Callable[[], object], expected: int, count: Callable[[object], int]) -> None:
    """Run `sweep` and require that it removed `expected` items (so both sides do the same work)."""
    removed = count(sweep())
    if removed != expected:
        raise RuntimeError(f"the sweep removed {removed} items, not the {expected} the benchmark set up")


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

    def search(refresh: bool) -> None:
        found = store.search(namespace, limit=limit, refresh_ttl=refresh)  # type: ignore[attr-defined]
        if len(found) != limit:
            raise RuntimeError(f"{label}: search returned {len(found)} items, not {limit}")

    read_ms = min(_ms(functools.partial(search, False)) for _ in range(SELECT_REPEATS))
    renew_ms = min(_ms(functools.partial(search, True)) for _ in range(SELECT_REPEATS)) if ttl else None
    due_ms = idle_ms = None
    if ttl:
        swept = functools.partial(_check_swept, store.sweep_ttl)  # type: ignore[attr-defined]
        due_ms = _ms(functools.partial(swept, int(size * DUE_FRACTION), int))
        idle_ms = min(_ms(functools.partial(swept, 0, int)) for _ in range(SELECT_REPEATS))
    return Row(label, size, size / put_ms * 1e3, read_ms, idle_ms, due_ms, limit, read_ms, renew_ms)


def _langgraph_sqlite(path: str, durability: str = "matched") -> object:
    """LangGraph's SqliteStore with a TTLConfig, on a connection opened as `SqliteStore.from_conn_string`
    opens it (autocommit). durability "matched": the engine's SQLite settings (WAL, synchronous=NORMAL), set
    on the connection before the store gets it; "default": none set, as `from_conn_string` leaves them
    (SQLite's rollback journal and synchronous=FULL: an fsync per committed put)."""
    import sqlite3

    from langgraph.store.sqlite import SqliteStore

    connection = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    if durability == "matched":
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
    store = SqliteStore(connection, ttl={"default_ttl": LONG_TTL / 60.0, "refresh_on_read": False})
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
    return Row("dict (floor)", size, size / insert_ms * 1e3, select_ms, idle_ms, due_ms, 0, select_ms)


def run(
    sizes: list[int], sqlite_max: int, seed: int, langgraph: bool, default_durability_max: int = 0
) -> list[Row]:
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
                if langgraph and size <= default_durability_max:
                    file = str(Path(folder) / f"langgraph-default-{size}.db")
                    rows.append(
                        bench_langgraph(
                            "LangGraph SqliteStore file, default pragmas",
                            functools.partial(_langgraph_sqlite, file, "default"),
                            size,
                            seed,
                            on_disk.selected,
                        )
                    )
            rows.append(bench_ttlcache(size, seed))
            rows.append(bench_dict(size, seed))
    return rows


# (engine row, LangGraph row, and for the renewing search and the sweeps the LangGraph row that has a TTL)
RATIO_PAIRS = (
    ("Amnesia in-memory", "LangGraph InMemoryStore", "LangGraph SqliteStore :memory:"),
    ("Amnesia SQLite", "LangGraph SqliteStore file", "LangGraph SqliteStore file"),
    (
        "Amnesia SQLite",
        "LangGraph SqliteStore file, default pragmas",
        "LangGraph SqliteStore file, default pragmas",
    ),
)
RATIO_HEADER = (
    "| pair | items | remember vs put | select vs search, no renewal | select vs search, renewing "
    "| sweep, 10% due | sweep, none due |"
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
                _ratio(engine.remember_ops / store.remember_ops),
                _speed(store.select_read_ms, engine.select_read_ms),
                _speed(ttl.select_renew_ms, engine.select_renew_ms),
                _speed(ttl.sweep_due_ms, engine.sweep_due_ms),
                _speed(ttl.sweep_idle_ms, engine.sweep_idle_ms),
            ]
            pair = f"{engine_name} / {store_name}" + (
                f" (renewing search and sweeps: {ttl_name})" if ttl_name != store_name else ""
            )
            lines.append(f"| {pair} | {size:,} | " + " | ".join(cells) + " |")
    return lines


def _speed(theirs_ms: float | None, ours_ms: float | None) -> str:
    if theirs_ms is None or ours_ms is None or ours_ms <= 0:
        return "n/a"
    return _ratio(theirs_ms / ours_ms)


def _ratio(value: float) -> str:
    """Two decimals, or three below 0.1 (a ratio of 0.003 is not 0.00)."""
    return f"{value:.2f}" if value >= 0.1 else f"{value:.3f}"


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


def _load() -> str:
    """The machine's load average, as `uptime` prints it: the other jobs the timings shared the CPU with."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000", help="comma-separated item counts")
    parser.add_argument("--sqlite-max", type=int, default=100_000, help="largest size measured on SQLite")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--no-langgraph", action="store_true", help="skip LangGraph's store")
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time with the process's CPU time instead of wall time (disk waits left out)",
    )
    parser.add_argument(
        "--langgraph-default-max",
        type=int,
        default=0,
        help="largest size at which LangGraph's SqliteStore is also measured with SQLite's default pragmas "
        "(an fsync per put: about 100 puts/s on a shared disk; 0: not measured)",
    )
    args = parser.parse_args(argv)
    try:
        sizes = [int(part) for part in args.sizes.split(",")]
    except ValueError:
        parser.error(f"--sizes: expected comma-separated integers, got {args.sizes!r}")
    langgraph = not args.no_langgraph and importlib.util.find_spec("langgraph") is not None
    if not langgraph and not args.no_langgraph:
        print(f"LangGraph's store not measured: {LANGGRAPH_HINT}", file=sys.stderr)
    global timer
    if args.cpu_time:
        timer = time.process_time
    load_before = _load()
    rows = run(sizes, args.sqlite_max, args.seed, langgraph, args.langgraph_default_max)
    clock = "CPU time (--cpu-time)" if args.cpu_time else "wall time"
    print(
        f"Load average (1, 5, 15 min): {load_before} at the start, {_load()} at the end. Timed in {clock}.\n"
    )
    print(
        "| implementation | items | remember ops/s | select ms, no renewal | select ms, renewing "
        "| sweep ms, none due | sweep ms, 10% due |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(row.markdown())
    ratios = ratio_lines(rows)
    if ratios:
        print(
            "\nThe engine's speed over LangGraph's store, same items, same run (> 1: the engine is faster):\n"
        )
        print(RATIO_HEADER)
        print("|---|---:|---:|---:|---:|---:|---:|")
        print("\n".join(ratios))
    failures = floor_failures(rows)
    for failure in failures:
        print(f"FLOOR MISSED: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
