"""Concurrency: agents, CLI users and a sweeper share one SQLite file for a time and a number of
steps; then every acknowledged write is stored or audited as forgotten, nothing is half-done
(benchmarks/db_invariants.py), and no `database is locked` reached anyone.

    python benchmarks/concurrency.py                          # 2 agents + 2 CLI users + 1 sweeper, 30 s
    python benchmarks/concurrency.py --seconds 2 --min-steps 40 --json   # tests/hardening/test_concurrency.py

An agent is an engine in its own process (remember with short ttls, keys, session memories; recall; inject;
forget; end a sub-agent). A CLI user calls `dsh-memory-forget` (its `run(argv)` entry point, in a loop) with
remember/recall/forget/sweep/status/audit. The sweeper sweeps. Everyone runs on the wall clock, so memories
really expire while others write. Prints operations acknowledged per role, refusals (StoreBusy after the
bounded retry, which is a clear error rather than a lost write), writes and forgets checked, and problems.

Forensic scans (`db_invariants.ForensicTally`): every `--scan-every` seconds while the processes run, the
parent takes the write lock (so no commit is half-done), and unless a scrub is pending (the `-scrub` marker:
a forget whose WAL truncation a reader blocked), reads every byte of the database, -wal, -shm, any journal
and the marker, then greps them for the text and the content key of every memory whose forget (or expiry,
eviction, supersession) a client had acknowledged. A pending scrub is counted
(`scans_deferred_scrub_pending`), not scanned. The same scan runs at the end, and after a reopen for every
memory the audit records as forgotten. `forgotten_bytes_found` must be 0.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, TextIO

import yaml
from db_invariants import ForensicTally, check_database, key_of, print_figures, read_ledgers

from amnesia import Amnesia, Config, SQLiteStore
from amnesia.cli import run as cli_run
from amnesia.errors import StoreBusy
from amnesia.keys import KEY_FILE_ENV
from amnesia.stores.forensics import read_files
from amnesia.stores.sqlite import scrub_marker

CONFIG = Config(max_store_bytes=6_000, max_item_bytes=400, lock_timeout=10.0)
WORDS = ("deploy", "oolong", "staging", "invoice", "harbor", "quartz")
TTLS = ("1s", "2s", "5s", "1m")


def _note(log: TextIO, **event: Any) -> None:
    event["clock"] = time.monotonic()  # how long each operation took: intent to ack
    log.write(json.dumps(event, ensure_ascii=False) + "\n")
    log.flush()


def _agent_step(engine: Amnesia, rng: random.Random, serial: str, log: TextIO) -> None:
    roll = rng.random()
    if roll < 0.5:
        content = f"Agent note {serial}: the {rng.choice(WORDS)} value is {rng.randrange(10**6)}."
        options: dict[str, Any] = {"ttl": rng.choice(TTLS)}
        if rng.random() < 0.3:
            options["key"] = f"{serial.split('-')[0]}-subject-{rng.randrange(3)}"
        if rng.random() < 0.2:
            options |= {"scope": "session", "owner_id": f"sub-{serial.split('-')[0]}"}
        _note(log, t="intent", op="remember", content=content)
        view = engine.remember(content, **options)
        gone = [*view.superseded, *view.evicted]
        key = key_of(engine.store.path, view.id)  # type: ignore[attr-defined]
        _note(log, t="ack", op="remember", id=view.id, content=content, key=key, gone=gone)
    elif roll < 0.65:
        _note(log, t="intent", op="recall")
        engine.recall(rng.choice(WORDS), limit=3)
        _note(log, t="ack", op="recall")
    elif roll < 0.8:
        _note(log, t="intent", op="inject")
        engine.select_for_injection(300)
        _note(log, t="ack", op="inject")
    elif roll < 0.95:
        live = engine.plugs()
        _note(log, t="intent", op="forget")
        ids = engine.forget(rng.choice(live).id).ids if live else ()
        _note(log, t="ack", op="forget", gone=list(ids))
    else:
        _note(log, t="intent", op="end-agent")
        ids = engine.end_agent(f"sub-{serial.split('-')[0]}").ids
        _note(log, t="ack", op="end-agent", gone=list(ids))


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_run(argv)
    return code, out.getvalue(), err.getvalue()


def _cli_step(base: list[str], rng: random.Random, serial: str, log: TextIO) -> None:
    roll = rng.random()
    if roll < 0.45:
        content = f"CLI note {serial}: the {rng.choice(WORDS)} value is {rng.randrange(10**6)}."
        _note(log, t="intent", op="cli-remember", content=content)
        code, out, err = _cli([*base, "remember", content, "--ttl", rng.choice(TTLS)])
        if code == 0:
            view = json.loads(out)
            gone = [*view["superseded"], *view["evicted"]]
            key = key_of(Path(base[2]), view["id"])
            _note(log, t="ack", op="cli-remember", id=view["id"], content=content, key=key, gone=gone)
    elif roll < 0.6:
        _note(log, t="intent", op="cli-forget")
        code, out, err = _cli([*base, "forget", "--query", rng.choice(WORDS)])
        if code == 0:
            _note(log, t="ack", op="cli-forget", gone=json.loads(out)["ids"])
    else:
        command = rng.choice((["recall", rng.choice(WORDS)], ["sweep"], ["status"], ["audit"], ["plugs"]))
        _note(log, t="intent", op=f"cli-{command[0]}")
        code, out, err = _cli([*base, *command])
        if code == 0:
            gone = json.loads(out)["ids"] if command == ["sweep"] else []
            _note(log, t="ack", op=f"cli-{command[0]}", gone=gone)
    if code != 0:
        _note(log, t="ack", op="cli-error", error=err.strip())


def worker(
    role: str, db: Path, config_file: Path, ledger: Path, seed: int, seconds: float, min_steps: int
) -> None:
    """One process of the mix: `role` steps for `seconds`, and on until `min_steps` steps finished (a step
    refused with StoreBusy does not count), so a slow or loaded machine still exercises every role."""
    until = time.time() + seconds  # counted from here: start-up (imports) is not part of the mix
    rng = random.Random(seed)
    counter = iter(range(10**9))
    finished = 0
    with ledger.open("a", encoding="utf-8") as log:
        _note(log, t="start")
        base = ["--json", "--db", str(db), "--config", str(config_file)]
        engine = None
        if role != "cli":
            engine = Amnesia(store=SQLiteStore(db, lock_timeout=CONFIG.lock_timeout), config=CONFIG)
        while time.time() < until or finished < min_steps:
            serial = f"{role}{seed}-{next(counter)}"
            try:
                if role == "cli":
                    _cli_step(base, rng, serial, log)
                elif role == "agent":
                    _agent_step(engine, rng, serial, log)  # type: ignore[arg-type]
                else:
                    _note(log, t="intent", op="sweep")
                    ids = engine.sweep().ids  # type: ignore[union-attr]
                    _note(log, t="ack", op="sweep", gone=list(ids))
                    time.sleep(0.05)
                finished += 1
            except StoreBusy as error:  # the bounded retry gave up: a clear error, and nothing was written
                _note(log, t="ack", op="busy", error=str(error))


def _scan_under_the_write_lock(db: Path, folder: Path, tally: ForensicTally) -> list[str] | None:
    """Grep the files for every memory whose forget was acknowledged, reading them under the write lock (no
    commit half-done); None (nothing scanned) while a scrub is pending. The ledgers are read first: an
    acknowledgement comes after the scrub of its forget: each one read was scrubbed or left the marker."""
    ledger = read_ledgers(sorted(folder.glob("ledger-*.jsonl")))
    connection = sqlite3.connect(db, timeout=60.0, isolation_level=None)
    try:
        connection.execute("BEGIN IMMEDIATE")
        try:
            if scrub_marker(db).exists():
                return None
            blobs = read_files(db)
        finally:
            connection.execute("ROLLBACK")
    finally:
        connection.close()
    # The lock is released before the grep: the writers wait only for the reading of the files.
    return tally.scan(db, ledger, ledger.forgotten, blobs)


def _forgetting_ms(ledgers: list[Path]) -> list[float]:
    """How long each acknowledged operation that forgot something took (intent to ack, in ms): the key of
    what it forgot stays in the files at most that long, unless the operation left a scrub pending."""
    durations = []
    for path in ledgers:
        started = None
        for line in path.read_text(encoding="utf-8").splitlines():
            event = json.loads(line)
            if event["t"] == "intent":
                started = event["clock"]
            elif event["t"] == "ack" and event.get("gone") and started is not None:
                durations.append((event["clock"] - started) * 1_000)
    return sorted(durations)


def run_mix(
    seconds: float,
    agents: int,
    clis: int,
    sweepers: int,
    folder: Path,
    min_steps: int = 0,
    scan_every: float = 0.5,
) -> dict[str, Any]:
    db, config_file = folder / "memory.db", folder / "config.yaml"
    config_file.write_text(yaml.safe_dump(CONFIG.to_dict()), encoding="utf-8")
    SQLiteStore(db).close()
    roles = ["agent"] * agents + ["cli"] * clis + ["sweeper"] * sweepers
    processes = []
    for index, role in enumerate(roles):
        ledger = folder / f"ledger-{index}.jsonl"
        argv = [sys.executable, __file__, "--worker", role, str(db), str(config_file), str(ledger)]
        processes.append(
            subprocess.Popen(
                [*argv, str(index), str(seconds), str(min_steps)], stderr=subprocess.PIPE, text=True
            )
        )
    tally, deferred, problems = ForensicTally(), 0, []
    while any(process.poll() is None for process in processes):
        time.sleep(scan_every)  # the mix runs on the wall clock; the scans sample it
        found = _scan_under_the_write_lock(db, folder, tally)
        deferred += found is None
        problems += [f"during the run: {line}" for line in found or ()]
    for index, process in enumerate(processes):
        _, stderr = process.communicate(timeout=seconds + 240)
        if process.returncode != 0 or stderr.strip():
            problems.append(f"{roles[index]} {index} exited {process.returncode}: {stderr.strip()[-500:]}")
    ledgers = sorted(folder.glob("ledger-*.jsonl"))
    errors = [
        event["error"]
        for path in ledgers
        for event in map(json.loads, path.read_text(encoding="utf-8").splitlines())
        if "error" in event
    ]
    problems += [f"a user saw: {e}" for e in errors if "database is locked" in e]
    problems += [f"unexpected CLI error: {e}" for e in errors if not e.startswith("error: db:")]
    ledger = read_ledgers(ledgers)
    forgetting = _forgetting_ms(ledgers)
    found = _scan_under_the_write_lock(db, folder, tally)
    problems += [f"at the end: {line}" for line in (["a scrub is still pending"] if found is None else found)]
    SQLiteStore(db).close()
    verdict = check_database(db, ledger, CONFIG)
    problems += [f"after a reopen: {line}" for line in tally.scan(db, ledger, verdict.forgotten)]
    return {
        "processes": {"agents": agents, "clis": clis, "sweepers": sweepers},
        "seconds": seconds,
        "acknowledged": dict(sorted(ledger.acks.items())),
        "busy_refusals": ledger.acks.get("busy", 0),
        "writes_checked": verdict.writes_checked,
        "forgets_checked": verdict.forgets_checked,
        "live_items": verdict.live,
        "forget_entries": verdict.forget_entries,
        "forensic": tally.figures(),
        "scans_deferred_scrub_pending": deferred,
        "forgetting_operations": len(forgetting),
        "forgetting_ms_median_p99_max": [
            round(forgetting[int(q * (len(forgetting) - 1))], 1) for q in (0.5, 0.99, 1.0)
        ]
        if forgetting
        else [],
        "problems": problems + verdict.problems,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--agents", type=int, default=2)
    parser.add_argument("--clis", type=int, default=2)
    parser.add_argument("--sweepers", type=int, default=1)
    parser.add_argument(
        "--min-steps", type=int, default=0, help="each process goes on until this many steps finished"
    )
    parser.add_argument(
        "--scan-every", type=float, default=0.5, help="seconds between forensic scans during the run"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--worker", nargs=7, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        role, db, config_file, ledger, seed, seconds, min_steps = args.worker
        worker(role, Path(db), Path(config_file), Path(ledger), int(seed), float(seconds), int(min_steps))
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        os.environ[KEY_FILE_ENV] = str(Path(scratch) / "audit.key")  # workers share it; nothing in ~/.config
        roles = (args.agents, args.clis, args.sweepers)
        figures = run_mix(args.seconds, *roles, Path(scratch), args.min_steps, args.scan_every)
    return print_figures(figures, args.json, 50)


if __name__ == "__main__":
    sys.exit(main())
