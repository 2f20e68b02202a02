"""A real model next to the scripted one on the same tasks, its throughput, and the cache's effect on re-runs.

    python benchmarks/real_model.py [--model gguf:smollm2-135m] [--tasks T1.yaml,T2.yaml,...] [--out DIR]

Steps, all through the `amnesia-bench` CLI: (1) the real model with a fresh response cache in DIR; (2) the
same run again into another folder (every call must come from the cache, with identical answers); (3) the
scripted model on the same tasks. Prints Markdown tables (outcomes per arm for both models; probes/s,
tokens/s and wall time for the first run vs the re-run) and exits 1 if a pair is unfinished, the re-run
called the model, or its answers differ. Used by scripts/ci_real_model.sh and for docs/models.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_TASKS = (
    "harmful/verification-drink.yaml",
    "harmful/staging-freeze-friday.yaml",
    "harmful/drink-poisoned-web.yaml",
    "harmful/zh-verification-drink.yaml",
    "helpful/report-currency-eur.yaml",
    "helpful/api-version-v3.yaml",
    "mixed/lunch-pref-and-expired-closure.yaml",
)
ARMS = "no-memory,full-memory,amnesia"
OUTCOMES = ("correct", "stale", "poisoned", "abstained", "wrong")


@dataclass
class RunFigures:
    """What one run folder's logs say, per arm and overall."""

    wall_seconds: float
    outcomes: dict[str, Counter] = field(default_factory=dict)  # arm -> classification counts
    answers: dict[tuple[str, str, int], str] = field(default_factory=dict)  # (arm, task, call) -> response
    # (arm, task, session, turn) -> the --judge model's verdict on that probe's answer, for judged runs
    verdicts: dict[tuple[str, str, int, int], str] = field(default_factory=dict)
    failed: list[str] = field(default_factory=list)  # "arm task: error" of pairs ended by a pair_error record
    crashed: list[str] = field(default_factory=list)  # "arm task" of pairs left unfinished without one
    calls: int = 0
    cached_calls: int = 0
    unfinished: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model_ms: float = 0.0  # time spent in uncached model calls

    @property
    def probes(self) -> int:
        return sum(sum(counts.values()) for counts in self.outcomes.values())


def read_run(run_dir: Path, wall_seconds: float) -> RunFigures:
    figures = RunFigures(wall_seconds)
    for log in sorted((run_dir / "logs").glob("*/*.jsonl")):
        records = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
        if not records or records[-1]["type"] != "task_end":
            figures.unfinished += 1
            where = f"{log.parent.name} {records[0]['task_id'] if records else log.stem}"
            if records and records[-1]["type"] == "pair_error":
                figures.failed.append(f"{where}: {records[-1]['error']}")
            else:
                figures.crashed.append(f"{where}: unfinished, no error recorded")
        for record in records:
            arm = record["arm"]
            if record["type"] == "probe":
                figures.outcomes.setdefault(arm, Counter())[record["classification"]] += 1
                if "judge" in record:
                    where = (arm, record["task_id"], record["session_index"], record["turn_index"])
                    figures.verdicts[where] = record["judge"]
            elif record["type"] == "model_call":
                figures.calls += 1
                figures.answers[(arm, record["task_id"], record["call_index"])] = record["response"]
                figures.prompt_tokens += record["prompt_tokens"]
                figures.completion_tokens += record["completion_tokens"]
                if record["cached"]:
                    figures.cached_calls += 1
                else:
                    figures.model_ms += record["wall_ms"]
    return figures


def fresh_folder_with_tasks(out: Path, relative_paths: list[str]) -> tuple[Path, Path]:
    """`out` resolved and emptied, holding the chosen task files (paths under tasks/) in out/tasks with
    their group folders; returns (out, the task folder)."""
    out = out.resolve()
    if out.exists():
        shutil.rmtree(out)
    task_dir = out / "tasks"
    for relative in relative_paths:
        target = task_dir / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "tasks" / relative, target)
    return out, task_dir


def run_bench(tasks: Path, model: str, out: Path, env: dict[str, str], *run_flags: str) -> RunFigures:
    """One timed `amnesia-bench run` of the three arms (`run_flags` appended), read back from its logs."""
    command = [
        *("amnesia-bench", "run", "--tasks", str(tasks), "--arms", ARMS, "--model", model),
        *("--out", str(out), "--overwrite", "--no-report", "--no-progress", *run_flags),
    ]
    started = time.perf_counter()
    subprocess.run(command, check=True, env=env, cwd=REPO)
    return read_run(out, time.perf_counter() - started)


def outcome_table(runs: dict[str, RunFigures]) -> str:
    lines = [
        "| model | arm | probes | " + " | ".join(OUTCOMES) + " | success |",
        "|---|---|---|" + "---|" * len(OUTCOMES) + "---|",
    ]
    for model, figures in runs.items():
        for arm in ARMS.split(","):
            counts = figures.outcomes.get(arm, Counter())
            total = sum(counts.values())
            cells = " | ".join(str(counts[o]) for o in OUTCOMES)
            success = f"{counts['correct'] / total:.2f}" if total else "-"
            lines.append(f"| {model} | {arm} | {total} | {cells} | {success} |")
    return "\n".join(lines)


def throughput_table(first: RunFigures, rerun: RunFigures) -> str:
    lines = [
        "| run | model calls | cached | wall s | probes/s | completion tokens/s (in model) | prompt tokens |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, f in (("first run (empty cache)", first), ("re-run (same cache)", rerun)):
        tokens_per_s = f"{f.completion_tokens / (f.model_ms / 1000):.1f}" if f.model_ms else "- (no calls)"
        lines.append(
            f"| {label} | {f.calls} | {f.cached_calls} | {f.wall_seconds:.1f} | "
            f"{f.probes / f.wall_seconds:.2f} | {tokens_per_s} | {f.prompt_tokens} |"
        )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gguf:smollm2-135m")
    parser.add_argument("--tasks", default=",".join(DEFAULT_TASKS), help="comma-separated paths under tasks/")
    parser.add_argument("--out", type=Path, default=Path("runs/real-model"))
    args = parser.parse_args()

    out, task_dir = fresh_folder_with_tasks(args.out, args.tasks.split(","))
    # A cache of this benchmark's own, so the first run really calls the model.
    env = {**os.environ, "AMNESIA_CACHE": str(out / "responses.sqlite3")}
    env.pop("AMNESIA_NO_CACHE", None)

    first = run_bench(task_dir, args.model, out / "real", env)
    rerun = run_bench(task_dir, args.model, out / "real-rerun", env)
    scripted = run_bench(task_dir, "scripted", out / "scripted", env)

    print(f"## {args.model} vs scripted on {len(args.tasks.split(','))} tasks x 3 arms\n")
    print(outcome_table({args.model: first, "scripted": scripted}))
    print("\n## Throughput and the response cache\n")
    print(throughput_table(first, rerun))
    problems = []
    if first.unfinished or rerun.unfinished or scripted.unfinished:
        problems.append("unfinished (arm, task) pairs")
    if rerun.cached_calls != rerun.calls:
        problems.append(f"the re-run called the model {rerun.calls - rerun.cached_calls} times")
    if rerun.answers != first.answers:
        problems.append("the re-run's answers differ from the first run's")
    for problem in problems:
        print(f"FAIL: {problem}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
