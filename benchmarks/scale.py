"""Scale: time and peak memory of the engine at 10^3..10^6 items (in memory and in SQLite) and of the harness
at 10^3..10^5 generated tasks, each size in a fresh process so that peak RSS belongs to that size alone.

    python benchmarks/scale.py                  # engine to 10^6; harness run to 10^4, 10^5 extrapolated
    python benchmarks/scale.py --engine-max 100000 --harness-max 1000   # quicker
    python benchmarks/scale.py --harness-full   # really run 10^5 tasks x 3 arms (about an hour on 2 cores)

Engine: N items (seeded contents, ttls from 1h to 30d, write times spread over 30 days) are bulk-written
through the store's `commit`, then an engine is opened on the store (load), swept once at day 30 (settle:
the due items are forgotten and audited) and asked for a 2,000-token injection block (select); `remember`
is timed over 1,000 further writes (per-write cost should not grow with N). Harness: generated task sets
(3 groups) replayed on no-memory, full-memory and amnesia with the scripted model, 1 worker. Peak memory is
the process's max RSS (resource.getrusage). Prints Markdown tables.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DAY = 86_400.0
TTLS = (3_600.0, DAY, 7 * DAY, 30 * DAY)
BATCH = 10_000


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux reports KiB


def _items(count: int, seed: int) -> list[Any]:
    from amnesia.item import MemoryItem
    from amnesia.tokens import count_tokens

    rng = random.Random(seed)
    items = []
    for index in range(count):
        content = (
            f"Fact {index}: the {rng.choice(('deploy', 'harbor', 'oolong'))} code is {rng.randrange(10**6)}."
        )
        created = rng.uniform(0.0, 30 * DAY)
        items.append(
            MemoryItem(
                id=f"m-{index:09d}",
                content=content,
                created_at=created,
                last_accessed_at=created,
                ttl=rng.choice(TTLS),
                tokens=count_tokens(content),
                size_bytes=len(content.encode("utf-8")),
            )
        )
    return items


def engine_size(backend: str, count: int) -> dict[str, Any]:
    from amnesia import Amnesia, Config, InMemoryStore, SimulatedClock, SQLiteStore

    config = Config(max_store_bytes=10**10)
    with tempfile.TemporaryDirectory() as scratch:
        store = (
            InMemoryStore(secret=b"s" * 32)
            if backend == "memory"
            else SQLiteStore(Path(scratch) / "m.db", secret=b"s" * 32)
        )
        items = _items(count, seed=count)
        started = time.perf_counter()
        for start in range(0, count, BATCH):
            store.commit("default", save=items[start : start + BATCH])
        write = time.perf_counter() - started
        del items
        clock = SimulatedClock(30 * DAY)
        started = time.perf_counter()
        engine = Amnesia(store=store, config=config, clock=clock)
        load = time.perf_counter() - started
        started = time.perf_counter()
        swept = engine.sweep()
        settle = time.perf_counter() - started
        started = time.perf_counter()
        injection = engine.select_for_injection(2_000)
        select = time.perf_counter() - started
        started = time.perf_counter()
        for index in range(1_000):
            engine.remember(f"Later fact {index}: the staging code is {index * 7919}.", ttl="7d")
        remember_ms = time.perf_counter() - started  # 1,000 writes: seconds total = ms per write
        store.close()
    return {
        "backend": backend,
        "items": count,
        "bulk_write_s": round(write, 2),
        "load_s": round(load, 2),
        "settle_s": round(settle, 3),
        "forgotten_by_settle": swept.forgotten,
        "select_ms": round(select * 1000, 1),
        "injected": len(injection.items),
        "remember_ms": round(remember_ms, 3),
        "peak_mb": round(_peak_mb(), 1),
    }


def harness_size(count: int) -> dict[str, Any]:
    from runners.armconfig import resolve_arm_specs
    from runners.runner import RunOptions, run
    from tasks.generate import generate, write_generated

    groups = ("helpful", "harmful", "mixed")
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        started = time.perf_counter()
        per_group = [count // 3 + (1 if i < count % 3 else 0) for i in range(3)]
        tasks = [t for group, n in zip(groups, per_group, strict=True) for t in generate(group, n, seed=1)]
        write_generated(tasks, folder / "tasks")
        generate_s = time.perf_counter() - started
        del tasks
        options = RunOptions(
            tasks=folder / "tasks",
            arms=resolve_arm_specs(["no-memory", "full-memory", "amnesia"]),
            out=folder / "run",
            progress=False,
            argv=["scale"],
        )
        summary = run(options)
    return {
        "tasks": count,
        "pairs": summary.pairs,
        "generate_s": round(generate_s, 1),
        "run_s": round(summary.seconds, 1),
        "pairs_per_s": round(summary.pairs / summary.seconds, 1),
        "peak_mb": round(_peak_mb(), 1),
    }


def _measure(kind: str, *args: str) -> dict[str, Any]:
    """One size in a fresh interpreter: its peak RSS is its own."""
    result = subprocess.run(
        [sys.executable, __file__, "--one", kind, *args], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise SystemExit(f"{kind} {args}: {result.stderr.strip().splitlines()[-1]}")
    return json.loads(result.stdout)


def _table(rows: list[dict[str, Any]]) -> None:
    print("| " + " | ".join(rows[0]) + " |")
    print("|" + "---|" * len(rows[0]))
    for row in rows:
        print("| " + " | ".join(str(value) for value in row.values()) + " |")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engine-max", type=int, default=10**6)
    parser.add_argument("--harness-max", type=int, default=10**4, help="largest harness size really run")
    parser.add_argument("--harness-full", action="store_true", help="also really run 10^5 tasks")
    parser.add_argument("--one", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        kind, *rest = args.one
        figures = engine_size(rest[0], int(rest[1])) if kind == "engine" else harness_size(int(rest[0]))
        print(json.dumps(figures))
        return 0
    sizes = [10**k for k in range(3, 7) if 10**k <= args.engine_max]
    for backend in ("memory", "sqlite"):
        print(f"Engine, {backend} store")
        _table([_measure("engine", backend, str(n)) for n in sizes])
    harness_max = 10**5 if args.harness_full else args.harness_max
    rows = [_measure("harness", str(n)) for n in (10**k for k in range(3, 6)) if n <= harness_max]
    if rows and rows[-1]["tasks"] < 10**5:  # extrapolate linearly from the largest size run
        last = rows[-1]
        factor = 10**5 / last["tasks"]
        rows.append(
            {
                "tasks": "100000 (extrapolated)",
                "pairs": last["pairs"] * factor,
                "generate_s": round(last["generate_s"] * factor, 1),
                "run_s": round(last["run_s"] * factor, 1),
                "pairs_per_s": last["pairs_per_s"],
                "peak_mb": "n/a",
            }
        )
    print("Harness, 3 arms, scripted model, 1 worker")
    _table(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
