"""Report speed (issue 15, target 1): `report` on a run takes at most a third of that run's replay time.

    python benchmarks/report_speed.py                 # 900 generated tasks x 3 arms, 1 worker
    python benchmarks/report_speed.py --tasks 300     # quicker
    python benchmarks/report_speed.py --memory-tasks 100000   # also: the statistics of 10^5 tasks x 3 arms

Generates a task set, replays it (scripted model, one worker) and times the replay; then runs
`amnesia-bench report` on that run in a child process and times it, recording the child's peak memory. Prints
the ratio report / replay against the floor (1/3) and exits 1 when it is missed. Both timings come from the
same run on the same machine, so the ratio, not the seconds, is the result.

`--memory-tasks N` also computes every table of a report's statistics (bootstrap over tasks, summary, category
and paired tables) for a synthetic per-task table of N tasks x 3 arms in a child process and checks its peak
memory against 2 GB (it does not read logs: log reading is not part of this check).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runners.armconfig import resolve_arm_specs
from runners.runner import RunOptions, run
from tasks.generate import generate, write_generated

ARMS = ["no-memory", "full-memory", "amnesia"]
GROUPS = ("helpful", "harmful", "mixed")
FLOOR = 1 / 3  # report seconds / replay seconds, at most
MEMORY_CEILING_MB = 2048  # the statistics of 10^5 tasks x 3 arms, at most
_STATISTICS = """
import sys, time
import numpy as np, pandas as pd
from reports.metrics import (RATES, arm_pairs, bootstrap_tables, coarsen, paired_frame, rate_columns,
                             summary_frame)
tasks, arms = int(sys.argv[1]), ["no-memory", "full-memory", "amnesia"]
rng = np.random.default_rng(0)
groups = rng.choice(["helpful", "harmful", "mixed"], tasks)
categories = rng.choice([f"c{i}" for i in range(10)], tasks)
frames = []
for i, arm in enumerate(arms):
    probes = rng.integers(1, 4, tasks).astype(float)
    frame = pd.DataFrame({"run": 0, "arm": arm, "task_id": [f"t{k}" for k in range(tasks)],
                          "group": groups, "category": categories, "model": "scripted", "tasks": 1.0,
                          "probes": probes})
    for column in rate_columns(RATES):
        if column not in frame:
            frame[column] = rng.binomial(probes.astype(int), 0.3 + 0.2 * i).astype(float)
    frames.append(frame)
table = pd.concat(frames, ignore_index=True)
started = time.perf_counter()
fine = bootstrap_tables({"tasks": (table, ["model", "arm", "group", "category"], rate_columns(RATES))})
for by in (["arm", "group"], ["arm", "group", "category"]):
    rates = coarsen(fine["tasks"], by, RATES)
    summary_frame(rates)
    paired_frame(rates, arm_pairs(arms))
print(f"{time.perf_counter() - started:.1f}")
"""


def _task_set(folder: Path, total: int) -> Path:
    per_group = [total // 3 + (1 if i < total % 3 else 0) for i in range(3)]
    write_generated([t for g, n in zip(GROUPS, per_group, strict=True) for t in generate(g, n, 1)], folder)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tasks", type=int, default=900, help="generated tasks (split over the three groups)"
    )
    parser.add_argument("--memory-tasks", type=int, default=0, help="also check the statistics' peak memory")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        tasks = _task_set(root / "tasks", args.tasks)
        options = RunOptions(tasks=tasks, arms=resolve_arm_specs(ARMS), out=root / "run", progress=False)
        replay = run(options).seconds
        started = time.perf_counter()
        cli = "import sys; from amnesia_bench.cli import main; sys.argv[0] = 'amnesia-bench'; main()"
        command = [sys.executable, "-c", cli, "report", str(root / "run")]
        subprocess.run(command, check=True, capture_output=True)
        report = time.perf_counter() - started
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    ratio = report / replay
    verdict = "met" if ratio <= FLOOR else "MISSED"
    print(f"{args.tasks} tasks x {len(ARMS)} arms: replay {replay:.1f} s, report {report:.1f} s "
          f"(peak {peak_mb:,.0f} MB)")  # fmt: skip
    print(f"report / replay = {ratio:.2f} (floor <= {FLOOR:.2f}): {verdict}")
    ok = ratio <= FLOOR
    if args.memory_tasks:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        child = subprocess.run([sys.executable, "-c", _STATISTICS, str(args.memory_tasks)], check=True,
                               capture_output=True, text=True)  # fmt: skip
        peak = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024
        fits = peak <= MEMORY_CEILING_MB
        verdict = "met" if fits else "MISSED"
        print(f"statistics of {args.memory_tasks:,} tasks x 3 arms: {child.stdout.strip()} s, "
              f"peak {peak:,.0f} MB (ceiling {MEMORY_CEILING_MB:,} MB): {verdict}")  # fmt: skip
        ok = ok and fits
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
