"""Harness speed: how long the replay runner takes with the scripted model, and how that grows.

    python benchmarks/harness_speed.py                      # full: default sets, 100..10,000 generated tasks
    python benchmarks/harness_speed.py --max-tasks 1000     # quicker

Prints tasks/s (pairs/s) and model calls/s for (1) the default task sets x 3 arms, (2) generated task sets of
growing size x 3 arms with 2 workers, (3) tasks holding a growing number of memories (amnesia arm, 1 worker),
and writes the tables to docs/harness_perf.md. Floors (issue 3): (1) under 30 s; (2) 10,000 tasks in 10 min.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

from runners.armconfig import resolve_arm_specs
from runners.runner import RunOptions, RunSummary, run
from tasks.generate import generate, write_generated

ROOT = Path(__file__).resolve().parent.parent
ARMS = ["no-memory", "full-memory", "amnesia"]
GROUPS = ("helpful", "harmful", "mixed")


@dataclass(frozen=True)
class Row:
    label: str
    tasks: int
    workers: int
    summary: RunSummary

    def cells(self) -> list[str]:
        s = self.summary
        return [
            self.label,
            str(self.tasks),
            str(s.pairs),
            str(self.workers),
            f"{s.seconds:.2f}",
            f"{s.pairs / s.seconds:.0f}",
            f"{s.model_calls / s.seconds:.0f}",
        ]


HEADER = ["set", "tasks", "pairs", "workers", "seconds", "pairs/s", "model calls/s"]


def _run(tasks: Path, out: Path, arms: list[str], workers: int) -> RunSummary:
    options = RunOptions(
        tasks=tasks,
        arms=resolve_arm_specs(arms),
        out=out,
        workers=workers,
        progress=False,
        argv=["benchmark"],
    )
    return run(options)


def _generated_set(folder: Path, total: int, seed: int) -> Path:
    per_group = [total // 3 + (1 if i < total % 3 else 0) for i in range(3)]
    tasks = [task for group, n in zip(GROUPS, per_group, strict=True) for task in generate(group, n, seed)]
    write_generated(tasks, folder)
    return folder


def _memory_heavy_set(folder: Path, memories: int, tasks: int) -> Path:
    """`tasks` tasks whose first turn writes `memories` facts at once and whose next session probes one."""
    folder.mkdir(parents=True)
    documents = []
    for index in range(tasks):
        facts = [{"content": f"Fact {m} of task {index}: code w{m}x.", "ttl": "30d"} for m in range(memories)]
        probe = {"user": "What is the code of fact 0?", "probe": {"expect": ["w0x"]}}
        documents.append(
            {
                "id": f"helpful/memories-{memories}-{index}",
                "group": "helpful",
                "category": "scale",
                "description": f"{memories} memories, then a probe.",
                "sessions": [
                    {"at": "0s", "turns": [{"user": "Note these facts.", "remember": facts}]},
                    {"at": "1d", "turns": [probe]},
                ],
            }
        )
    (folder / "tasks.yaml").write_text(yaml.safe_dump(documents, allow_unicode=True), encoding="utf-8")
    return folder


def _table(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-tasks", type=int, default=10_000, help="largest generated set")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--write", type=Path, default=ROOT / "docs" / "harness_perf.md")
    args = parser.parse_args()
    sizes = [n for n in (100, 1_000, 10_000) if n <= args.max_tasks]
    rows: list[Row] = []
    memory_rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="harness-speed-") as scratch:
        work = Path(scratch)
        default_sets = ROOT / "tasks"
        summary = _run(default_sets, work / "default", ARMS, 1)
        rows.append(Row("default sets", summary.pairs // len(ARMS), 1, summary))
        print(f"default sets x 3 arms: {summary.seconds:.2f}s (floor 30 s)", flush=True)
        for size in sizes:
            tasks = _generated_set(work / f"gen-{size}", size, seed=0)
            summary = _run(tasks, work / f"run-{size}", ARMS, args.workers)
            rows.append(Row("generated", size, args.workers, summary))
            print(
                f"{size} generated tasks x 3 arms, {args.workers} workers: {summary.seconds:.2f}s", flush=True
            )
        for memories in (1, 10, 100, 1_000):
            tasks = _memory_heavy_set(work / f"mem-{memories}", memories, tasks=20)
            summary = _run(tasks, work / f"mem-run-{memories}", ["amnesia"], 1)
            memory_rows.append(Row(f"{memories} memories/task", 20, 1, summary))
            print(f"20 tasks with {memories} memories each (amnesia): {summary.seconds:.2f}s", flush=True)
    report = "\n\n".join(
        [
            "# Harness performance",
            "Scripted model, simulated clock; measured by `python benchmarks/harness_speed.py` on "
            f"{platform.machine()} ({platform.python_implementation()} {platform.python_version()}). "
            "A pair is one (arm, task) replay; times include task loading and the manifest.",
            "## Growth with the number of tasks (3 arms)",
            _table(rows),
            "## Growth with memories per task (amnesia arm, 20 tasks, memories written in one turn, 2 calls)",
            _table(memory_rows),
        ]
    )
    print(report)
    args.write.parent.mkdir(parents=True, exist_ok=True)
    args.write.write_text(report + "\n", encoding="utf-8")
    print(f"\nwritten to {args.write}")


if __name__ == "__main__":
    main()
