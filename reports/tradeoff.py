"""The trade-off figure: stale-error rate against false-forgetting rate, one point per arm (with 95% CIs),
for one run or for several labelled runs (e.g. the points of a sweep over ttl policy or ttl noise), where each
arm's points are joined in the order given so a policy's path along the frontier shows.

Public entry points: `tradeoff_points(summaries)` (tidy table) and `tradeoff_figure(points, folder)` (PNG +
SVG); a sweep report calls them with one summary.csv frame per sweep point."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from reports.figures import arm_colors, error_bars, save_figure, set_title, subplots

X, Y = "false_forgetting_rate", "stale_error_rate"
POINT_COLUMNS = ["label", "arm", X, f"{X}_lo", f"{X}_hi", Y, f"{Y}_lo", f"{Y}_hi"]


def tradeoff_points(summaries: Mapping[str, pd.DataFrame], group: str = "all") -> pd.DataFrame:
    """label -> summary (rows per arm × group, as summary.csv): one row per (label, arm) with both rates and
    their CIs, taken from `group` (default all groups together), in the order given."""
    rows = []
    for label, summary in summaries.items():
        part = summary[summary["group"] == group]
        for _, row in part.iterrows():
            rows.append({"label": label, "arm": row["arm"], **{c: row[c] for c in POINT_COLUMNS[2:]}})
    return pd.DataFrame(rows, columns=POINT_COLUMNS)


def tradeoff_figure(
    points: pd.DataFrame, folder: Path, colors: Mapping[str, str] | None = None, name: str = "tradeoff"
) -> list[Path]:
    """Stale-error rate (y) vs false-forgetting rate (x), both with 95% CIs, one colour per arm; several
    labels per arm are joined in order and labelled. Lower-left is better on both."""
    arms = list(dict.fromkeys(points["arm"]))
    colors = dict(colors) if colors is not None else arm_colors(arms)
    fig, ax = subplots(figsize=(7, 5))
    several = points["label"].nunique() > 1
    # On the columns' arrays: pandas's filters and arithmetic per arm cost more than drawing its points
    arm_of, labels = points["arm"].to_numpy(), points["label"].to_numpy()
    x, x_lo, x_hi, y, y_lo, y_hi = points[POINT_COLUMNS[2:]].to_numpy(dtype=float).T
    xerr, yerr = error_bars(x, x_lo, x_hi), error_bars(y, y_lo, y_hi)
    for arm in arms:
        mine = arm_of == arm
        color = colors.get(arm, "grey")
        ax.errorbar(x[mine], y[mine], xerr=xerr[:, mine], yerr=yerr[:, mine], fmt="-o" if several else "o",
                    color=color, capsize=3, label=arm, alpha=0.9)  # fmt: skip
        if several:
            for label, at in zip(labels[mine], zip(x[mine], y[mine], strict=True), strict=True):
                ax.annotate(str(label), at, fontsize=7, xytext=(4, 4), textcoords="offset points",
                            color=color)  # fmt: skip
    ax.set_xlabel("false-forgetting rate (helpful probes answered 'abstained'; 95% CI)")
    ax.set_ylabel("stale-error rate (95% CI)")
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    set_title(ax, "Trade-off: stale errors vs false forgetting (lower-left is better)")
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)
    return save_figure(fig, folder, name)
