"""The report across the points of a sweep (`amnesia-bench sweep report OUT`). A configuration is a model and
its grid values; its points differ by seed only, and their runs are pooled as repeated measures of each task
(as `report` pools several run folders of one design). One row per configuration and arm: success,
stale-error (over all groups) and false-forgetting (helpful group) rates with 95% task-clustered CIs, context
tokens per task, and on imported datasets evidence retention (reports.evidence). A shared arm (no grid
option touches it: the same runs in every configuration of its model and run settings) is one row for all
those configurations. Every arm of a configuration is paired against the reference arm with the paired
statistics of report.md (reports.metrics.paired_frame, printed by reports.markdown.paired_markdown). Points
whose run is missing or unfinished are named, never silently dropped.

Writes OUT/report/sweep.csv (tidy, one row per configuration × arm), sweep_paired.csv, sweep.md, and the
trade-off figure across the configurations, OUT/report/tradeoff.png and .svg (reports.tradeoff).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from reports.evidence import evidence_table
from reports.logread import load_runs, read_manifest
from reports.markdown import fmt_ci, paired_markdown
from reports.metrics import (
    PAIRED_METRICS,
    RATES,
    cell_rates,
    paired_frame,
    per_task,
    summary_frame,
    with_distinct_tasks,
)
from tasks.errors import ReportInputError
from tasks.logschema import is_finished

SHOWN_RATES = ("success_rate", "stale_error_rate", "false_forgetting_rate")
_GROUP_OF = {"false_forgetting_rate": "helpful"}  # the other rates pool every group
EVIDENCE = ("injected", "stored", "forgotten")  # evidence retention shares shown when the runs have them
ALL_POINTS = "all points"  # the label of a shared arm, run once for every configuration it serves


def is_run_setting(key: str) -> bool:
    """Whether a grid key is a run setting (budget, tasks) rather than an arm option (arm.option)."""
    return "." not in key


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


@dataclass
class Configuration:
    """The points of one model and grid values (they differ by seed), and what their pooled runs give."""

    id: str  # cNNN
    model: str
    options: dict[str, Any]  # grid key -> value
    points: list[str]  # its points' ids, every seed
    finished: list[str]  # those whose run is finished (pooled)
    summary: pd.DataFrame | None = None  # arm × group rates (summary.csv's columns), seeds pooled
    paired: pd.DataFrame | None = None  # arm − reference per group (paired_frame)
    evidence: pd.DataFrame | None = None  # evidence retention per arm (mechanism "all"), empty without

    @property
    def share_key(self) -> str:
        """What a shared arm's runs depend on: the model and the run settings (not the arm options)."""
        settings = {key: value for key, value in self.options.items() if is_run_setting(key)}
        return json.dumps([self.model, settings], sort_keys=True)


def is_finished_run(folder: Path) -> bool:
    """Whether a point's run folder holds every pair's finished log (tasks × arms of its manifest)."""
    try:
        manifest = read_manifest(folder)
    except ReportInputError:
        return False
    logs = [path for arm in manifest.get("arms", {}) for path in (folder / "logs" / arm).glob("*.jsonl")]
    expected = manifest.get("tasks", {}).get("count", 0) * len(manifest.get("arms", {}))
    return len(logs) == expected and all(is_finished(path) for path in logs)


def configurations(plan: dict[str, Any], out: Path) -> list[Configuration]:
    """The plan's configurations in plan order, with their finished points."""
    found: dict[str, Configuration] = {}
    for point in plan["points"]:
        key = point.get("configuration") or f"c{len(found):03d}"  # a format-1 plan: a point each
        configuration = found.setdefault(key, Configuration(key, point["model"], point["options"], [], []))
        configuration.points.append(point["id"])
        if is_finished_run(out / "points" / point["id"]):
            configuration.finished.append(point["id"])
    return list(found.values())


def measure(
    configuration: Configuration, out: Path, reference: str | None, resamples: int = 1000
) -> Configuration:
    """Pool the finished points' runs of `configuration`: its summary (one bootstrap for the rates and the
    paired differences, as report.md's tables), the arms paired against `reference`, evidence retention."""
    data = load_runs([out / "points" / point for point in configuration.finished])
    table = per_task(data)
    rates = cell_rates(table, ["arm", "group"], RATES, resamples)
    configuration.summary = with_distinct_tasks(summary_frame(rates), table)
    pairs = [(arm, reference) for arm in data.arms if reference in data.arms and arm != reference]
    configuration.paired = paired_frame(rates, pairs, PAIRED_METRICS, resamples)
    evidence = evidence_table(data, resamples)
    configuration.evidence = (
        evidence[evidence["mechanism"] == "all"].set_index("arm") if len(evidence) else pd.DataFrame()
    )
    return configuration


def _cell(frame: pd.DataFrame, arm: str, group: str, column: str) -> float:
    found = frame[(frame["arm"] == arm) & (frame["group"] == group)]
    return float(found[column].iloc[0]) if len(found) and column in found else float("nan")


def _arm_row(configuration: Configuration, arm: str) -> dict[str, Any]:
    """The rates of one arm of a measured configuration, with CIs, tasks and task runs (seeds pooled)."""
    summary = configuration.summary
    assert summary is not None and configuration.evidence is not None
    row: dict[str, Any] = {
        "arm": arm,
        "tasks": int(_cell(summary, arm, "all", "tasks")),
        "task_runs": int(_cell(summary, arm, "all", "task_runs")),
    }
    for rate in SHOWN_RATES:
        for suffix in ("", "_lo", "_hi"):
            row[rate + suffix] = _cell(summary, arm, _GROUP_OF.get(rate, "all"), rate + suffix)
    row["context_tokens"] = _cell(summary, arm, "all", "context_tokens")
    if arm in configuration.evidence.index:
        found = configuration.evidence.loc[arm]
        for state in EVIDENCE:
            for suffix in ("", "_lo", "_hi"):
                row[f"evidence_{state}{suffix}"] = float(found[state + suffix])
        row["block_tokens"] = float(found["block_tokens"])
    return row


def sweep_tables(
    measured: list[Configuration], shared_arms: list[str], grid_keys: list[str]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(one row per configuration × arm, a shared arm once per model and run settings with its arm-option
    columns reading ALL_POINTS; the paired rows, each metric on its group, a difference between two shared
    arms once too)."""
    rows: list[dict[str, Any]] = []
    paired: list[pd.DataFrame] = []
    seen: set[str] = set()  # share keys whose shared arms are listed
    for configuration in measured:
        assert configuration.summary is not None and configuration.paired is not None
        first = configuration.share_key not in seen
        seen.add(configuration.share_key)
        settings = {
            "configuration": configuration.id,
            "model": configuration.model,
            **{key: configuration.options.get(key, "") for key in grid_keys},
            "points": " ".join(configuration.finished),
            "seeds": len(configuration.finished),
        }
        for arm in dict.fromkeys(configuration.summary["arm"]):
            shared = arm in shared_arms
            if shared and not first:
                continue
            row = {**settings, "shared": shared, **_arm_row(configuration, arm)}
            if shared:  # the same runs for every value of the arm options
                row.update({key: ALL_POINTS for key in grid_keys if not is_run_setting(key)})
                row["configuration"] = ALL_POINTS
            rows.append(row)
        differences = configuration.paired
        if len(differences):
            wanted = differences["group"] == differences["metric"].map(lambda m: _GROUP_OF.get(m, "all"))
            both_shared = differences["arm"].isin(shared_arms) & differences["reference"].isin(shared_arms)
            keep = differences[wanted & (first | ~both_shared)]
            order = keep["metric"].map(PAIRED_METRICS.index)  # report.md's metric order, whatever the group
            keep = (
                keep.assign(_order=order).sort_values(["arm", "_order"], kind="stable").drop(columns="_order")
            )
            paired.append(keep.assign(configuration=configuration.id))
    table = pd.DataFrame(rows)
    return table, (pd.concat(paired, ignore_index=True) if paired else pd.DataFrame())


def sweep_markdown(
    table: pd.DataFrame,
    paired: pd.DataFrame,
    unfinished: list[str],
    grid_keys: list[str],
    shared_arms: list[str],
    reference: str | None,
) -> str:
    """The sweep's tables as Markdown (rates in % with CIs)."""
    lines = ["# Sweep", ""]
    lines.append(
        "One row per configuration (model and grid values) and arm. A configuration's seeds are pooled: "
        "`tasks` counts its distinct tasks, `task runs` the (seed, task) runs behind each rate, and every CI "
        "is the 95% task-clustered bootstrap (a task's seeds are repeated measures of it)."
    )
    if shared_arms:
        arms = ", ".join(f"`{arm}`" for arm in shared_arms)
        lines += [
            "",
            f"Shared arms: {arms}. No grid option touches them, so each ran once per seed, model and run "
            f"settings and every configuration links those runs; each is listed once, as `{ALL_POINTS}`.",
        ]
    has_evidence = "evidence_injected" in table.columns
    if len(table):
        header = ["configuration", "model", *grid_keys, "seeds", "arm", "tasks", "task runs", "success",
                  "stale-error (all)", "false forgetting (helpful)", "tokens/task"]  # fmt: skip
        if has_evidence:
            header += ["evidence injected", "stored, not injected", "forgotten", "block tokens"]
        lines += ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        for _, row in table.iterrows():
            arm = f"`{row['arm']}`" + (" (shared)" if row["shared"] else "")
            cells = [str(row[name]) for name in ("configuration", "model", *grid_keys, "seeds")]
            cells += [arm, str(row["tasks"]), str(row["task_runs"])]
            cells += [fmt_ci(row[r], row[f"{r}_lo"], row[f"{r}_hi"]) for r in SHOWN_RATES]
            cells.append(f"{row['context_tokens']:,.0f}")
            if has_evidence:
                cells += [fmt_ci(*(row[f"evidence_{s}{x}"] for x in ("", "_lo", "_hi"))) for s in EVIDENCE]
                cells.append("–" if pd.isna(row["block_tokens"]) else f"{row['block_tokens']:,.0f}")
            lines.append("| " + " | ".join(cells) + " |")
    if unfinished:
        lines += ["", f"Not reported (run missing or unfinished): {', '.join(unfinished)}."]
    if reference is not None and len(paired):
        lines += [
            "",
            f"## Paired against `{reference}`",
            "",
            "Each arm of a configuration minus the reference arm on the same tasks and seeds (success, "
            "stale-error rate and context tokens over all groups, false forgetting on the helpful group), as "
            "in report.md's paired tables: the difference with its 95% CI, the sign-flip p, the tasks whose "
            "outcome differs, `significant` by the same rule, and the minimum detectable effect.",
            "",
            paired_markdown(paired, ["configuration"]),
        ]
    elif reference is None:
        lines += ["", "No reference arm (no shared arm; `sweep report --reference ARM` pairs against one)."]
    return "\n".join(lines) + "\n"


def tradeoff_summaries(measured: list[Configuration], shared_arms: list[str]) -> dict[str, pd.DataFrame]:
    """label -> arm × group summary for the trade-off figure: a configuration's own arms under its id, each
    shared arm once, under ALL_POINTS (followed by its run settings, and model, when they vary)."""
    found: dict[str, pd.DataFrame] = {}
    several_keys = len({configuration.share_key for configuration in measured}) > 1
    several_models = len({configuration.model for configuration in measured}) > 1
    for configuration in measured:
        summary = configuration.summary
        assert summary is not None
        found[configuration.id] = summary[~summary["arm"].isin(shared_arms)]
        settings = [f"{key} {value}" for key, value in configuration.options.items() if is_run_setting(key)]
        parts = [configuration.model] * several_models + settings
        label = f"{ALL_POINTS} ({', '.join(parts)})" if several_keys else ALL_POINTS
        if label not in found:
            found[label] = summary[summary["arm"].isin(shared_arms)]
    return {label: summary for label, summary in found.items() if len(summary)}


def build_sweep_report(out: Path, resamples: int = 1000, reference: str | None = None) -> Path:
    """Write OUT/report/sweep.csv, sweep_paired.csv, sweep.md and, when a configuration has a finished point,
    the trade-off figure across the configurations (tradeoff.png/.svg: stale-error rate against
    false-forgetting rate, one marker per configuration and arm, a shared arm's once, labelled `all
    points`); returns the Markdown file. `reference`: the arm every other arm is paired against (default:
    the first shared arm, if any)."""
    plan = read_plan(out)
    shared_arms = list(plan.get("shared_arms", []))
    if reference is not None and reference not in plan.get("arms", []):
        arms = ", ".join(plan.get("arms", []))
        raise ReportInputError(f"--reference: arm {reference!r} is not in the sweep (arms: {arms})")
    reference = reference if reference is not None else (shared_arms[0] if shared_arms else None)
    every = configurations(plan, out)
    measured = [measure(c, out, reference, resamples) for c in every if c.finished]
    finished = {point for c in every for point in c.finished}
    unfinished = [point["id"] for point in plan["points"] if point["id"] not in finished]
    grid_keys = list(dict.fromkeys(key for point in plan["points"] for key in point["options"]))
    table, paired = sweep_tables(measured, shared_arms, grid_keys)
    folder = out / "report"
    folder.mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / "sweep.csv", index=False)
    paired.to_csv(folder / "sweep_paired.csv", index=False)
    text = sweep_markdown(table, paired, unfinished, grid_keys, shared_arms, reference)
    if measured:
        from reports.tradeoff import tradeoff_figure, tradeoff_points  # matplotlib: only when drawing

        tradeoff_figure(tradeoff_points(tradeoff_summaries(measured, shared_arms)), folder)
        text += (
            "\n## Trade-off\n\n![Stale errors vs false forgetting across the configurations](tradeoff.png)"
            "\n\nOne marker per configuration and arm (labelled with the configuration; the table above "
            f"gives its settings), a shared arm's once (`{ALL_POINTS}`), with 95% CIs; lower-left is better "
            "on both. False forgetting counts helpful-group probes only, so its rate over all groups is the "
            "helpful group's.\n"
        )
    target = folder / "sweep.md"
    target.write_text(text, encoding="utf-8")
    return target
