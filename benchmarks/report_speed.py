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
logs under new task ids (task id ~rK), and records two peaks (`sampled_peaks`): the largest process (the
report or one of its figure workers) and the sum over the process tree. Copies share their
texts, so a run of N distinct tasks holds more distinct strings: on a real generated 10^4-task run the largest
process peaked 15% higher than on copies (docs/scale.md). With the largest N below 10^5, the 10^5 peak is
projected linearly from the two largest sizes and said to be a projection; the check (<= 2 GB at 10^5) uses
it, and exits 1 when it is missed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from runners.armconfig import resolve_arm_specs
from runners.runner import RunOptions, run
from tasks.generate import generate, write_generated

ARMS = ["no-memory", "full-memory", "amnesia"]
GROUPS = ("helpful", "harmful", "mixed")
FLOOR = 1 / 3  # report seconds / replay seconds, at most
MEMORY_CEILING_MB = 2000  # a report of 10^5 tasks x 3 arms, at most ("under 2 GB")
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


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants (Linux /proc; those gone meanwhile are left out)."""
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            with contextlib.suppress(OSError):
                stack.extend(int(child) for child in (task / "children").read_text().split())
    return found


def _proc_kb(pid: int, source: str, field: str) -> int:
    """The `field` line's kB of /proc/PID/`source` (smaps_rollup "Pss:", status "VmHWM:"); 0 when gone."""
    try:
        lines = Path(f"/proc/{pid}/{source}").read_text().splitlines()
    except OSError:
        return 0
    return next((int(line.split()[1]) for line in lines if line.startswith(field)), 0)


@dataclass(frozen=True)
class Peaks:
    """What `sampled_peaks` measured of one command."""

    seconds: float
    tree_mb: float  # the largest sum of the tree's proportional set sizes over the samples
    largest_mb: float  # the largest peak resident set (VmHWM) of any one process of the tree


def sampled_peaks(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> Peaks:
    """Run `command` (stdout discarded; SystemExit with its stderr when it fails) and measure its memory.

    The target is the **process tree**: a report forks figure workers, and the machine must hold them all at
    once. Every 100 ms the proportional set sizes (PSS) of the command's process and its descendants are
    summed, and the largest sum is kept. PSS rather than RSS, because a forked worker shares the pages of
    everything imported before the fork with the report: summing RSS counts those pages once per process
    (about 100 MB too much per worker), summing PSS counts each page once, split between its sharers. A
    spike shorter than 100 ms can be missed (reading a big process's PSS costs the kernel a walk of its
    page tables: sampling more often slows the report measured), so the largest process's exact peak
    (VmHWM, which the kernel keeps) is given beside it."""
    started = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, cwd=cwd)
    tree_kb, largest_kb = 0, 0
    while child.poll() is None:
        pids = _tree(child.pid)
        tree_kb = max(tree_kb, sum(_proc_kb(pid, "smaps_rollup", "Pss:") for pid in pids))
        largest_kb = max([largest_kb, *(_proc_kb(pid, "status", "VmHWM:") for pid in pids)])
        time.sleep(0.1)
    seconds = time.perf_counter() - started
    if child.returncode != 0:
        assert child.stderr is not None
        error = child.stderr.read().decode(errors="replace")[-2000:]
        raise SystemExit(f"{Path(command[0]).name} failed ({child.returncode}): {error}")
    return Peaks(seconds, tree_kb / 1024, largest_kb / 1024)


def _report(run_dir: Path, out: Path) -> Peaks:
    """Time and memory (`sampled_peaks`) of `amnesia-bench report run_dir` in a child."""
    return sampled_peaks(
        [sys.executable, "-c", _CLI, "report", str(run_dir), "--out", str(out), "--no-progress"]
    )


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
        report = _report(root / "run", root / "report").seconds
        ratio = report / replay
        verdict = "met" if ratio <= FLOOR else "MISSED"
        print(f"{args.tasks} tasks x {len(ARMS)} arms: replay {replay:.1f} s, report {report:.1f} s")
        print(f"report / replay = {ratio:.2f} (floor <= {FLOOR:.2f}): {verdict}")
        ok = ratio <= FLOOR
        peaks: list[tuple[int, float]] = []
        for size in sorted(set(args.memory_tasks)):
            copied = _copies(root / "run", root / f"run-{size}", size, args.tasks)
            peak = _report(copied, root / f"report-{size}")
            shutil.rmtree(copied)
            peaks.append((size, peak.tree_mb))
            print(f"report of {size:,} tasks x 3 arms (copied logs): {peak.seconds:.0f} s, largest process "
                  f"{peak.largest_mb:,.0f} MB, process tree {peak.tree_mb:,.0f} MB")  # fmt: skip
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
