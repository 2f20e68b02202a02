"""Every shipped task x the three main arms on a real model: does any pair crash, and what do the arms score?

    python benchmarks/real_model_all.py [--model gguf:smollm2-135m] [--limit N | --task-id ID ... |
        --having FIELD ...] [--workers 1] [--out DIR] [--resume] [--cache FILE] [--judge SPEC]
        [--primary rules|judge]

Steps, through the `amnesia-bench` CLI: (1) `run` of tasks/ (helpful, harmful, mixed) on no-memory,
full-memory and amnesia with the model (`--limit N`: the CLI's balanced sample of N tasks, for a quick pass;
`--task-id`: only these tasks; `--having FIELD`: only the tasks in which a turn, or the task itself, sets
that spec field, e.g. `tool_events`; `--judge`: a model also classifies each probe answer); (2) with
`--judge`, `rescore --judge` of the run, whose verdicts must equal the run's (the judge's calls come from the
response cache); (3) `report` on the run folder. Prints the commit and task count the run used, its pairs,
the failed pairs with their error (a model error recorded in the pair's log: `pair_error`), the crashes (a
run that died, or a pair left unfinished without a recorded error), the wall time and the response cache's
hits, then per-arm results from the report's tables (summary.csv: success and error rates with their 95%
CIs; paired.csv: amnesia vs full-memory and each memory arm vs no-memory, with the difference's CI and p),
and the report's "Judge vs rules" section when judged. Exits 1 on any failed pair, crash or judge verdict
that rescore does not repeat. `--resume` retries only the unfinished pairs of DIR's run.
Used by scripts/ci_real_model.sh (a short sample) and for docs/models.md (the full run).
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from real_model import ARMS, REPO, RunFigures, read_run

from tasks.load import load_tasks
from tasks.spec import Task

PAIRED = (("amnesia", "full-memory"), ("full-memory", "no-memory"), ("amnesia", "no-memory"))
RATES = (
    ("success_rate", "success"),
    ("stale_error_rate", "stale-error"),
    ("poison_error_rate", "poison-error"),
    ("false_forgetting_rate", "false-forgetting"),
)
PAIRED_METRICS = (("success_rate", "success"), ("stale_error_rate", "stale-error"))


def has_field(task: Task, name: str) -> bool:
    """Whether the task, or one of its turns, sets spec field `name` (a non-empty value)."""
    turns = (turn for session in task.sessions for turn in session.turns)
    return bool(getattr(task, name, None)) or any(getattr(turn, name, None) for turn in turns)


def tasks_having(names: list[str]) -> list[str]:
    """Ids of the shipped tasks that set any of these spec fields."""
    return [task.id for task in load_tasks(REPO / "tasks") if any(has_field(task, name) for name in names)]


def run_command(args: argparse.Namespace, run_dir: Path, task_ids: list[str]) -> list[str]:
    """The `amnesia-bench run` of this benchmark (no report: the last step builds it)."""
    command = [
        # relative to REPO (the run's cwd), so the manifest and report name the shipped set as `tasks`
        *("amnesia-bench", "run", "--tasks", "tasks", "--arms", ARMS, "--model", args.model),
        *("--out", str(run_dir), "--workers", str(args.workers), "--no-report", "--no-progress"),
        "--resume" if args.resume else "--overwrite",
    ]
    if args.limit is not None:
        command += ["--limit", str(args.limit)]
    for task_id in task_ids:
        command += ["--task-id", task_id]
    if args.judge:
        command += ["--judge", args.judge]
    return command


def expected_pairs(run_dir: Path) -> int:
    """(arm, task) pairs the run's manifest asks for; 0 when the run died before writing it."""
    try:
        manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return 0
    return manifest["tasks"]["count"] * len(manifest["arms"])


def manifest_facts(run_dir: Path) -> tuple[str, int]:
    """(git commit, task count) as the run's manifest recorded them."""
    manifest = json.loads((run_dir / "manifest.json").read_text(encoding="utf-8"))
    return manifest.get("git_commit") or "unknown", manifest["tasks"]["count"]


def read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def percent(row: dict[str, str], metric: str) -> str:
    """'12.3% [4.5, 20.1]' from a summary row's rate and its CI columns; '–' where the rate is undefined."""
    if not row.get(metric):
        return "–"
    low, high = row[f"{metric}_lo"], row[f"{metric}_hi"]
    return f"{100 * float(row[metric]):.1f}% [{100 * float(low):.1f}, {100 * float(high):.1f}]"


def arm_table(summary: list[dict[str, str]]) -> str:
    """One row per arm over all groups, from summary.csv."""
    lines = [
        "| arm | probes | tasks | " + " | ".join(label for _, label in RATES) + " |",
        "|---|---|---|" + "---|" * len(RATES),
    ]
    rows = {row["arm"]: row for row in summary if row["group"] == "all"}
    for arm in ARMS.split(","):
        row = rows.get(arm)
        if row is None:
            continue
        cells = " | ".join(percent(row, metric) for metric, _ in RATES)
        lines.append(f"| {arm} | {row['probes']} | {row['tasks']} | {cells} |")
    return "\n".join(lines)


def points(value: str) -> str:
    return f"{100 * float(value):+.1f}" if value else "n/a"


def paired_table(paired: list[dict[str, str]]) -> str:
    """The paired differences over all groups, from paired.csv: difference in points, its 95% CI, p."""
    lines = [
        "| arm − reference | metric | difference (pts) | 95% CI | p | tasks (differ) | significant |",
        "|---|---|---|---|---|---|---|",
    ]
    index = {
        (row["arm"], row["reference"], row["metric"]): row
        for row in paired
        if row["by"] == "group" and row["group"] == "all"
    }
    for arm, reference in PAIRED:
        for metric, label in PAIRED_METRICS:
            row = index.get((arm, reference, metric))
            if row is None:
                continue
            interval = f"[{points(row['diff_lo'])}, {points(row['diff_hi'])}]" if row["diff_lo"] else "n/a"
            tasks = f"{row['tasks']} ({row['tasks_differ']})"
            lines.append(
                f"| {arm} − {reference} | {label} | {points(row['diff'])} | {interval} | "
                f"{float(row['p_value']):.3g} | {tasks} | {row['significant']} |"
            )
    return "\n".join(lines)


def judge_section(report_md: Path) -> str:
    """The report's "Judge vs rules" section as written, up to its disagreement list."""
    text = report_md.read_text(encoding="utf-8")
    start = text.find("## Judge vs rules")
    if start < 0:
        return ""
    section = text[start:]
    end = section.find("\n## ", 1)
    section = section if end < 0 else section[:end]
    return section.split("\nDisagreements (")[0].strip()


def rescore_differences(
    run_dir: Path, rescored: Path, judge: str, verdicts: dict[tuple[str, str, int, int], str], env: dict
) -> list[str]:
    """`rescore RUN --judge` into `rescored`: its judge verdicts must be the run's (same answers, same
    rubric, calls answered by the response cache). Returns what differs, one line each."""
    command = ["amnesia-bench", "rescore", str(run_dir), "--judge", judge, "--out", str(rescored), "--force"]
    subprocess.run(command, env=env, cwd=REPO, check=True, capture_output=True)
    again = read_run(rescored, 0.0).verdicts
    return [
        f"{where}: the run's judge said {verdicts.get(where)!r}, rescore's {again.get(where)!r}"
        for where in sorted(verdicts.keys() | again.keys())
        if again.get(where) != verdicts.get(where)
    ]


def crashes_of(finished: subprocess.CompletedProcess, figures: RunFigures, run_dir: Path) -> list[str]:
    """A run that died (an exit other than 0, or 1 for failed pairs), pairs left unfinished without a
    recorded error, and pairs never started: one line each."""
    crashes = []
    if finished.returncode not in (0, 1) or (finished.returncode == 1 and not figures.failed):
        crashes.append(f"amnesia-bench run exited {finished.returncode}: {finished.stderr.strip()[-500:]}")
    crashes += figures.crashed
    missing = expected_pairs(run_dir) - len(list((run_dir / "logs").glob("*/*.jsonl")))
    return crashes + ([f"{missing} pairs never started"] if missing > 0 else [])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="gguf:smollm2-135m")
    parser.add_argument("--limit", type=int, help="a balanced sample of N tasks (a quick pass)")
    parser.add_argument("--task-id", action="append", default=[], help="only this task (repeatable)")
    parser.add_argument(
        "--having", action="append", default=[], help="only tasks that set this spec field (repeatable)"
    )
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--out", type=Path, default=Path("runs/real-model-all"))
    parser.add_argument("--resume", action="store_true", help="retry only the unfinished pairs of --out")
    parser.add_argument("--cache", type=Path, help="response cache file (default: OUT/responses.sqlite3)")
    parser.add_argument("--judge", help="a model (any --model spec) that also classifies each answer")
    parser.add_argument("--primary", choices=("rules", "judge"), default="rules")
    args = parser.parse_args()

    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    run_dir, report_dir = out / "run", out / "report"
    # A cache of the benchmark's own unless told: a fresh one makes every call for real.
    env = {**os.environ, "AMNESIA_CACHE": str((args.cache or out / "responses.sqlite3").resolve())}
    env.pop("AMNESIA_NO_CACHE", None)

    task_ids = [*args.task_id, *(tasks_having(args.having) if args.having else [])]
    if args.having and not task_ids:
        print(f"no shipped task sets any of {args.having}", file=sys.stderr)
        return 1
    started = time.perf_counter()
    finished = subprocess.run(
        run_command(args, run_dir, task_ids), env=env, cwd=REPO, capture_output=True, text=True
    )
    wall = time.perf_counter() - started
    (out / "run.log").write_text(finished.stdout + finished.stderr, encoding="utf-8")
    figures = read_run(run_dir, wall)
    expected = expected_pairs(run_dir)
    crashes = crashes_of(finished, figures, run_dir)

    commit, task_count = manifest_facts(run_dir) if expected else ("unknown", 0)
    print(f"## {args.model} on every shipped task x {ARMS}\n")
    print(f"commit {commit}, {task_count} tasks, {expected} pairs, workers {args.workers}")
    for line in finished.stdout.splitlines():
        if "pairs run" in line or line.startswith("response cache"):
            print(line)
    print(f"wall time {wall:.1f} s; model calls {figures.calls} ({figures.cached_calls} from the cache)")
    print(f"failed pairs: {len(figures.failed)}")
    for line in figures.failed:
        print(f"  {line}")
    print(f"crashes: {len(crashes)}")
    for line in crashes:
        print(f"  {line}")
    if not expected:
        return 1

    differences = []
    if args.judge:
        differences = rescore_differences(run_dir, out / "rescored", args.judge, figures.verdicts, env)
        print(f"rescore --judge: {len(figures.verdicts)} judged probes, {len(differences)} verdicts differ")
        for line in differences:
            print(f"  {line}")

    report = [*("amnesia-bench", "report", str(run_dir), "--out", str(report_dir), "--no-progress")]
    subprocess.run([*report, "--primary", args.primary], env=env, cwd=REPO, check=True, capture_output=True)
    print(f"\n### Per arm, over all groups ({args.primary} verdicts; 95% CIs clustered by task)\n")
    print(arm_table(read_csv(report_dir / "summary.csv")))
    print("\n### Paired differences over all groups (within-task sign-flip test)\n")
    print(paired_table(read_csv(report_dir / "paired.csv")))
    judged = judge_section(report_dir / "report.md")
    if judged:
        print(f"\n{judged}")
    elif args.judge:
        differences.append("the report of a judged run has no 'Judge vs rules' section")
    print(f"\nreport: {report_dir / 'report.md'}")
    return 1 if figures.failed or crashes or differences else 0


if __name__ == "__main__":
    sys.exit(main())
