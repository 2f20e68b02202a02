"""`amnesia-bench compare RUN_A RUN_B`: both runs' summaries side by side and paired differences B − A.

Pairing is by (arm, task id): the same arm name on the same task in both runs (e.g. two engine configs under
the same arm name, or two models), on the tasks both runs share only (the output says how many; two runs that
share none are refused). Differences, intervals and p-values: stats.paired_difference over those tasks."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from reports.build import compute_tables
from reports.logread import read_manifest
from reports.metrics import CLUSTER, PAIRED_METRICS, paired_between, summarise, task_overlap
from reports.stats import DEFAULT_RESAMPLES
from reports.wording import interval_text, number, p_text, unit, verdict
from tasks.errors import ReportInputError

SHOWN = ("success_rate", "stale_error_rate", "poison_error_rate", "context_tokens")


@dataclass
class CompareResult:
    table: pd.DataFrame
    markdown: str


def _fmt(value: float, metric: str) -> str:
    if pd.isna(value):
        return "–"
    return f"{value:,.0f}" if metric == "context_tokens" else f"{value * 100:.1f}%"


# Manifest fields that say nothing about the configuration (when and how it was started) or only repeat it
# (the fairness shares follow from the tasks and the arms; the file list from the content hash).
_NOT_CONFIGURATION = ("format", "created_wall", "argv", "tasks.files", "fairness", "groups_left_out_by_limit")


def _flat(value: Any, prefix: str = "") -> dict[str, Any]:
    """A manifest as dotted keys -> values (lists and scalars are leaves)."""
    if not isinstance(value, dict):
        return {prefix: value}
    flat: dict[str, Any] = {}
    for key, inner in value.items():
        flat.update(_flat(inner, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def config_diff(manifest_a: dict[str, Any], manifest_b: dict[str, Any]) -> list[str]:
    """`key: A → B` for every configuration field (dotted, e.g. `arms.amnesia.config.default_curve`) that
    differs between two run manifests, in A's order then B's; a key one run lacks shows as `–`."""
    flat_a, flat_b = _flat(manifest_a), _flat(manifest_b)
    lines = []
    for key in dict.fromkeys([*flat_a, *flat_b]):
        if key.startswith(_NOT_CONFIGURATION) or flat_a.get(key) == flat_b.get(key):
            continue
        shown = [
            "–" if key not in flat else json.dumps(flat[key], ensure_ascii=False) for flat in (flat_a, flat_b)
        ]
        lines.append(f"{key}: {shown[0]} → {shown[1]}")
    return lines


def _chosen(values: list[str], wanted: Sequence[str], option: str) -> list[str]:
    """`values` narrowed to `wanted` (all when empty); a wanted value that is not there is bad input."""
    unknown = [value for value in wanted if value not in values]
    if unknown:
        raise ReportInputError(
            f"{option}: {unknown[0]!r} is not in the runs (choose from {', '.join(values)})"
        )
    return [value for value in values if not wanted or value in wanted]


def _shared(frame: pd.DataFrame, other: pd.DataFrame) -> pd.DataFrame:
    """The rows of a per-task table whose (arm, task) the other table also ran."""
    both = pd.MultiIndex.from_frame(other[["arm", CLUSTER]])
    return frame[pd.MultiIndex.from_frame(frame[["arm", CLUSTER]]).isin(both)]


def compare_runs(
    run_a: Path,
    run_b: Path,
    out: Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    arms: Sequence[str] = (),
    metrics: Sequence[str] = (),
) -> CompareResult:
    """Both runs' summaries side by side and the paired differences B − A on their shared tasks, after the
    configuration fields that differ; `arms`/`metrics` narrow the tables (all when empty). Runs without a
    shared task cannot be compared (ReportInputError)."""
    tables_a = compute_tables(run_a, resamples)
    tables_b = compute_tables(run_b, resamples)
    if not set(tables_a.per_task["task_id"]) & set(tables_b.per_task["task_id"]):
        raise ReportInputError(f"{run_b}: no task in common with {run_a}; compare runs of the same tasks")
    kept_arms = _chosen(list(dict.fromkeys([*tables_a.data.arms, *tables_b.data.arms])), arms, "--arm")
    compared = _chosen(list(dict.fromkeys([*SHOWN, *PAIRED_METRICS])), metrics, "--metric")
    shown = [metric for metric in SHOWN if metric in compared] if not metrics else compared
    overlap = task_overlap(tables_a.per_task, tables_b.per_task)
    # both sides summarised on the shared (arm, task) pairs only, as the paired differences are
    summary_a = summarise(_shared(tables_a.per_task, tables_b.per_task), ["arm", "group"], resamples)
    summary_b = summarise(_shared(tables_b.per_task, tables_a.per_task), ["arm", "group"], resamples)
    side = summary_a.merge(summary_b, on=["arm", "group"], suffixes=("_a", "_b"), how="outer")
    side = side[side["arm"].isin(kept_arms)]
    paired = paired_between(tables_a.per_task, tables_b.per_task, resamples=resamples)
    paired = paired.rename(columns={"diff": "diff_b_minus_a"})
    if not paired.empty:
        paired = paired[paired["arm"].isin(kept_arms) & paired["metric"].isin(compared)]
    lines = [f"# Compare A = `{run_a}` vs B = `{run_b}`", "", "Configuration A → B:", ""]
    differences = config_diff(read_manifest(Path(run_a)), read_manifest(Path(run_b)))
    lines += [f"- {line}" for line in differences] or ["- none (the same configuration)"]
    lines += ["", f"Paired on {overlap.words('A', 'B')}; every number below is on those tasks.", ""]
    header = ["arm", "group", *(f"{m} A → B" for m in shown)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in side.iterrows():
        cells = [row["arm"], row["group"]]
        cells += [f"{_fmt(row[f'{m}_a'], m)} → {_fmt(row[f'{m}_b'], m)}" for m in shown]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Paired differences B − A on those tasks (95% CI and p of the within-task sign-flip test):",
        "",
    ]
    lines += [
        "| arm | group | metric | B − A [95% CI] | p | tasks (differ) | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for _, row in paired.iterrows():
        metric = row["metric"]
        diff = f"{number(row['diff_b_minus_a'], metric)} {unit(metric)} {interval_text(row, metric)}"
        tasks = f"{int(row['tasks'])} ({int(row['tasks_differ'])})"
        judged = verdict({**row.to_dict(), "diff": row["diff_b_minus_a"]})
        cells = [row["arm"], row["group"], metric, diff, p_text(row), tasks, judged]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    table = side.merge(paired, on=["arm", "group"], how="left") if not paired.empty else side
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "compare.csv", index=False)
        (out / "compare.md").write_text(text, encoding="utf-8")
    return CompareResult(table, text)
