"""Crash safety: SIGKILL the engine at random points during remember, forget, sweep and eviction, then
check the database against what the killed process had been told (benchmarks/db_invariants.py).

    python benchmarks/crash_safety.py                   # 300 kills (100: 2.5 min on a shared 2-core box)
    python benchmarks/crash_safety.py --kills 24 --json # what tests/hardening/test_crash.py runs

Each round starts a worker on the same SQLite file; the worker runs seeded random operations on a simulated
clock (remember with and without a key, session memories, forget by id and by query, sweep, end of a
sub-agent), with a store small enough that most writes evict. It logs an intent line before and an ack line
after every operation. The kill point is random but drawn from the seed, never from a timer, so the same seed
kills at the same place however loaded the machine is: in its last operation the worker counts SQLite's
progress callbacks (one per `PROGRESS_STEP` virtual-machine instructions, so inside statements and open
transactions) and SIGKILLs itself at a drawn count, or right after the operation if it ends first. The parent
then reopens the file (recovery) and checks every invariant. Prints kills, operations in flight when killed,
acknowledged operations, writes and forgets checked, and every problem; exit 1 if there is one.

Forensic scans (`db_invariants.ForensicTally`): after each kill the parent greps every byte of the database,
-wal, -shm, any journal and the scrub marker for the text and the content key of every memory forgotten so
far, twice. Before the reopen, a memory whose forget was acknowledged must not be found (its scrub finished
before the acknowledgement); the one forget the kill may have cut between its commit and its scrub is
counted as `found_before_reopen` (the window that lasts until the next open). After the reopen, every
memory the audit records as forgotten must be gone: `forgotten_bytes_found` must be 0.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

from db_invariants import ForensicTally, check_database, key_of, print_figures, read_ledgers

from amnesia import Amnesia, Config, SimulatedClock, SQLiteStore
from amnesia.errors import AmnesiaError
from amnesia.keys import KEY_FILE_ENV
from amnesia.stores.forensics import read_files

CONFIG = Config(max_store_bytes=1_000, max_item_bytes=400, default_ttl=1_800.0)
WORDS = ("deploy", "oolong", "staging", "invoice", "harbor", "quartz", "lantern", "meadow")
STEP_SECONDS = 7.0  # simulated time per operation: ttls of minutes expire within a round
OWNERS = ("s1", "s2")
MAX_OPERATIONS = 40  # a worker runs 1..MAX_OPERATIONS-1 operations, the last one killed
MAX_PROGRESS_CALLS = 200  # the kill lands at 1..MAX_PROGRESS_CALLS-1 progress callbacks into the last one
PROGRESS_STEP = 1  # SQLite virtual-machine instructions per progress callback (a typical operation: 50-300)


def _note(log: TextIO, **event: Any) -> None:
    log.write(json.dumps(event, ensure_ascii=False) + "\n")
    log.flush()


def _operation(engine: Amnesia, rng: random.Random, serial: str, log: TextIO) -> None:
    """One random operation, bracketed by its intent and ack lines."""
    roll = rng.random()
    now = engine.clock.now()
    if roll < 0.55:
        content = f"Crash note {serial}: the {rng.choice(WORDS)} value is {rng.randrange(10**6)}."
        options: dict[str, Any] = {"ttl": rng.choice((60.0, 900.0, 3_600.0, 86_400.0))}
        if rng.random() < 0.3:
            options["key"] = f"subject-{rng.randrange(4)}"
        if rng.random() < 0.2:
            options |= {"scope": "session", "owner_id": rng.choice(OWNERS)}
        if rng.random() < 0.05:
            options |= {"pin": True, "ttl": None, "key": None}
        _note(log, t="intent", op="remember", content=content, at=now)
        view = engine.remember(content, **options)
        done = "remember-evicting" if view.evicted else "remember"
        gone = [*view.superseded, *view.evicted]
        key = key_of(engine.store.path, view.id)  # type: ignore[attr-defined]
        _note(log, t="ack", op=done, id=view.id, content=content, key=key, gone=gone)
    elif roll < 0.7:
        live = engine.plugs()
        _note(log, t="intent", op="forget", at=now)
        ids = engine.forget(rng.choice(live).id).ids if live else ()
        _note(log, t="ack", op="forget", gone=list(ids))
    elif roll < 0.8:
        _note(log, t="intent", op="forget-query", at=now)
        ids = engine.forget(query=rng.choice(WORDS)).ids
        _note(log, t="ack", op="forget-query", gone=list(ids))
    elif roll < 0.95:
        _note(log, t="intent", op="sweep", at=now)
        ids = engine.sweep().ids
        _note(log, t="ack", op="sweep", gone=list(ids))
    else:
        _note(log, t="intent", op="end-agent", at=now)
        ids = engine.end_agent(rng.choice(OWNERS)).ids
        _note(log, t="ack", op="end-agent", gone=list(ids))
    engine.clock.advance(STEP_SECONDS)  # type: ignore[attr-defined]


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _arm_kill(store: SQLiteStore, progress_calls: int) -> None:
    """SIGKILL this process at the `progress_calls`-th SQLite progress callback from now."""
    remaining = progress_calls

    def countdown() -> int:
        nonlocal remaining
        remaining -= 1
        if remaining <= 0:
            _die()
        return 0  # 0 = let SQLite go on

    store._db.set_progress_handler(countdown, PROGRESS_STEP)  # the benchmark reaches into its own store


def worker(db: Path, ledger: Path, start: float, seed: int, operations: int, progress_calls: int) -> None:
    """Run `operations` random operations and die (SIGKILL) inside the last one, at its `progress_calls`-th
    SQLite progress callback, or just after it when it finishes sooner."""
    rng = random.Random(seed)
    clock = SimulatedClock(start)
    counter = iter(range(10**9))
    store = SQLiteStore(db)
    engine = Amnesia(store=store, config=CONFIG, clock=clock, id_factory=lambda: f"m-{seed}-{next(counter)}")
    with ledger.open("a", encoding="utf-8") as log:
        _note(log, t="start", at=start)
        for index in range(operations):
            if index == operations - 1:
                _arm_kill(store, progress_calls)
            try:
                _operation(engine, rng, f"{seed}-{next(counter)}", log)
            except AmnesiaError as error:  # e.g. capacity with only pinned items left: refused, not lost
                _note(log, t="ack", op="refused", error=str(error))
    _die()


def _last_time(ledger: Path) -> float:
    """The simulated time the killed worker had reached (the next round continues from there)."""
    latest = 0.0
    if ledger.exists():
        for line in ledger.read_text(encoding="utf-8").splitlines():
            try:
                latest = max(latest, float(json.loads(line).get("at", 0.0)))
            except (json.JSONDecodeError, ValueError):
                continue
    return latest


def run_kills(kills: int, folder: Path, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    db, ledger = folder / "memory.db", folder / "ledger.jsonl"
    problems: list[str] = []
    verdict = None
    after_reopen, before_reopen, cut_forgets = ForensicTally(), ForensicTally(), ForensicTally()
    found_before_reopen = 0
    for round_index in range(kills):
        start = _last_time(ledger) + STEP_SECONDS
        process = subprocess.Popen(
            [
                sys.executable,
                __file__,
                "--worker",
                str(db),
                str(ledger),
                str(start),
                str(seed * 100_000 + round_index),
                str(rng.randrange(1, MAX_OPERATIONS)),
                str(rng.randrange(1, MAX_PROGRESS_CALLS)),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        _, stderr = process.communicate()
        if process.returncode != -signal.SIGKILL:
            problems.append(f"round {round_index}: worker exited with {process.returncode}: {stderr[-300:]}")
            break
        state = read_ledgers([ledger])
        killed = read_files(db)  # the files as the kill left them
        acknowledged = before_reopen.scan(db, state, state.forgotten, killed)
        problems += [f"after kill {round_index + 1}, before reopening: {p}" for p in acknowledged]
        SQLiteStore(db).close()  # reopen after the crash, as the next user would
        verdict = check_database(db, state, CONFIG)
        cut = verdict.forgotten - state.forgotten  # forgotten by the killed operation, never acknowledged
        found_before_reopen += bool(cut_forgets.scan(db, state, cut, killed))
        verdict.problems.extend(after_reopen.scan(db, state, verdict.forgotten))
        if verdict.problems:
            problems += [f"after kill {round_index + 1}: {p}" for p in verdict.problems]
            break
    ledger_state = read_ledgers([ledger])
    return {
        "kills": kills,
        "in_flight_at_kill": dict(sorted(ledger_state.in_flight.items())),
        "acknowledged": dict(sorted(ledger_state.acks.items())),
        "writes_checked": verdict.writes_checked if verdict else 0,
        "forgets_checked": verdict.forgets_checked if verdict else 0,
        "live_items": verdict.live if verdict else 0,
        "forget_entries": verdict.forget_entries if verdict else 0,
        "forensic_after_reopen": after_reopen.figures(),
        "forensic_before_reopen_acknowledged": before_reopen.figures(),
        "forensic_before_reopen_cut_forget": cut_forgets.figures(),
        "kills_with_a_cut_forget_found_before_reopen": found_before_reopen,
        "problems": problems,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dir", type=Path, default=None, help="keep the database here (default: a temp dir)")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument(
        "--worker",
        nargs=6,
        metavar=("DB", "LEDGER", "START", "SEED", "OPERATIONS", "PROGRESS_CALLS"),
        help=argparse.SUPPRESS,
    )
    args = parser.parse_args()
    if args.worker:
        db, ledger, start, seed, operations, progress_calls = args.worker
        worker(Path(db), Path(ledger), float(start), int(seed), int(operations), int(progress_calls))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        folder = args.dir or Path(scratch)
        folder.mkdir(parents=True, exist_ok=True)
        os.environ[KEY_FILE_ENV] = str(folder / "audit.key")  # workers share it; nothing left in ~/.config
        started = time.perf_counter()
        figures = run_kills(args.kills, folder, args.seed)
        figures["seconds"] = round(time.perf_counter() - started, 1)
    return print_figures(figures, args.json)


if __name__ == "__main__":
    sys.exit(main())
