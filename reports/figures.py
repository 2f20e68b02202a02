"""The report's figures (matplotlib Agg), each saved as PNG and SVG. Every function takes tidy frames from
reports.metrics (or the loaded run) and returns the paths it wrote. An arm has one colour in every figure
(`arm_colors` over the run's arm order); every bar or point says how many observations it rests on, and a cell
with none is marked rather than left blank."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import matplotlib
import matplotlib.image
import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from amnesia.decay import CURVE_CODES, FLAT, decayed
from reports.figureinputs import Timeline

DAY = 86400.0


DPI = 120
PAD = 0.1  # inches of white around the drawn content (matplotlib's savefig.pad_inches)
# zlib level of the PNGs: 3 compresses these flat-coloured figures about as well as the default 6 (a few %
# larger) in half the time.
PNG_OPTIONS = {"compress_level": 3}


def subplots(
    nrows: int = 1,
    ncols: int = 1,
    *,
    figsize: tuple[float, float],
    dpi: float | None = None,
    layout: str | None = None,
    **options: Any,
) -> tuple[Figure, Any]:
    """A figure of `figsize` inches (at `dpi`, default matplotlib's) on an Agg canvas with its grid of axes,
    as `matplotlib.pyplot.subplots` makes it (`layout`: its layout engine; `options` go to `Figure.subplots`;
    the same files: a test
    compares them), but held by no figure manager: pyplot's import, its figure registry and closing each
    figure cost the figure workers CPU for nothing, and a figure no longer referenced is simply freed."""
    fig = Figure(figsize=figsize, dpi=dpi, layout=layout)
    FigureCanvasAgg(fig)  # what pyplot attaches (the slow layout asks the canvas for its renderer)
    return fig, fig.subplots(nrows, ncols, **options)


def save_figure(fig: Figure, folder: Path, name: str) -> list[Path]:
    """Save `fig` (made by `subplots`) as folder/name.png and .svg, both cropped to what it draws (one box,
    matplotlib's tight box as drawn at DPI) and byte-identical across rebuilds of the same run."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.png", folder / f"{name}.svg"]
    fig.set_dpi(DPI)  # text is measured at the resolution it is drawn at
    box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(PAD)
    # Fixed metadata, and SVG ids hashed with a fixed salt rather than a random one, keep the files
    # byte-identical across rebuilds. The SVG's strings are text elements (font family and size given), not
    # glyph outlines: they can be searched, selected and read by a screen reader.
    with matplotlib.rc_context({"svg.hashsalt": "amnesia-bench", "svg.fonttype": "none"}):
        fig.savefig(paths[0], dpi=DPI, metadata={"Software": None}, bbox_inches=box, pil_kwargs=PNG_OPTIONS)
        fig.savefig(paths[1], dpi=DPI, metadata={"Date": None}, bbox_inches=box)
    return paths


@dataclass(frozen=True)
class ArmStyle:
    """How one arm is drawn in every figure of a report."""

    color: tuple[float, ...]  # RGB(A) from tab10, by the arm's position
    marker: str  # the marker of its points: the eleventh arm on takes the next shape, so colours may repeat
    linestyle: str  # the style of its lines, changing with the marker


MARKERS = ("o", "s", "^", "D", "v", "P")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1)), (0, (1, 1)))


def arm_styles(arms: Sequence[str]) -> dict[str, ArmStyle]:
    """arm -> its style, by position in the report's arm order: ten tab10 colours (the paler tab20 halves are
    hard to tell apart), then the same colours with the next marker and line style. The same arm has the same
    style in every figure of a report, and no two arms of one report share one (up to 60 arms)."""
    palette = matplotlib.colormaps["tab10"].colors
    return {
        arm: ArmStyle(
            palette[i % len(palette)],
            MARKERS[i // len(palette) % len(MARKERS)],
            LINESTYLES[i // len(palette) % len(LINESTYLES)],
        )
        for i, arm in enumerate(arms)
    }


@dataclass(frozen=True)
class FigureStyle:
    """How big a report's figures are drawn and in which font: the report's own, or fitted to a paper."""

    name: str
    width: float | None  # inches every figure is drawn at (a paper's column); None: each figure's own width
    font_size: float  # points of the body text; tick labels and legends are relative sizes of it
    font_family: str  # matplotlib's generic family (DejaVu Sans / Serif, shipped with matplotlib)
    legend_columns: int  # columns of a legend set below the plot (paper styles); 0: beside the plot


STYLES = {
    "report": FigureStyle("report", None, 10.0, "sans-serif", 0),
    "paper": FigureStyle("paper", 3.5, 8.0, "serif", 1),  # one column of a two-column paper
    "paper-wide": FigureStyle("paper-wide", 7.0, 8.0, "serif", 3),  # the width of both columns
}
REPORT_STYLE = STYLES["report"]


@contextmanager
def lettered(style: FigureStyle) -> Iterator[None]:
    """matplotlib's text settings for `style`, while a figure is made and saved."""
    with matplotlib.rc_context({"font.size": style.font_size, "font.family": style.font_family}):
        yield


def label_axes(ax: Axes, style: FigureStyle, *, title: str, xlabel: str, ylabel: str = "") -> None:
    """The plot's axis labels (wrapped to the column in a paper style) and its title (in the report style
    only: in a paper the caption says it)."""
    if style.width is not None:
        # a glyph is about 0.55 em wide: the characters a line of the column holds
        columns = int(style.width * 72 / (0.55 * style.font_size))
        xlabel, ylabel = textwrap.fill(xlabel, columns), textwrap.fill(ylabel, int(columns * 0.6))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if style.width is None:
        ax.set_title(title)


def styled_subplots(
    style: FigureStyle, width: float, height: float, nrows: int = 1, ncols: int = 1, **options: Any
) -> tuple[Figure, Any]:
    """`subplots` for a figure designed at `width` x `height` inches: as designed in the report style; in a
    paper style as wide as the column, its height shrunk with the width (2 inches at least), laid out by
    matplotlib's constrained layout so that the plot fills the column and a legend below it fits."""
    if style.width is None:
        return subplots(nrows, ncols, figsize=(width, height), **options)
    size = (style.width, max(2.0, height * min(1.0, style.width / width)))
    return subplots(nrows, ncols, figsize=size, layout="constrained", **options)


def legend_outside(ax: Axes, style: FigureStyle, **options: Any) -> None:
    """The legend outside the plot, so it never hides data however many entries it has: to its right, or in
    a paper style below the figure in the style's columns, the figure made taller by the legend's height."""
    if not style.legend_columns:
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", frameon=False, **options)
        return
    handles, labels = ax.get_legend_handles_labels()
    if not handles:
        return
    fig = ax.figure
    rows = math.ceil(len(labels) / style.legend_columns)
    lines = sum(label.count("\n") + 1 for label in labels) * rows / len(labels)  # text lines a column, about
    fig.set_figheight(fig.get_figheight() + (lines + 0.6 * rows + (1 if options.get("title") else 0)) * 0.12)
    fig.legend(handles, labels, loc="outside lower center", ncol=style.legend_columns, fontsize="small",
               frameon=False, **options)  # fmt: skip


def error_bars(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The (2, n) distances from each of `values` down to `lo` and up to `hi`, as errorbar takes them, never
    negative (a CI end past its value draws no bar; NaN stays NaN: no bar). On arrays: pandas's arithmetic
    and clip on each figure's few rows cost more than drawing their bars."""
    return np.vstack([np.clip(values - lo, 0, None), np.clip(hi - values, 0, None)])


def _yerr(frame: pd.DataFrame, value: str, lo: str, hi: str) -> np.ndarray:
    """`error_bars` of the columns `value`, `lo` and `hi` of `frame` (one bar a row)."""
    return error_bars(*(frame[name].to_numpy(dtype=float) for name in (value, lo, hi)))


def _overlap(a: tuple[float, float, float, float], b: tuple[float, float, float, float]) -> float:
    """The area two boxes (x0, y0, x1, y1) share."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def place_labels(
    ax: Axes, points: np.ndarray, texts: Sequence[str], colors: Sequence[Any], fontsize: float
) -> None:
    """Write each text beside its point ((n, 2) data coordinates, limits already set) where it covers the
    least of the labels already placed, of the points and of the space outside the plot: the first of
    sixteen spots around the point (two rings) that covers nothing, else the one covering least. Each label
    is measured as the renderer will draw it."""
    from matplotlib.font_manager import FontProperties

    renderer, font = ax.figure.canvas.get_renderer(), FontProperties(size=fontsize)
    scale = ax.figure.dpi / 72.0  # pixels a point
    pixels = ax.transData.transform(points)
    frame = ax.get_window_extent()
    mark = 4.0 * scale
    marks = [(x - mark, y - mark, x + mark, y + mark) for x, y in pixels]
    placed: list[tuple[float, float, float, float]] = []
    for point, (x, y), text, color in zip(points, pixels, texts, colors, strict=True):
        width, height, _ = renderer.get_text_width_height_descent(text, font, ismath=False)
        width, height = width / scale + 1, height / scale + 1  # points, a point of air around
        gap = 5.0
        right, left, centre = gap, -gap - width, -width / 2
        above, below = gap / 2, -gap / 2 - height
        ring = [(right, above), (right, below), (left, above), (left, below), (centre, gap + 2),
                (centre, -gap - 2 - height), (right, above + height), (right, below - height)]  # fmt: skip
        # then the same spots twice as far (a label a little off its point beats one on another label)
        spots = ring + [(2 * dx + width * (dx < 0), 2 * dy + height * (dy < 0)) for dx, dy in ring]
        best, best_box, best_cost = spots[0], (0.0, 0.0, 0.0, 0.0), math.inf
        for dx, dy in spots:
            box = (x + dx * scale, y + dy * scale, x + (dx + width) * scale, y + (dy + height) * scale)
            outside = (box[2] - box[0]) * (box[3] - box[1]) - _overlap(box, frame.extents)
            cost = sum(_overlap(box, other) for other in placed + marks) + outside
            if cost < best_cost:
                best, best_box, best_cost = (dx, dy), box, cost
            if cost == 0:
                break
        placed.append(best_box)
        ax.annotate(text, tuple(point), xytext=best, textcoords="offset points", ha="left", va="bottom",
                    fontsize=fontsize, color=color)  # fmt: skip


STALE_COLUMNS = ["stale_probes", "stale_error_rate", "stale_error_rate_lo", "stale_error_rate_hi"]
# A group gets a panel when one of its arms has at least this many probes with stale values: below it a 95%
# interval spans most of [0, 1] and the panel says nothing (a group left out is named under the figure).
MIN_PANEL_PROBES = 5


def stale_panels(summary: pd.DataFrame, arms: Sequence[str]) -> tuple[dict[str, pd.DataFrame], list[str]]:
    """(group -> its panel: STALE_COLUMNS of `arms` in that order, NaN where the group lacks the arm; the
    groups left out, each as "group (n probes)"), the groups in the summary's order."""
    panels, left_out = {}, []
    for group, rows in summary.groupby("group", sort=False):
        panel = rows.set_index("arm")[STALE_COLUMNS].reindex(list(arms))
        probes = int(panel["stale_probes"].max()) if panel["stale_probes"].notna().any() else 0
        if probes >= MIN_PANEL_PROBES:
            panels[group] = panel
        else:
            left_out.append(f"{group} ({probes} probe{'' if probes == 1 else 's'})")
    return panels, left_out


def stale_error_by_arm_group(
    summary: pd.DataFrame, folder: Path, styles: Mapping[str, ArmStyle], style: FigureStyle = REPORT_STYLE
) -> list[Path]:
    """Small multiples, one panel per group with enough probes (MIN_PANEL_PROBES), every panel with the arms
    in the report's order (`styles`' order): a marker with its 95% CI and the number of probes; an arm with
    no stale probes in a group is marked "no probes". Two panels a row (one in a one-column paper style)."""
    arms = list(styles)
    panels, left_out = stale_panels(summary, arms)
    if not panels:  # not one group has enough probes: the overall one, as it is, says so
        panels = {"all": summary[summary["group"] == "all"].set_index("arm")[STALE_COLUMNS].reindex(arms)}
    columns = 1 if style.width is not None and style.width < 5 else min(2, len(panels))
    rows = math.ceil(len(panels) / columns)
    width, height = 4.0 * columns + 1.4, (0.28 * len(arms) + 0.9) * rows + 0.6
    fig, axes = styled_subplots(style, width, height, rows, columns, sharex=True, sharey=True, squeeze=False)
    # a grid of two columns may have a spare axes
    for ax, (group, panel) in zip(axes.flat, panels.items(), strict=False):
        probes, rates, lo, hi = panel.to_numpy(dtype=float).T
        errors = error_bars(rates, lo, hi)
        for y, arm in enumerate(arms):
            if np.isnan(probes[y]) or probes[y] == 0:
                ax.text(0.5, y, "no probes", va="center", ha="center", fontsize="x-small", color="grey")
                continue
            look = styles[arm]
            ax.errorbar([rates[y]], [y], xerr=errors[:, y : y + 1], fmt=look.marker, color=look.color,
                        capsize=2, ms=4)  # fmt: skip
            ax.text(1.03, y, f"n={int(probes[y])}", va="center", fontsize="x-small",
                    transform=ax.get_yaxis_transform())  # fmt: skip
        ax.set_title(f"group: {group}", fontsize="small")
    for ax in axes.flat[len(panels) :]:
        ax.set_visible(False)
    axes[0, 0].set_yticks(range(len(arms)), arms)
    for ax in axes.flat:
        ax.tick_params(labelsize="small")
    axes[0, 0].set_ylim(len(arms) - 0.5, -0.5)  # the first arm on top, as the legend of other figures reads
    axes[0, 0].set_xlim(-0.03, 1.03)
    for position, ax in enumerate(axes.flat[: len(panels)]):
        if position + columns >= len(panels):  # nothing below it: its column's x axis is read here
            ax.xaxis.set_tick_params(labelbottom=True)
            ax.set_xlabel("stale-error rate (95% CI)", fontsize="small")
    note = f"No panel (fewer than {MIN_PANEL_PROBES} probes): {', '.join(left_out)}." if left_out else ""
    if style.width is None:
        fig.suptitle("Stale-error rate by arm and group (n = probes with stale values)", fontsize="medium")
    if note:
        fig.text(0.5, 0.0, note, ha="center", va="top", fontsize="x-small", color="grey")
    if style.width is None:
        fig.tight_layout(w_pad=2.5)
    return save_figure(fig, folder, "stale_error_by_arm_group")


def cumulative_tokens(
    calls: pd.DataFrame, tasks_per_arm: pd.Series
) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """arm -> (each distinct simulated time of its calls, in order; the prompt tokens of its calls up to that
    time, per task), the arms in the order they first appear in `calls` (arm, sim_time, prompt_tokens). On
    the columns' arrays: pandas's groupby, sort and cumsum cost more than drawing the steps. Token counts
    are integers, so their sums as floats are exact, as pandas's integer sums are."""
    codes, arms = pd.factorize(calls["arm"], sort=False)
    times, tokens = calls["sim_time"].to_numpy(dtype=float), calls["prompt_tokens"].to_numpy(dtype=float)
    curves = {}
    for code, arm in enumerate(arms):
        mine = codes == code
        moments, at = np.unique(times[mine], return_inverse=True)
        curves[arm] = (moments, np.cumsum(np.bincount(at, weights=tokens[mine])) / tasks_per_arm[arm])
    return curves


def context_tokens_over_time(
    calls: pd.DataFrame,
    tasks_per_arm: pd.Series,
    folder: Path,
    styles: Mapping[str, ArmStyle],
    style: FigureStyle = REPORT_STYLE,
) -> list[Path]:
    """Per arm, the prompt tokens of its calls (`calls`: arm, sim_time, prompt_tokens) summed over simulated
    time, per task (`tasks_per_arm`: arm -> tasks)."""
    fig, ax = styled_subplots(style, 8, 4)
    curves = cumulative_tokens(calls, tasks_per_arm)
    for arm in [arm for arm in styles if arm in curves]:
        moments, per_task = curves[arm]
        look = styles[arm]
        ax.step(moments / DAY, per_task, where="post", label=f"{arm} ({tasks_per_arm[arm]} tasks)",
                color=look.color, linestyle=look.linestyle)  # fmt: skip
    label_axes(ax, style, title="Cumulative context tokens over simulated time",
               xlabel="simulated time since task start (days)",
               ylabel="cumulative prompt tokens per task")  # fmt: skip
    legend_outside(ax, style)
    return save_figure(fig, folder, "context_tokens_over_time")


def same_points(rows: pd.DataFrame, x: str, y: str) -> list[list[str]]:
    """The arms of `rows` grouped by identical (x, y) (to 6 decimals), in first-appearance order: arms drawn
    on one spot, which the legend names together so that none hides another."""
    spots: dict[tuple[float, float], list[str]] = {}
    for arm, at_x, at_y in zip(rows["arm"], rows[x].round(6), rows[y].round(6), strict=True):
        spots.setdefault((at_x, at_y), []).append(arm)
    return list(spots.values())


def success_vs_tokens(
    summary: pd.DataFrame, folder: Path, styles: Mapping[str, ArmStyle], style: FigureStyle = REPORT_STYLE
) -> list[Path]:
    """One marker per arm with 95% CIs; arms with identical numbers are drawn once and named together in the
    legend ("a = b"), so no point hides another unannounced."""
    rows = summary[summary["group"] == "all"].set_index("arm")
    rows = rows.loc[[arm for arm in styles if arm in rows.index]].reset_index()
    fig, ax = styled_subplots(style, 7, 4)
    at = {arm: i for i, arm in enumerate(rows["arm"])}
    tokens, success = rows["context_tokens"].to_numpy(dtype=float), rows["success_rate"].to_numpy(dtype=float)
    xerr = _yerr(rows, "context_tokens", "context_tokens_lo", "context_tokens_hi")
    yerr = _yerr(rows, "success_rate", "success_rate_lo", "success_rate_hi")
    for arms in same_points(rows, "context_tokens", "success_rate"):
        i, look = at[arms[0]], styles[arms[0]]
        label = f"{' = '.join(arms)} (n={int(rows['probes'].iloc[i])})"
        ax.errorbar(tokens[i], success[i], xerr=xerr[:, i : i + 1], yerr=yerr[:, i : i + 1], fmt=look.marker,
                    capsize=3, ms=5, color=look.color, label=label)  # fmt: skip
    label_axes(ax, style, title="Success vs. tokens (all groups; n = probes)",
               xlabel="context tokens per task (mean, 95% CI)", ylabel="success rate (95% CI)")  # fmt: skip
    ax.set_ylim(0, 1.05)
    legend_outside(ax, style)
    return save_figure(fig, folder, "success_vs_tokens")


def stale_error_vs_age(
    by_age: pd.DataFrame, folder: Path, styles: Mapping[str, ArmStyle], style: FigureStyle = REPORT_STYLE
) -> list[Path]:
    """Per arm, the rate in each age bin with its CI and probe count; an empty bin is an open marker at 0
    labelled n=0. The title says how many of the stale probes have a change time (the rest cannot be
    binned)."""
    fig, ax = styled_subplots(style, 8, 4)
    labels = list(by_age["age_bin"].cat.categories) if len(by_age) else []
    arms = [arm for arm in styles if arm in set(by_age["arm"])]
    width = 0.6 / max(len(arms), 1)
    # On the columns' arrays (a frame filtered per arm cost more than drawing its points); a bin's position
    # on the x axis is its category's
    arm_of, probes = by_age["arm"].to_numpy(), by_age["probes"].to_numpy()
    bins = by_age["age_bin"].cat.codes.to_numpy(dtype=float) if len(by_age) else np.zeros(0)
    rates, errors = by_age["rate"].to_numpy(dtype=float), _yerr(by_age, "rate", "lo", "hi")
    for i, arm in enumerate(arms):
        mine = arm_of == arm
        x, counts = bins[mine] + (i - (len(arms) - 1) / 2) * width, probes[mine]
        full = counts > 0
        look = styles[arm]
        if full.any():
            ax.errorbar(x[full], rates[mine][full], errors[:, mine][:, full], fmt=look.marker, capsize=3,
                        ms=4, color=look.color, label=arm)  # fmt: skip
        ax.plot(x[~full], np.zeros((~full).sum()), look.marker, mfc="none", ms=4, color=look.color)
        for xi, n in zip(x, counts, strict=True):
            ax.annotate(f"n={n}", (xi, -0.02), fontsize="xx-small", ha="center", va="top", rotation=90)
    covered, total = by_age.attrs.get("covered", 0), by_age.attrs.get("stale_probes", 0)
    title = f"Stale-error rate vs. time since the fact changed ({covered} of {total} stale probes per arm)"
    label_axes(ax, style, title=title,
               xlabel="time since the expected fact changed (open marker: no probes in that bin)",
               ylabel="stale-error rate (95% CI)")  # fmt: skip
    ax.set_xticks(range(len(labels)), labels)
    ax.set_ylim(-0.15, 1.05)
    if (by_age["probes"] > 0).any():
        legend_outside(ax, style)
    return save_figure(fig, folder, "stale_error_vs_age")


@dataclass
class ItemRecords:
    """What the strength timeline draws of one item: its records by event."""

    write: dict[str, Any] | None = None  # the item's first write record (WRITE_FIELDS), None if it has none
    forgotten: float | None = None  # the simulated time of its first forget, None if never forgotten
    touches: list[tuple[float, float]] = field(default_factory=list)  # (time, strength) of each touch


# What the strength timeline reads of an item's write record
WRITE_FIELDS = ("sim_time", "strength", "ttl", "curve", "pinned", "content")


def item_records(events: pd.DataFrame) -> dict[Any, ItemRecords]:
    """item id -> its records, in the order items first appear in `events` (records without an item id left
    out, as pandas's groupby leaves them). One pass over the rows' values: a frame filtered by event three
    times an item cost more than drawing the item."""
    items: dict[Any, ItemRecords] = {}
    columns = [events[name].to_numpy() for name in ("item_id", "event", *WRITE_FIELDS)]
    for item_id, event, *values in zip(*columns, strict=True):
        if pd.isna(item_id):
            continue
        item = items.setdefault(item_id, ItemRecords())
        if event == "write" and item.write is None:
            item.write = dict(zip(WRITE_FIELDS, values, strict=True))
        elif event == "forget" and item.forgotten is None:
            item.forgotten = float(values[0])
        elif event == "touch":
            item.touches.append((float(values[0]), float(values[1])))
    return items


# Items a strength timeline draws at most (an imported conversation has hundreds): those forgotten first,
# then the others, in the order they were written; the legend says how many more there were.
TIMELINE_ITEMS = 8
TIMELINE_WIDTHS = (3.0, 2.4, 1.8, 1.2)  # drawn first, drawn widest: a line on top of another leaves it seen


def timeline_items(items: Mapping[Any, ItemRecords]) -> list[Any]:
    """The ids of the items a strength timeline draws (TIMELINE_ITEMS at most): the written ones, forgotten
    first, each kind in write order."""
    written = [item_id for item_id, item in items.items() if item.write is not None]
    forgotten = [item_id for item_id in written if items[item_id].forgotten is not None]
    kept = [item_id for item_id in written if items[item_id].forgotten is None]
    chosen = set((forgotten + kept)[:TIMELINE_ITEMS])
    return [item_id for item_id in written if item_id in chosen]


def item_curve(
    item: ItemRecords, timeline: Timeline
) -> tuple[np.ndarray, np.ndarray, list[tuple[float, float]]]:
    """(times, strengths, touches drawn) of one written item: its strength recomputed with amnesia.decay from
    its write and touch records, from its write up to the horizon, or, when it was forgotten, up to the
    first of its forget record and the first moment its strength is below the forgotten threshold (where
    the engine forgets it; a sweep may record it later), that last point included."""
    w = item.write
    assert w is not None
    ttl = math.inf if pd.isna(w["ttl"]) else float(w["ttl"])
    curve = CURVE_CODES.get(w["curve"], FLAT)
    pinned = bool(w["pinned"]) or math.isinf(ttl)
    end = timeline.horizon if item.forgotten is None else item.forgotten
    anchors = [(float(w["sim_time"]), float(w["strength"] if pd.notna(w["strength"]) else 1.0))]
    anchors += item.touches
    times = np.union1d(np.linspace(anchors[0][0], max(end, anchors[0][0]), 300), [a[0] for a in anchors])
    starts = np.array([a[0] for a in anchors])
    index = np.searchsorted(starts, times, side="right") - 1
    bases = np.array([a[1] for a in anchors])[index]
    values = decayed(bases, times - starts[index], ttl, curve, pinned, timeline.decay_k,
                     zero_at_ttl=timeline.zero_at_ttl)  # fmt: skip
    if item.forgotten is not None:
        below = np.flatnonzero(values < timeline.forgotten_at)
        last = int(below[0]) if len(below) else len(times) - 1
        times, values = times[: last + 1], values[: last + 1]
    touches = [(t, v) for t, v in item.touches if t <= times[-1]]
    return times, values, touches


def strength_timeline(timeline: Timeline, folder: Path, style: FigureStyle = REPORT_STYLE) -> list[Path]:
    """Each item's strength, recomputed with amnesia.decay from its write and touch records, up to where it
    was forgotten: the x marks the first of its forget record and the moment its strength fell below the
    forgotten threshold (the engine forgets it there; a sweep may record it later). Lines that coincide stay
    visible: each is drawn narrower than the one before, in its own dash pattern."""
    stale_at, forgotten_at = timeline.stale_at, timeline.forgotten_at
    fig, ax = styled_subplots(style, 8, 4)
    items = item_records(timeline.events)
    shown = timeline_items(items)
    palette = matplotlib.colormaps["tab10"].colors
    for position, item_id in enumerate(shown):
        item = items[item_id]
        w = item.write
        assert w is not None  # timeline_items keeps written items only
        times, values, touches = item_curve(item, timeline)
        label = textwrap.fill(f"{item_id}: {w['content']}", 40 if style.width else 48)  # wrapped, never cut
        color = palette[position % len(palette)]
        ax.plot(times / DAY, values, label=label, color=color, lw=TIMELINE_WIDTHS[position % 4],
                linestyle=LINESTYLES[position % len(LINESTYLES)], solid_capstyle="butt")  # fmt: skip
        ax.plot([t / DAY for t, _ in touches], [v for _, v in touches], "o", color=color, ms=4)
        if item.forgotten is not None:
            ax.plot([times[-1] / DAY], [values[-1]], "x", color=color, ms=9, mew=2)
    ax.axhline(stale_at, ls="--", color="grey", lw=1, label=f"stale threshold {stale_at}")
    ax.axhline(forgotten_at, ls=":", color="black", lw=1, label=f"forgotten threshold {forgotten_at}")
    label_axes(ax, style, title=f"Memory strength timeline: {timeline.task_id} ({timeline.arm})",
               xlabel="simulated time (days); o = touch, x = forgotten", ylabel="strength")  # fmt: skip
    ax.set_ylim(-0.02, 1.05)
    hidden = sum(item.write is not None for item in items.values()) - len(shown)
    title = f"{len(shown)} of {len(shown) + hidden} items (forgotten first)" if hidden else None
    legend_outside(ax, style, title=title, title_fontsize="small")
    return save_figure(fig, folder, "strength_timeline")
