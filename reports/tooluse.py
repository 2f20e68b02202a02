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
    for arm in data.arms:
        calls = int(data.tasks.loc[data.tasks["arm"] == arm, "tool_calls"].sum())
        probes = data.probes[data.probes["arm"] == arm]
        per_probe = calls / len(probes) if len(probes) else 0.0
        used = int((probes["tool_calls"] > 0).sum()) if len(probes) else 0
        parts.append(
            f"`{arm}` {calls} ({per_probe:.2f} per probe; {used}/{len(probes)} probes after a tool call)"
        )
    lead = "Tool calls (the model called the arm's memory tools)"
    return f"{lead}: {'; '.join(parts)}."
