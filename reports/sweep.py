"""The report across the points of a sweep (`amnesia-bench sweep report OUT`): one row per point and arm
with the point's settings (seed, model, grid values) beside success, stale-error and false-forgetting rates
with their 95% cluster-bootstrap CIs and context tokens — the trade-off between stale errors (over all
groups) and false forgetting (on the helpful group) read off the same runs. Points whose run is unfinished
are listed as such, never silently dropped.

Writes OUT/report/sweep.csv (tidy, one row per point × arm), OUT/report/sweep.md and the trade-off figure
across the points, OUT/report/tradeoff.png and .svg (reports.tradeoff).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from reports.logread import load_runs
from reports.markdown import fmt_ci
from reports.metrics import per_task, summarise
from tasks.errors import ReportInputError

RATES = ("success_rate", "stale_error_rate", "false_forgetting_rate")
_GROUP_OF = {"false_forgetting_rate": "helpful"}  # the other rates pool every group


def read_plan(out: Path) -> dict[str, Any]:
    """OUT/sweep.json, as `amnesia-bench sweep run` wrote it."""
    path = out / "sweep.json"
    try:
        plan = json.loads(path.read_text(encoding="utf-8"))
    except OSError:
        raise ReportInputError(f"{path}: no sweep plan here; run `amnesia-bench sweep run` first") from None
    except json.JSONDecodeError as error:
        raise ReportInputError(f"{path}: corrupt sweep plan: {error.msg}") from None
    if not isinstance(plan, dict) or not isinstance(plan.get("points"), list):
        raise ReportInputError(f"{path}: points: missing")
    return plan


def point_summaries(
    plan: dict[str, Any], out: Path, resamples: int = 1000
) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """(point id -> its arm × group summary (as summary.csv) for every finished point, the ids of points whose
    run is missing or unfinished)."""
    summaries: dict[str, pd.DataFrame] = {}
    unfinished: list[str] = []
    for point in plan["points"]:
        try:
            runs = load_runs([out / "points" / point["id"]])
        except ReportInputError:
            unfinished.append(point["id"])
            continue
        summaries[point["id"]] = summarise(per_task(runs), ["arm", "group"], resamples)
    return summaries, unfinished


def sweep_table(plan: dict[str, Any], summaries: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per finished point × arm: the point's settings, the rates with their CIs, tokens per task."""
    rows: list[dict[str, Any]] = []
    for point in plan["points"]:
        if point["id"] not in summaries:
            continue
        settings = {"point": point["id"], "seed": point["seed"], "model": point["model"], **point["options"]}
        for arm, cells in summaries[point["id"]].groupby("arm", sort=False):
            row: dict[str, Any] = {**settings, "arm": arm}
            for rate in RATES:
                cell = cells[cells["group"] == _GROUP_OF.get(rate, "all")]
                values = cell[[rate, f"{rate}_lo", f"{rate}_hi"]].iloc[0] if len(cell) else [float("nan")] * 3
                row.update(dict(zip((rate, f"{rate}_lo", f"{rate}_hi"), values, strict=True)))
            row["context_tokens"] = float(cells[cells["group"] == "all"]["context_tokens"].iloc[0])
            rows.append(row)
    return pd.DataFrame(rows)


def sweep_markdown(table: pd.DataFrame, unfinished: list[str], settings: list[str]) -> str:
    """The sweep's table as Markdown (rates in % with CIs)."""
    lines = ["# Sweep", ""]
    if len(table):
        header = [
            *settings,
            "arm",
            "success",
            "stale-error (all)",
            "false forgetting (helpful)",
            "tokens/task",
        ]
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for _, row in table.iterrows():
            cells = [str(row[name]) for name in settings] + [f"`{row['arm']}`"]
            cells += [fmt_ci(row[r], row[f"{r}_lo"], row[f"{r}_hi"]) for r in RATES]
            cells.append(f"{row['context_tokens']:.0f}")
            lines.append("| " + " | ".join(cells) + " |")
    if unfinished:
        lines += ["", f"Not reported (run missing or unfinished): {', '.join(unfinished)}."]
    return "\n".join(lines) + "\n"


def build_sweep_report(out: Path, resamples: int = 1000) -> Path:
    """Write OUT/report/sweep.csv, sweep.md and, when a point is finished, the trade-off figure across the
    points (tradeoff.png/.svg: stale-error rate against false-forgetting rate, one point per sweep point and
    arm, each arm's points joined in plan order and labelled with the point id); returns the Markdown file."""
    plan = read_plan(out)
    summaries, unfinished = point_summaries(plan, out, resamples)
    table = sweep_table(plan, summaries)
    grid_keys = list(dict.fromkeys(key for point in plan["points"] for key in point["options"]))
    settings = ["point", "seed", "model", *grid_keys]
    folder = out / "report"
    folder.mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / "sweep.csv", index=False)
    text = sweep_markdown(table, unfinished, settings)
    if summaries:
        from reports.tradeoff import tradeoff_figure, tradeoff_points  # matplotlib: only when drawing

        tradeoff_figure(tradeoff_points(summaries), folder)
        text += (
            "\n## Trade-off\n\n![Stale errors vs false forgetting across the points](tradeoff.png)\n\n"
            "One marker per point and arm (labelled with the point id; the table above gives its settings), "
            "with 95% CIs; lower-left is better on both. False forgetting counts helpful-group probes only, "
            "so its rate over all groups is the helpful group's.\n"
        )
    target = folder / "sweep.md"
    target.write_text(text, encoding="utf-8")
    return target
