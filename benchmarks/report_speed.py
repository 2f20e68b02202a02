"""Report speed (issue 15, target 1): `report` on a run takes at most a third of that run's replay time.

    python benchmarks/report_speed.py                 # 900 generated tasks x 3 arms, 1 worker
    python benchmarks/report_speed.py --tasks 300     # quicker

Generates a task set, replays it (scripted model, one worker) and times the replay; then runs
`amnesia-bench report` on that run in a child process and times it, recording the child's peak memory. Prints
the ratio report / replay against the floor (1/3) and exits 1 when it is missed. Both timings come from the
same run on the same machine, so the ratio, not the seconds, is the result.
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


def _task_set(folder: Path, total: int) -> Path:
    per_group = [total // 3 + (1 if i < total % 3 else 0) for i in range(3)]
    write_generated([t for g, n in zip(GROUPS, per_group, strict=True) for t in generate(g, n, 1)], folder)
    return folder


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--tasks", type=int, default=900, help="generated tasks (split over the three groups)"
    )
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
    return 0 if ratio <= FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
