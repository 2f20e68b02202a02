"""The words for a paired difference: one function, so a win, a loss and a null are worded the same way and
only from the numbers (stats.is_significant decides; the direction decides better or worse)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from reports.metrics import WORSE_DIRECTION
from reports.stats import ALPHA, MIN_TASKS, MIN_TASKS_FOR_INTERVAL, format_p

METRIC_WORDS = {
    "success_rate": "success rate",
    "stale_error_rate": "stale-error rate",
    "poison_error_rate": "poison-error rate",
    "abstention_rate": "abstention rate",
    "false_forgetting_rate": "false-forgetting rate",
    "stale_injection_rate": "stale-injection rate",
    "context_tokens": "context tokens per task",
    "injected_tokens": "injected tokens per task",
}


def number(value: float, metric: str, signed: bool = True) -> str:
    """A difference without its unit: points (×100) for rates, whole tokens for token counts."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    sign = "+" if signed else ""
    if metric.endswith("_tokens"):
        return f"{value:{sign},.0f}"
    return f"{value * 100:{sign}.1f}"


def unit(metric: str) -> str:
    return "tok" if metric.endswith("_tokens") else "pts"


def amount(value: float, metric: str, signed: bool = True) -> str:
    """A difference in its unit: points for rates, tokens for token counts."""
    shown = number(value, metric, signed)
    return shown if shown == "–" else f"{shown} {unit(metric)}"


def p_text(row: Mapping[str, Any]) -> str:
    """A paired row's p-value as printed (stats.format_p: "< 1/2001" when no random flip beat it)."""
    return format_p(row["p_value"], row.get("p_method", "exact"), int(row.get("p_resamples", 0) or 0))


def interval_text(row: Mapping[str, Any], metric: str, label: str = "") -> str:
    """'[label lo, hi]' of a paired row, or why it has none (fewer than MIN_TASKS_FOR_INTERVAL tasks)."""
    if math.isnan(row["diff_lo"]) or math.isnan(row["diff_hi"]):
        return f"[n too small: {int(row['tasks'])} tasks]"
    return f"[{label}{number(row['diff_lo'], metric)}, {number(row['diff_hi'], metric)}]"


def _why_not(row: Mapping[str, Any]) -> str:
    reasons = []
    if not row["p_value"] < ALPHA:
        reasons.append(f"p ≥ {ALPHA:g}")
    if row["tasks"] < MIN_TASKS_FOR_INTERVAL:
        reasons.append(f"{int(row['tasks'])} tasks: too few for any interval")
    elif not (row["diff_lo"] > 0 or row["diff_hi"] < 0):
        reasons.append("the CI includes 0")
    if row["tasks_differ"] < MIN_TASKS:
        reasons.append(
            f"{int(row['tasks_differ'])} of {int(row['tasks'])} tasks differ, fewer than {MIN_TASKS}"
        )
    return "; ".join(reasons) or "undefined"


def verdict(row: Mapping[str, Any]) -> str:
    """'significantly higher (better)', 'significantly lower (worse)' or 'no significant difference (why)'."""
    metric = row["metric"]
    if not row.get("significant", False):
        return f"no significant difference ({_why_not(row)})"
    higher = row["diff"] > 0
    direction = WORSE_DIRECTION.get(metric, 0)
    judged = "" if direction == 0 else (" (worse)" if (direction > 0) == higher else " (better)")
    return f"significantly {'higher' if higher else 'lower'}{judged}"


def describe_difference(row: Mapping[str, Any], first: str, second: str) -> str:
    """'`A` vs `B`, success rate: +22.2 pts [95% CI +7.4, +37.0], p = 0.003, 27 tasks (12 differ):
    significantly higher (better)' from a paired row (diff, diff_lo, diff_hi, p_value, tasks, tasks_differ,
    significant)."""
    metric = row["metric"]
    words = METRIC_WORDS.get(metric, metric)
    interval = interval_text(row, metric, "95% CI ")
    shown = p_text(row)
    p_part = f"p {shown}" if shown.startswith("<") else f"p = {shown}"
    return (
        f"`{first}` vs `{second}`, {words}: {amount(row['diff'], metric)} {interval}, "
        f"{p_part}, {int(row['tasks'])} tasks ({int(row['tasks_differ'])} differ): {verdict(row)}"
    )
