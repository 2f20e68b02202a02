"""`amnesia-bench compare RUN_A RUN_B`: both runs' summaries side by side and paired differences B − A.

Pairing is by (arm, task id): the same arm name on the same task in both runs (e.g. two engine configs under
the same arm name, or two models). Differences and CIs: cluster bootstrap over the shared tasks."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from reports.build import compute_tables
from reports.metrics import PAIRED_METRICS, RATES, with_all_group
from reports.stats import DEFAULT_RESAMPLES, paired_difference

SHOWN = ("success_rate", "stale_error_rate", "poison_error_rate", "context_tokens")


@dataclass
class CompareResult:
    table: pd.DataFrame
    markdown: str


def _paired(table_a: pd.DataFrame, table_b: pd.DataFrame, resamples: int) -> pd.DataFrame:
    key = ["arm", "group", "task_id", "run"]
    a_all = with_all_group(table_a).set_index(key)
    b_all = with_all_group(table_b).set_index(key)
    shared = a_all.index.intersection(b_all.index)
    rows = []
    for (arm, group), _ in pd.DataFrame(index=shared).groupby(level=["arm", "group"], sort=False):
        cell = [k for k in shared if k[0] == arm and k[1] == group]
        a, b = a_all.loc[cell], b_all.loc[cell]
        for metric in (*PAIRED_METRICS, "context_tokens"):
            num, den = RATES[metric]
            if a[den].sum() == 0:
                continue
            diff = paired_difference(b[num], b[den], a[num], a[den], resamples)
            rows.append({"arm": arm, "group": group, "metric": metric, "diff_b_minus_a": diff.diff,
                         "diff_lo": diff.lo, "diff_hi": diff.hi, "p_value": diff.p_value,
                         "tasks": diff.clusters})  # fmt: skip
    return pd.DataFrame(rows)


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
    paired = _paired(tables_a.per_task, tables_b.per_task, resamples)
    lines = [f"# Compare A = `{run_a}` vs B = `{run_b}`", ""]
    header = ["arm", "group", *(f"{m} A → B" for m in SHOWN)]
    lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in side.iterrows():
        cells = [row["arm"], row["group"]]
        cells += [f"{_fmt(row[f'{m}_a'], m)} → {_fmt(row[f'{m}_b'], m)}" for m in SHOWN]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Paired differences B − A on shared tasks (95% cluster-bootstrap CI, sign-flip p):", ""]
    lines += ["| arm | group | metric | B − A [95% CI] | p | tasks |", "|---|---|---|---|---|---|"]
    for _, row in paired.iterrows():
        metric = row["metric"]
        scale, unit = (1.0, " tok") if metric == "context_tokens" else (100.0, " pts")
        low, high = row["diff_lo"] * scale, row["diff_hi"] * scale
        diff = f"{row['diff_b_minus_a'] * scale:+.1f}{unit} [{low:+.1f}, {high:+.1f}]"
        lines.append(
            f"| {row['arm']} | {row['group']} | {metric} | {diff} | {row['p_value']:.3g} | {row['tasks']} |"
        )
    text = "\n".join(lines) + "\n"
    table = side.merge(paired, on=["arm", "group"], how="left") if not paired.empty else side
    if out is not None:
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        table.to_csv(out / "compare.csv", index=False)
        (out / "compare.md").write_text(text, encoding="utf-8")
    return CompareResult(table, text)
