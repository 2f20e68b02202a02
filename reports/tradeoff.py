"""The trade-off figure: stale-error rate against false-forgetting rate, one point per arm (with 95% CIs),
for one run or for several labelled runs (e.g. the points of a sweep over ttl policy or ttl noise), where each
arm's points are joined in the order given so a policy's path along the frontier shows.

Public entry points: `tradeoff_points(summaries)` (tidy table) and `tradeoff_figure(points, folder)` (PNG +
SVG); a sweep report calls them with one summary.csv frame per sweep point."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from reports.figures import (
    REPORT_STYLE,
    ArmStyle,
    FigureStyle,
    arm_styles,
    error_bars,
    label_axes,
    legend_outside,
    place_labels,
    save_figure,
    styled_subplots,
)

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
    points: pd.DataFrame,
    folder: Path,
    styles: Mapping[str, ArmStyle] | None = None,
    name: str = "tradeoff",
    style: FigureStyle = REPORT_STYLE,
) -> list[Path]:
    """Stale-error rate (y) vs false-forgetting rate (x), both with 95% CIs, one marker and colour per arm;
    several labels per arm are joined in order and labelled where the labels cover nothing. Lower-left is
    better on both."""
    present = list(dict.fromkeys(points["arm"]))
    styles = dict(styles) if styles is not None else arm_styles(present)
    arms = [arm for arm in styles if arm in present]
    fig, ax = styled_subplots(style, 7, 5)
    several = points["label"].nunique() > 1
    arm_of, labels = points["arm"].to_numpy(), points["label"].to_numpy()
    x, x_lo, x_hi, y, y_lo, y_hi = points[POINT_COLUMNS[2:]].to_numpy(dtype=float).T
    xerr, yerr = error_bars(x, x_lo, x_hi), error_bars(y, y_lo, y_hi)
    for arm in arms:
        mine, look = arm_of == arm, styles[arm]
        ax.errorbar(x[mine], y[mine], xerr=xerr[:, mine], yerr=yerr[:, mine], color=look.color, capsize=3,
                    marker=look.marker, ms=5, linestyle=look.linestyle if several else "none", label=arm,
                    alpha=0.9)  # fmt: skip
    label_axes(ax, style, title="Trade-off: stale errors vs false forgetting (lower-left is better)",
               xlabel="false-forgetting rate (helpful probes answered 'abstained'; 95% CI)",
               ylabel="stale-error rate (95% CI)")  # fmt: skip
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    if several:
        spots: dict[tuple[str, float, float], list[str]] = {}  # an arm's labels of one spot, written once
        for arm, label, at_x, at_y in zip(arm_of, labels, x, y, strict=True):
            if arm in styles and not (np.isnan(at_x) or np.isnan(at_y)):
                spots.setdefault((arm, round(at_x, 6), round(at_y, 6)), []).append(str(label))
        place_labels(ax, np.array([(at_x, at_y) for _, at_x, at_y in spots]).reshape(-1, 2),
                     [", ".join(names) if len(names) < 3 else f"{names[0]} … {names[-1]} ({len(names)})"
                      for names in spots.values()],
                     [styles[arm].color for arm, _, _ in spots], fontsize=7)  # fmt: skip
    legend_outside(ax, style)
    return save_figure(fig, folder, name)
