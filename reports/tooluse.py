"""Tool use: how many tool calls each arm's model made (`tool_call` records: agent-managed mode, or a seed
arm's own tools with `scripted:tools` or a tool-calling model), so a model that never called a tool no longer
looks like one that used its memory tools. Kept apart from the rate tables:
tool calls are a count, not a rate with a CI."""

from __future__ import annotations

import pandas as pd

from reports.logread import RunData


def with_tool_calls(summary: pd.DataFrame, data: RunData) -> pd.DataFrame:
    """`summary` (rows per arm × group, group "all" included) with a `tool_calls` column: the tool calls the
    model made in those pairs."""
    per_task = data.tasks[["arm", "group", "tool_calls"]]
    totals = pd.concat([per_task, per_task.assign(group="all")]).groupby(["arm", "group"])["tool_calls"].sum()
    keys = list(zip(summary["arm"], summary["group"], strict=True))
    return summary.assign(tool_calls=[int(totals.get(key, 0)) for key in keys])


def tool_use_line(data: RunData) -> str:
    """One line for report.md: tool calls per arm, per probe, and how many probes were answered after at least
    one tool call in their turn."""
    parts = []
    calls_of = data.tasks.groupby("arm")["tool_calls"].sum()
    probes_of = data.probes.groupby("arm").size()  # (one groupby each, not a filter per arm)
    probes = data.probes
    used_of = (probes["tool_calls"] > 0).groupby(probes["arm"]).sum() if len(probes) else pd.Series()
    for arm in data.arms:
        calls, probes = int(calls_of.get(arm, 0)), int(probes_of.get(arm, 0))
        per_probe = calls / probes if probes else 0.0
        used = int(used_of.get(arm, 0))
        parts.append(f"`{arm}` {calls} ({per_probe:.2f} per probe; {used}/{probes} probes after a tool call)")
    lead = "Tool calls (the model called the arm's memory tools)"
    return f"{lead}: {'; '.join(parts)}."
