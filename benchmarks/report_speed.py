"""Report speed and memory (issue 15, target 1): `report` on a run takes at most a third of that run's replay
time, and 10^5 tasks x 3 arms are reported in under 2 GB.

    python benchmarks/report_speed.py                              # 900 generated tasks x 3 arms, 1 worker
    python benchmarks/report_speed.py --tasks 300                  # quicker
    python benchmarks/report_speed.py --memory-tasks 10000 30000   # also: peak memory of bigger reports

Generates a task set, replays it (scripted model, one worker) and times the replay; then runs
`amnesia-bench report` on that run in a child process (process start included) and times it. Prints the ratio
report / replay against the floor (1/3) and exits 1 when it is missed. Both timings come from the same run on
the same machine, so the ratio, not the seconds, is the result.

`--memory-tasks N...` also reports, for each N, a run of N tasks x 3 arms made by copying the replayed run's
logs under new task ids (task id ~rK), and records two peaks: the largest process (the report or one of its
figure workers: `ru_maxrss`) and the sum over the process tree (proportional set sizes sampled every 50 ms:
a page the forked workers share with the report counts once). Copies share their
texts, so a run of N distinct tasks holds more distinct strings: on a real generated 10^4-task run the largest
process peaked 15% higher than on copies (docs/scale.md). With the largest N below 10^5, the 10^5 peak is
projected linearly from the two largest sizes and said to be a projection; the check (<= 2 GB at 10^5) uses
it, and exits 1 when it is missed.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
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
MEMORY_CEILING_MB = 2048  # a report of 10^5 tasks x 3 arms, at most
AT = 100_000
_CLI = "import sys; from amnesia_bench.cli import main; sys.argv[0] = 'amnesia-bench'; main()"


def _task_set(folder: Path, total: int) -> Path:
    per_group = [total // 3 + (1 if i < total % 3 else 0) for i in range(3)]
    write_generated([t for g, n in zip(GROUPS, per_group, strict=True) for t in generate(g, n, 1)], folder)
    return folder


def _copies(run_dir: Path, out: Path, tasks: int, have: int) -> Path:
    """`run_dir`'s logs copied under new task ids until the run holds `tasks` tasks (whole copies of the run
    then part of one), with its manifest."""
    (out / "logs").mkdir(parents=True)
    shutil.copy(run_dir / "manifest.json", out / "manifest.json")
    for arm_dir in sorted((run_dir / "logs").iterdir()):
        target = out / "logs" / arm_dir.name
        target.mkdir()
        for index, path in enumerate(sorted(arm_dir.glob("*.jsonl"))):
            text = path.read_text(encoding="utf-8")
            task_id = json.loads(text.split("\n", 1)[0])["task_id"]
            for copy in range(tasks // have + (1 if index < tasks % have else 0)):
                renamed = text.replace(json.dumps(task_id), json.dumps(f"{task_id}~r{copy}"))
                (target / f"{path.stem}~r{copy}.jsonl").write_text(renamed, encoding="utf-8")
    return out


def _tree_pss_mb(pid: int) -> float:
    """Proportional set size of `pid` and its descendants, in MB (Linux /proc; 0 where unavailable): pages a
    forked worker shares with the report count once in the sum, split between them."""
    total, stack = 0, [pid]
    while stack:
        current = stack.pop()
        try:
            rollup = Path(f"/proc/{current}/smaps_rollup").read_text()
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        total += next((int(line.split()[1]) for line in rollup.splitlines() if line.startswith("Pss:")), 0)
        stack.extend(int(child) for child in children)
    return total / 1024


def _report(run_dir: Path, out: Path) -> tuple[float, float, float]:
    """(seconds, largest process peak MB, process tree peak MB) of `amnesia-bench report run_dir` in a child.
    The largest process is `ru_maxrss` over every child so far: call it on growing runs."""
    started = time.perf_counter()
    command = [sys.executable, "-c", _CLI, "report", str(run_dir), "--out", str(out), "--no-progress"]
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree = 0.0
    while child.poll() is None:
        tree = max(tree, _tree_pss_mb(child.pid))
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    if child.returncode != 0:
        raise SystemExit(f"report failed: {child.stderr.read().decode(errors='replace')[-2000:]}")
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, tree


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=900, help="generated tasks (over the three groups)")
    parser.add_argument(
        "--memory-tasks", type=int, nargs="*", default=[], help="also: peak memory of reports this big"
    )
    args = parser.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        tasks = _task_set(root / "tasks", args.tasks)
        options = RunOptions(tasks=tasks, arms=resolve_arm_specs(ARMS), out=root / "run", progress=False)
        replay = run(options).seconds
        report, _, _ = _report(root / "run", root / "report")
        ratio = report / replay
        verdict = "met" if ratio <= FLOOR else "MISSED"
        print(f"{args.tasks} tasks x {len(ARMS)} arms: replay {replay:.1f} s, report {report:.1f} s")
        print(f"report / replay = {ratio:.2f} (floor <= {FLOOR:.2f}): {verdict}")
        ok = ratio <= FLOOR
        peaks: list[tuple[int, float]] = []
        for size in sorted(set(args.memory_tasks)):  # smallest first: ru_maxrss only grows
            copied = _copies(root / "run", root / f"run-{size}", size, args.tasks)
            seconds, largest, tree = _report(copied, root / f"report-{size}")
            shutil.rmtree(copied)
            peaks.append((size, tree))
            print(f"report of {size:,} tasks x 3 arms (copied logs): {seconds:.0f} s, largest process "
                  f"{largest:,.0f} MB, process tree {tree:,.0f} MB")  # fmt: skip
    if peaks:
        measured = dict(peaks)
        if AT in measured:
            at, how = measured[AT], "measured"
        elif len(peaks) >= 2:
            (small, low), (big, high) = peaks[-2], peaks[-1]
            at = high + (high - low) / (big - small) * (AT - big)
            how = f"projected from {small:,} and {big:,}"
        else:
            at, how = float("nan"), "not measured (give 10^5 or two sizes)"
        fits = at <= MEMORY_CEILING_MB
        print(f"report of 10^5 tasks x 3 arms: {at:,.0f} MB process tree ({how}; ceiling "
              f"{MEMORY_CEILING_MB:,} MB): {'met' if fits else 'MISSED'}")  # fmt: skip
        ok = ok and fits
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
