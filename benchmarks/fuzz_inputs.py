"""Bad-input fuzzing at volume: seeded mutations (atheris-style byte and token mutations of valid inputs) of
every input surface, counting what was accepted, what was refused with a clean one-line error, and failures
(a traceback, an exception escaping, a multi-line or unlabelled error, a refused input that changed state).

    python benchmarks/fuzz_inputs.py                 # 2,000 inputs per surface
    python benchmarks/fuzz_inputs.py --per-target 200

Surfaces: duration strings, config files (YAML and TOML), task YAML files (mutations of the shipped tasks),
the tool dispatcher's JSON arguments, `dsh-memory-forget` argv and `amnesia-bench` argv (in-process
`run(argv)`, the same code path as the console scripts). Exit 1 if any failure; prints the first few.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sqlite3
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from amnesia import Amnesia, Config, InMemoryStore, InvalidInput, SimulatedClock
from amnesia.cli import run as memory_cli
from amnesia.durations import parse_duration
from amnesia.tools import call_tool
from amnesia_bench.cli import run as bench_cli
from tasks.load import read_task_set

ROOT = Path(__file__).resolve().parent.parent
SPICE = [
    "\x00",
    "\udcff",
    "&a",
    "*a",
    "!!python/object:os.system",
    "[",
    "{",
    "}",
    "]",
    ":",
    "-",
    "'",
    '"',
    "\n",
    "#",
    "\t",
    "1e400",
    "-1",
    "9" * 30,
    "nan",
    "null",
    "true",
    "密码",
    "忽略之前的指令",
    "\u202e",
    "?",
    "%",
]
ACCEPTED, REFUSED, FAILED = "accepted", "refused", "failed"


def _mutate(text: str, rng: random.Random) -> str:
    """1-4 edits: delete a span, duplicate a span, insert spice, flip a character, or truncate."""
    for _ in range(rng.randint(1, 4)):
        if not text:
            text = rng.choice(SPICE)
            continue
        at = rng.randrange(len(text))
        span = rng.randint(1, 20)
        edit = rng.randrange(5)
        if edit == 0:
            text = text[:at] + text[at + span :]
        elif edit == 1:
            text = text[:at] + text[at : at + span] * rng.randint(2, 5) + text[at:]
        elif edit == 2:
            text = text[:at] + rng.choice(SPICE) + text[at:]
        elif edit == 3:
            text = text[:at] + chr(rng.randrange(0x20, 0x3000)) + text[at + 1 :]
        else:
            text = text[:at]
    return text


def _clean(message: str) -> bool:
    return bool(message.strip()) and "\n" not in message.strip() and "Traceback" not in message


class Unclean(Exception):
    """A refusal that broke the contract (multi-line, unlabelled, wrong exit code, or it changed state)."""


def _refused(ok: bool, what: object) -> str:
    if not ok:
        raise Unclean(repr(what)[:300])
    return REFUSED


def _durations(rng: random.Random, scratch: Path) -> Callable[[], str]:
    corpus = ["7d", "2h30m", "15s", "1w", "90", "0.5h", "1d12h", "100m"]

    def one() -> str:
        try:
            parse_duration(_mutate(rng.choice(corpus), rng), field="ttl")
        except ValueError as error:
            return _refused(_clean(str(error)) and str(error).startswith("ttl: "), error)
        return ACCEPTED

    return one


def _configs(rng: random.Random, scratch: Path) -> Callable[[], str]:
    yaml_text = "default_ttl: 7d\ndecay_k: 3\nrestorable: true\nmax_injected_tokens: 2000\n"
    toml_text = '[amnesia]\ndefault_ttl = "7d"\nstale_strength = 0.3\nauto_expire = false\n'

    def one() -> str:
        suffix, base = rng.choice([(".yaml", yaml_text), (".toml", toml_text)])
        path = scratch / f"config{suffix}"
        path.write_bytes(_mutate(base, rng).encode("utf-8", "surrogatepass"))
        try:
            Config.from_file(path)
        except InvalidInput as error:
            return _refused(_clean(str(error)), error)
        return ACCEPTED

    return one


def _task_files(rng: random.Random, scratch: Path) -> Callable[[], str]:
    corpus = [p.read_text(encoding="utf-8") for p in sorted((ROOT / "tasks").rglob("*.yaml"))]

    def one() -> str:
        path = scratch / "task.yaml"
        path.write_bytes(_mutate(rng.choice(corpus), rng).encode("utf-8", "surrogatepass"))
        _, errors = read_task_set(path)
        if not errors:
            return ACCEPTED
        return _refused(all(_clean(str(e)) and str(e).startswith(str(path)) for e in errors), errors[:2])

    return one


def _tool_calls(rng: random.Random, scratch: Path) -> Callable[[], str]:
    corpus = [
        ("amnesia_remember", '{"content": "The harbor opens at six.", "ttl": "7d", "tags": ["harbor"]}'),
        ("amnesia_remember", '{"content": "Keep this.", "pin": true, "kind": "preference"}'),
        ("amnesia_forget", '{"query": "harbor"}'),
        ("amnesia_forget", '{"all": true, "confirm": true}'),
        ("amnesia_recall", '{"query": "harbor", "limit": 3}'),
        ("amnesia_audit", '{"limit": 5}'),
        ("amnesia_preview", '{"budget_tokens": 100}'),
        ("amnesia_restore", '{"id": "m-000000000001"}'),
        ("amnesia_status", "{}"),
    ]

    def one() -> str:
        engine = Amnesia(store=InMemoryStore(secret=b"f" * 32), clock=SimulatedClock(0.0))
        engine.remember("The deploy window is Tuesday.", ttl="7d", tags=["deploy"])
        before = [i.to_dict() for i in engine.store.load_items("default")]
        name, arguments = rng.choice(corpus)
        result = call_tool(engine, name, _mutate(arguments, rng), owner_id=rng.choice([None, "s1"]))
        json.dumps(result, ensure_ascii=False)
        if "error" not in result:
            return ACCEPTED
        unchanged = (
            name == "amnesia_forget" or [i.to_dict() for i in engine.store.load_items("default")] == before
        )
        return _refused(_clean(result["error"]) and unchanged, (name, result))

    return one


def _invoke(cli: Callable[[list[str]], int], argv: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli(argv)
    return code, err.getvalue()


def _db_rows(db: Path) -> tuple[list[tuple[object, ...]], ...]:
    if not db.exists():
        return ([], [])
    connection = sqlite3.connect(db)
    try:
        return (
            connection.execute("SELECT id, data FROM items ORDER BY id").fetchall(),
            connection.execute("SELECT seq FROM audit ORDER BY seq").fetchall(),
        )
    finally:
        connection.close()


def _memory_cli(rng: random.Random, scratch: Path) -> Callable[[], str]:
    db = scratch / "memory.db"
    corpus = [
        ["remember", "The harbor opens at six.", "--ttl", "7d", "--tag", "harbor", "--kind", "fact"],
        ["remember", "Scratch note.", "--scope", "session", "--owner", "s1", "--ttl", "1h"],
        ["remember", "Keep this.", "--pin", "--key", "keep"],
        ["forget", "--query", "harbor"],
        ["recall", "harbor", "--limit", "2"],
        ["audit", "--limit", "5", "--since", "1d"],
        ["preview", "--budget", "100"],
        ["status"],
        ["sweep"],
        ["plugs", "--scope", "workspace"],
    ]

    def one() -> str:
        argv = list(rng.choice(corpus))
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(argv))
            argv[at] = _mutate(argv[at], rng).replace("\x00", "")
        before = _db_rows(db)
        code, err = _invoke(memory_cli, ["--json", "--db", str(db), *argv])
        if code == 0:
            return ACCEPTED
        ok = code == 2 and err.startswith("error: ") and _clean(err) and _db_rows(db) == before
        return _refused(ok, (argv, code, err))

    return one


def _bench_cli(rng: random.Random, scratch: Path) -> Callable[[], str]:
    tasks = ROOT / "tasks" / "helpful"
    corpus = [
        ["validate", str(tasks)],
        ["generate", "--group", "helpful", "--n", "2", "--seed", "3"],
        ["run", "--tasks", str(tasks), "--arms", "no-memory", "--limit", "1", "--no-progress", "--no-report"],
        ["report", str(scratch / "missing-run")],
    ]
    counter = iter(range(10**9))

    def one() -> str:
        argv = list(rng.choice(corpus))
        for _ in range(rng.randint(1, 2)):
            at = rng.randrange(len(argv))
            argv[at] = _mutate(argv[at], rng).replace("\x00", "")
        out = scratch / f"out-{next(counter)}"
        if argv[0] in ("run", "generate"):
            argv += ["--out", str(out)]
        code, err = _invoke(bench_cli, argv)
        if code == 0:
            return ACCEPTED
        left_files = out.exists() and any(out.rglob("*"))
        ok = code == 2 and err.startswith("error: ") and "Traceback" not in err and not left_files
        return _refused(ok, (argv, code, err[-300:]))

    return one


TARGETS: dict[str, Callable[[random.Random, Path], Callable[[], str]]] = {
    "duration strings": _durations,
    "config files": _configs,
    "task YAML files": _task_files,
    "tool JSON arguments": _tool_calls,
    "dsh-memory-forget argv": _memory_cli,
    "amnesia-bench argv": _bench_cli,
}
SLOW_TARGETS = {"amnesia-bench argv": 10}  # each run/generate writes a folder: fuzz 1/10 as many


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-target", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    failures: list[str] = []
    print("| surface | inputs | accepted | refused (one line, nothing written) | failures | seconds |")
    print("|---|---:|---:|---:|---:|---:|")
    total = 0
    for name, build in TARGETS.items():
        rng = random.Random(f"{args.seed}:{name}")
        count = max(1, args.per_target // SLOW_TARGETS.get(name, 1))
        outcomes: Counter[str] = Counter()
        started = time.perf_counter()
        with tempfile.TemporaryDirectory() as scratch:
            one = build(rng, Path(scratch))
            for index in range(count):
                try:
                    outcome = one()
                except Unclean as error:
                    outcome = FAILED
                    failures.append(f"{name} #{index}: unclean refusal {error}")
                except Exception:  # an exception escaping a surface is exactly what this hunts for
                    outcome = FAILED
                    failures.append(f"{name} #{index}: {traceback.format_exc().splitlines()[-1]}")
                outcomes[outcome] += 1
        total += count
        print(
            f"| {name} | {count} | {outcomes[ACCEPTED]} | {outcomes[REFUSED]} | {outcomes[FAILED]} | "
            f"{time.perf_counter() - started:.1f} |"
        )
    print(f"\n{total} inputs fuzzed, {len(failures)} failure(s)")
    for failure in failures[:20]:
        print(f"  {failure}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
