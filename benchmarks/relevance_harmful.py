"""Does query-aware injection bring stale facts back? `amnesia` (strength order) against `amnesia-relevance`
(BM25 to the user's message + strength) on the shipped harmful tasks, at several token budgets.

On these tasks the old and the new version of a fact share the question's words, so a relevance order could
prefer the old one where the budget holds only one. Per budget it prints, for each arm, the stale-error rate
of the scored answers and, model-free, how many probes had a stale value in the injected block; then the
probes where relevance mode put a stale value in the block that strength mode kept out ("brought back", with
both blocks' lines on stderr) and the reverse. Exits 1 if relevance mode brings back any stale value that
strength mode keeps out, at any budget. The default sweep runs down to one-line blocks (50-70 tokens: room
for a single memory), where the order alone decides which version the model sees.

    python benchmarks/relevance_harmful.py                       # budgets 2000, 200, 100, 80, 70, 60, 50, 40
    python benchmarks/relevance_harmful.py --budgets 2000,150 --tasks tasks/harmful

Scripted model, seed 0: the runs are deterministic. They are one sweep over the budgets
(`amnesia-bench sweep`, amnesia_bench.sweep) in a temporary folder.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import yaml

from amnesia_bench.sweep import load_sweep, run_sweep
from tasks.logschema import read_log
from tasks.scoring import asserted_values

ARMS = ("amnesia", "amnesia-relevance")
BUDGETS = "2000,200,100,80,70,60,50,40"  # down to one-line blocks: there the order alone picks the version
Probe = tuple[str, int, int]  # task id, session index, turn index


def sweep_points(out: Path, part: str, spec: dict[str, object], workers: int) -> dict[tuple[str, int], Path]:
    """Run the sweep `spec` (a sweep file's fields) as OUT/<part>.yaml into OUT/<part>/ through
    `amnesia-bench sweep`; returns (task path, budget) -> the point's run folder."""
    path = out / f"{part}.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    sweep = load_sweep(path)
    run_sweep(sweep, out / part, sweep.points, workers=workers)
    return {
        (str(point.options.get("tasks", spec.get("tasks"))), int(point.options["budget"])): out
        / part
        / "points"
        / point.id
        for point in sweep.points
    }


def probe_outcomes(run_dir: Path, arm: str) -> dict[Probe, tuple[bool, bool, str]]:
    """Per probe: (the answer was classified stale, the injected block asserted a stale value, the block)."""
    outcomes: dict[Probe, tuple[bool, bool, str]] = {}
    for path in sorted((run_dir / "logs" / arm).rglob("*.jsonl")):
        records = read_log(path)
        task_id = records[0]["task_id"]
        blocks = {
            (r["session_index"], r["turn_index"]): r["block"] for r in records if r["type"] == "injection"
        }
        for record in records:
            if record["type"] != "probe":
                continue
            where = (record["session_index"], record["turn_index"])
            block = blocks.get(where, "")
            in_block = bool(asserted_values(block, record["stale"]))
            outcomes[(task_id, *where)] = (record["classification"] == "stale", in_block, block)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", default="tasks/harmful")
    parser.add_argument("--budgets", default=BUDGETS, help="comma-separated token budgets")
    args = parser.parse_args(argv)
    try:
        budgets = [int(part) for part in args.budgets.split(",")]
    except ValueError:
        parser.error(f"--budgets: expected comma-separated integers, got {args.budgets!r}")
    print(f"tasks: {args.tasks}; scripted model, seed 0")
    print()
    print(
        "| budget | stale errors, strength | stale errors, relevance | stale value in block, strength "
        "| stale value in block, relevance | brought back by relevance | kept out by relevance only "
        "| probes whose block differs |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    brought_back_total = 0
    with tempfile.TemporaryDirectory(prefix="relevance-harmful-") as folder:
        spec = {"tasks": args.tasks, "arms": list(ARMS), "grid": {"budget": budgets}}
        folders = sweep_points(Path(folder), "budgets", spec, workers=1)
        for budget in budgets:
            out = folders[(args.tasks, budget)]
            strength, relevance = (probe_outcomes(out, arm) for arm in ARMS)
            probes = len(strength)
            brought_back = [p for p in strength if relevance[p][1] and not strength[p][1]]
            kept_out = [p for p in strength if strength[p][1] and not relevance[p][1]]
            brought_back_total += len(brought_back)
            differ = sum(strength[p][2] != relevance[p][2] for p in strength)
            cells = [f"{sum(o[0] for o in outcome.values())}/{probes}" for outcome in (strength, relevance)]
            cells += [f"{sum(o[1] for o in outcome.values())}/{probes}" for outcome in (strength, relevance)]
            cells += [str(len(brought_back)), str(len(kept_out)), f"{differ}/{probes}"]
            print(f"| {budget} | " + " | ".join(cells) + " |")
            for probe in brought_back:
                task_id, session, turn = probe
                print(f"  brought back: {task_id} session {session} turn {turn}", file=sys.stderr)
                for arm, outcome in zip(ARMS, (strength, relevance), strict=True):
                    for line in outcome[probe][2].splitlines()[1:]:
                        print(f"    {arm}: {line}", file=sys.stderr)
    return 1 if brought_back_total else 0


if __name__ == "__main__":
    sys.exit(main())
