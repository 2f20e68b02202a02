"""`amnesia-bench compare RUN_A RUN_B`: both runs' summaries side by side and paired differences B − A.

Pairing is by (arm, task id): the same arm name on the same task in both runs (e.g. two engine configs under
the same arm name, or two models). Differences and CIs: cluster bootstrap over the shared tasks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from reports.build import compute_tables
from reports.metrics import paired_between
from reports.stats import DEFAULT_RESAMPLES
from reports.wording import number, unit, verdict

SHOWN = ("success_rate", "stale_error_rate", "poison_error_rate", "context_tokens")


@dataclass
class CompareResult:
    table: pd.DataFrame
    markdown: str


def _fmt(value: float, metric: str) -> str:
    if pd.isna(value):
        return "–"
    return f"{value:,.0f}" if metric == "context_tokens" else f"{value * 100:.1f}%"


def compare_runs(
    run_a: Path, run_b: Path, out: Path | None = None, resamples: int = DEFAULT_RESAMPLES
) -> CompareResult:
    tables_a = compute_tables(run_a, resamples)
    tables_b = compute_tables(run_b, resamples)
    side = tables_a.summary.merge(tables_b.summary, on=["arm", "group"], suffixes=("_a", "_b"), how="outer")
    paired = paired_between(tables_a.per_task, tables_b.per_task, resamples=resamples)
    paired = paired.rename(columns={"diff": "diff_b_minus_a"})
    lines = [f"# Compare A = `{run_a}` vs B = `{run_b}`", ""]
    header = ["arm", "group", *(f"{m} A → B" for m in SHOWN)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in side.iterrows():
        cells = [row["arm"], row["group"]]
        cells += [f"{_fmt(row[f'{m}_a'], m)} → {_fmt(row[f'{m}_b'], m)}" for m in SHOWN]
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "Paired differences B − A on shared tasks (95% task-clustered bootstrap CI, sign-flip p):",
        "",
    ]
    lines += [
        "| arm | group | metric | B − A [95% CI] | p | tasks (differ) | verdict |",
        "|---|---|---|---|---|---|---|",
    ]
    for _, row in paired.iterrows():
        metric = row["metric"]
        low, high = number(row["diff_lo"], metric), number(row["diff_hi"], metric)
        diff = f"{number(row['diff_b_minus_a'], metric)} {unit(metric)} [{low}, {high}]"
        tasks = f"{int(row['tasks'])} ({int(row['tasks_differ'])})"
        judged = verdict({**row.to_dict(), "diff": row["diff_b_minus_a"]})
        cells = [row["arm"], row["group"], metric, diff, f"{row['p_value']:.3g}", tasks, judged]
        lines.append("| " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    table = side.merge(paired, on=["arm", "group"], how="left") if not paired.empty else side
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "compare.csv", index=False)
        (out / "compare.md").write_text(text, encoding="utf-8")
    return CompareResult(table, text)
