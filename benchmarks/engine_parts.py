"""Why the engine is slower than LangGraph's store where it is: each step of the engine's work switched off in
turn, measured beside LangGraph's store in the same process.

    python benchmarks/engine_parts.py            # needs the [langgraph] extra
    python benchmarks/engine_parts.py --items 20000

A profiling run, not a configuration: a switched-off step is replaced by a no-op on a fresh engine (the
patches are undone after each measurement), so the engine then does less than it promises (no secret scan,
content stored unsealed, a forget that leaves the WAL as it is). Each line is the best of `--repeats`
measurements of the same work on the same seeded items as `engine_ops.py`, in CPU time (`time.process_time`:
the other jobs of a shared machine disturb it less) and wall time per call:

- a write in memory, against `InMemoryStore.put`;
- a write on SQLite (WAL, synchronous=NORMAL on both sides; a fifth of the items), against `SqliteStore.put`;
- a selection in memory with nothing renewed, against `InMemoryStore.search` for as many items;
- a sweep on SQLite with 10% of a fifth of the items due, against `SqliteStore.sweep_ttl()`.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from unittest import mock

# Run from anywhere: engine_ops (the same items and LangGraph set-ups) comes from here.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock, SQLiteStore
from benchmarks.engine_ops import (
    AUDIT_SECRET,
    DUE_FRACTION,
    SHORT_TTL,
    _contents,
    _langgraph_in_memory,
    _langgraph_sqlite,
)

SEED = 7
NAMESPACE = ("memories",)
Patches = tuple[str, ...]  # targets of mock.patch, each replaced by a no-op

NO_SECRET_SCAN: Patches = ("amnesia.item.refuse_secrets",)
NO_VIEW: Patches = ("amnesia.views.memory_view",)
NO_TOKEN_COUNT: Patches = ("amnesia.item.count_tokens",)
NO_SEALING: Patches = ("amnesia.stores.sqlite.seal", "amnesia.stores.sqlite.unseal")
NO_SCRUB: Patches = ("amnesia.stores.sqlite.SQLiteStore._scrub",)
NO_AUDIT_ROWS: Patches = ("amnesia.stores.sqlite.SQLiteStore._insert_audit",)
NO_FORGOTTEN_CHECK: Patches = ("amnesia.stores.sqlite.SQLiteStore._forgotten_ids",)
NO_MARKER_CHECK: Patches = ("amnesia.stores.sqlite.SQLiteStore._scrub_if_pending",)


def _no_op(target: str) -> Callable[..., object]:
    """What replaces `target`: sealing passes the text through, the forgotten-ids check finds none, a token
    count is a quarter of the length, everything else returns None."""
    if target.endswith("seal"):
        return lambda key, text: text
    if target.endswith("_forgotten_ids"):
        return lambda self, workspace_id, ids: set()
    if target.endswith("count_tokens"):
        return lambda text: len(text) // 4
    return lambda *args, **kwargs: None


@contextmanager
def switched_off(patches: Patches, hash_off: bool = False) -> Iterator[None]:
    """`patches` replaced by no-ops (and, with `hash_off`, the audit's keyed hash by a constant)."""
    with ExitStack() as stack:
        for target in patches:
            stack.enter_context(mock.patch(target, _no_op(target)))
        if hash_off:
            stack.enter_context(
                mock.patch("amnesia.audit.keyed_hasher", lambda secret: lambda text: "0" * 64)
            )
        yield


def _engine(store: object, size: int, **config: object) -> tuple[Amnesia, SimulatedClock]:
    clock, counter = SimulatedClock(0.0), itertools.count()
    engine = Amnesia(
        store=store,
        config=Config(max_store_bytes=size * 4_096, **config),
        clock=clock,
        id_factory=lambda: f"m-{next(counter):012x}",
    )
    return engine, clock


def _timed(action: Callable[[], object]) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one call."""
    cpu, wall = time.process_time(), time.perf_counter()
    action()
    return time.process_time() - cpu, time.perf_counter() - wall


def _best(measure: Callable[[], tuple[float, float]], repeats: int) -> tuple[float, float]:
    runs = [measure() for _ in range(repeats)]
    return min(cpu for cpu, _ in runs), min(wall for _, wall in runs)


def engine_writes(make_store: Callable[[], object], items: list[tuple[str, float]]) -> tuple[float, float]:
    engine, _ = _engine(make_store(), len(items))
    return _timed(lambda: [engine.remember(content, ttl=ttl) for content, ttl in items])


def langgraph_puts(make_store: Callable[[], object], items: list[tuple[str, float]]) -> tuple[float, float]:
    store = make_store()
    ttl = getattr(store, "supports_ttl", False)

    def put_all() -> None:
        for index, (content, item_ttl) in enumerate(items):
            minutes = (-SHORT_TTL if item_ttl == SHORT_TTL else item_ttl) / 60.0
            options = {"ttl": minutes} if ttl else {}
            store.put(NAMESPACE, f"m-{index:012x}", {"text": content}, **options)  # type: ignore[attr-defined]

    return _timed(put_all)


def _reader(items: list[tuple[str, float]]) -> Amnesia:
    """An in-memory engine holding `items` that renews nothing it injects."""
    engine, _ = _engine(InMemoryStore(), len(items), renew_on_inject="none")
    for content, ttl in items:
        engine.remember(content, ttl=ttl)
    return engine


def engine_select(items: list[tuple[str, float]], calls: int) -> tuple[float, float]:
    engine = _reader(items)
    return _timed(lambda: [engine.select_for_injection() for _ in range(calls)])


def langgraph_search(items: list[tuple[str, float]], calls: int, limit: int) -> tuple[float, float]:
    store = _langgraph_in_memory()
    for index, (content, _ttl) in enumerate(items):
        store.put(NAMESPACE, f"m-{index:012x}", {"text": content})  # type: ignore[attr-defined]
    return _timed(lambda: [store.search(NAMESPACE, limit=limit) for _ in range(calls)])  # type: ignore[attr-defined]


def engine_due_sweep(path: Path, items: list[tuple[str, float]]) -> tuple[float, float]:
    engine, clock = _engine(SQLiteStore(path, secret=AUDIT_SECRET), len(items))
    for content, ttl in items:
        engine.remember(content, ttl=ttl)
    clock.advance(2 * SHORT_TTL)
    measured = _timed(engine.sweep)
    engine.store.close()  # type: ignore[attr-defined]
    return measured


def langgraph_due_sweep(path: str, items: list[tuple[str, float]]) -> tuple[float, float]:
    store = _langgraph_sqlite(path)
    langgraph_puts(lambda: store, items)
    return _timed(store.sweep_ttl)  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000, help="items per measurement")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    size, repeats = args.items, args.repeats
    items = _contents(size, SEED)
    lines: list[tuple[str, str, float, float]] = []  # (operation, variant, CPU µs, wall µs) per call

    def add(operation: str, variant: str, measure: Callable[[], tuple[float, float]], calls: int) -> None:
        cpu, wall = _best(measure, repeats)
        lines.append((operation, variant, cpu / calls * 1e6, wall / calls * 1e6))

    in_memory_variants: list[tuple[str, Patches, bool]] = [
        ("engine, everything", (), False),
        ("without the secret scan", NO_SECRET_SCAN, False),
        ("without the audit's keyed hash", (), True),
        ("without the returned view", NO_VIEW, False),
        ("without the token count", NO_TOKEN_COUNT, False),
        ("without all four", NO_SECRET_SCAN + NO_VIEW + NO_TOKEN_COUNT, True),
    ]
    for variant, patches, hash_off in in_memory_variants:
        with switched_off(patches, hash_off):
            add("write, in memory", variant, functools.partial(engine_writes, InMemoryStore, items), size)
    puts = functools.partial(langgraph_puts, _langgraph_in_memory, items)
    add("write, in memory", "LangGraph InMemoryStore.put", puts, size)

    sqlite_items = items[: max(size // 5, 1)]  # a commit per write: a fifth of the items is enough
    with tempfile.TemporaryDirectory(prefix="amnesia-parts-") as folder:
        files = (Path(folder) / f"f{index}.db" for index in itertools.count())

        def fresh_engine_store() -> SQLiteStore:
            return SQLiteStore(next(files), secret=AUDIT_SECRET)

        sqlite_variants: list[tuple[str, Patches]] = [
            ("engine, everything", ()),
            ("without sealing", NO_SEALING),
            ("without the forgotten-ids check", NO_FORGOTTEN_CHECK),
            ("without the scrub-marker checks", NO_MARKER_CHECK),
            ("without all three", NO_SEALING + NO_FORGOTTEN_CHECK + NO_MARKER_CHECK),
        ]
        for variant, patches in sqlite_variants:
            with switched_off(patches):
                add(
                    "write, SQLite",
                    variant,
                    functools.partial(engine_writes, fresh_engine_store, sqlite_items),
                    len(sqlite_items),
                )
        add(
            "write, SQLite",
            "LangGraph SqliteStore.put",
            functools.partial(langgraph_puts, lambda: _langgraph_sqlite(str(next(files))), sqlite_items),
            len(sqlite_items),
        )

        calls = 20
        add("select in memory, no renewal", "engine", functools.partial(engine_select, items, calls), calls)
        limit = len(_reader(items).select_for_injection().items)
        add(
            "select in memory, no renewal",
            f"LangGraph InMemoryStore.search (limit {limit})",
            functools.partial(langgraph_search, items, calls, limit),
            calls,
        )

        due = int(len(sqlite_items) * DUE_FRACTION)
        sweep_variants: list[tuple[str, Patches]] = [
            ("engine, everything", ()),
            ("without the WAL scrub", NO_SCRUB),
            ("without the audit rows", NO_AUDIT_ROWS),
            ("without both", NO_SCRUB + NO_AUDIT_ROWS),
        ]
        for variant, patches in sweep_variants:
            with switched_off(patches):
                add(
                    f"sweep on SQLite, {due} of {len(sqlite_items)} due",
                    variant,
                    lambda: engine_due_sweep(next(files), sqlite_items),
                    1,
                )
        add(
            f"sweep on SQLite, {due} of {len(sqlite_items)} due",
            "LangGraph SqliteStore.sweep_ttl()",
            lambda: langgraph_due_sweep(str(next(files)), sqlite_items),
            1,
        )

    print("| operation | variant | CPU µs per call | wall µs per call |")
    print("|---|---|---:|---:|")
    for operation, variant, cpu, wall in lines:
        print(f"| {operation} | {variant} | {cpu:,.1f} | {wall:,.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
