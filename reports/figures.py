"""The report's figures (matplotlib Agg), each saved as PNG and SVG. Every function takes tidy frames from
reports.metrics (or the loaded run) and returns the paths it wrote. An arm has one colour in every figure
(`arm_colors` over the run's arm order); every bar or point says how many observations it rests on, and a cell
with none is marked rather than left blank."""

from __future__ import annotations

import io
import math
import textwrap
from collections.abc import Mapping
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
from reports.figurepool import Timeline

DAY = 86400.0


DPI = 120
PAD = 0.1  # inches of white around the drawn content (matplotlib's savefig.pad_inches)
# Inches of canvas around the figure's own box when it is drawn: a legend to the right of the plot, long tick
# labels or a title may reach past the box, and must land on the canvas to be kept. What reaches past these
# margins touches the canvas edge (everything here is anchored to a plot or to the box), and such a figure
# is laid out the slow way.
MARGINS = (1.0, 0.5, 3.5, 0.5)  # left, bottom, right, top (a figure reaching past them is laid out again)
_WHITE = np.uint32(0xFFFFFFFF)  # an opaque white RGBA pixel, whatever the byte order
# zlib level of the PNGs: 3 compresses these flat-coloured figures about as well as the default 6 (a few %
# larger) in half the time.
PNG_OPTIONS = {"compress_level": 3}


def subplots(
    nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float], dpi: float | None = None, **options: Any
) -> tuple[Figure, Any]:
    """A figure of `figsize` inches (at `dpi`, default matplotlib's) on an Agg canvas with its grid of axes,
    as `matplotlib.pyplot.subplots` makes it (`options` go to `Figure.subplots`; the same files: a test
    compares them), but held by no figure manager: pyplot's import, its figure registry and closing each
    figure cost the figure workers CPU for nothing, and a figure no longer referenced is simply freed."""
    fig = Figure(figsize=figsize, dpi=dpi)
    FigureCanvasAgg(fig)  # what pyplot attaches (the slow layout asks the canvas for its renderer)
    return fig, fig.subplots(nrows, ncols, **options)


def _content_box(fig: Figure) -> tuple[Any, np.ndarray] | None:
    """Draw `fig` once (Agg, DPI) on its box grown by MARGINS and crop to what was drawn plus PAD: the
    bounding box in inches and the cropped RGBA pixels. None when something reaches the canvas edge (it
    may be cut: the caller lays the figure out the slow way)."""
    from matplotlib.transforms import Bbox

    width, height = fig.get_size_inches()
    left, bottom, right, top = MARGINS
    canvas = Bbox.from_extents(-left, -bottom, width + right, height + top)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="rgba", dpi=DPI, bbox_inches=canvas, pad_inches=0)
    columns = int(canvas.width * DPI)  # as matplotlib sizes its canvas (truncated)
    data = np.frombuffer(buffer.getbuffer(), dtype=np.uint8)
    rows = len(data) // (4 * columns)
    if rows * columns * 4 != len(data):  # not the canvas expected: lay the figure out the slow way
        return None
    pixels = data.reshape(rows, columns, 4)
    # A pixel is drawn unless it is opaque white: its four bytes read as one word, one comparison a pixel.
    drawn = data.view(np.uint32).reshape(rows, columns) != _WHITE
    used_rows, used_columns = np.flatnonzero(drawn.any(axis=1)), np.flatnonzero(drawn.any(axis=0))
    if len(used_rows) == 0:
        return None
    first_row, last_row = int(used_rows[0]), int(used_rows[-1]) + 1
    first_column, last_column = int(used_columns[0]), int(used_columns[-1]) + 1
    if first_row == 0 or first_column == 0 or last_row == rows or last_column == columns:
        return None
    pad = round(PAD * DPI)
    top_row, bottom_row = max(first_row - pad, 0), min(last_row + pad, rows)
    left_column, right_column = max(first_column - pad, 0), min(last_column + pad, columns)
    box = Bbox.from_extents(
        canvas.x0 + left_column / DPI,
        canvas.y1 - bottom_row / DPI,
        canvas.x0 + right_column / DPI,
        canvas.y1 - top_row / DPI,
    )
    return box, pixels[top_row:bottom_row, left_column:right_column]


def save_figure(fig: Figure, folder: Path, name: str) -> list[Path]:
    """Save `fig` (made by `subplots`) as folder/name.png and .svg, cropped to what it draws (byte-identical
    across rebuilds).

    The figure is laid out and drawn once for the PNG (see `_content_box`) and once for the SVG, on the
    PNG's box: `bbox_inches="tight"` would lay it out once more for each file, each file on its own box."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.png", folder / f"{name}.svg"]
    found = _content_box(fig)
    if found is None:  # laid out once more, with matplotlib's tight box, for both files
        fig.set_dpi(DPI)
        box = fig.get_tightbbox(fig.canvas.get_renderer()).padded(PAD)
    else:
        box, pixels = found
        matplotlib.image.imsave(
            paths[0], pixels, format="png", dpi=DPI, metadata={"Software": None}, pil_kwargs=PNG_OPTIONS
        )
    # Fixed metadata, and SVG ids hashed with a fixed salt rather than a random one, keep the files
    # byte-identical across rebuilds of the same run. The SVG's strings are text elements (font family and
    # size given), not glyph outlines: each string laid out once more as paths cost about a third of the
    # SVG's time, and as text it can be searched, selected and read by a screen reader.
    with matplotlib.rc_context({"svg.hashsalt": "amnesia-bench", "svg.fonttype": "none"}):
        if found is None:
            fig.savefig(
                paths[0], dpi=DPI, metadata={"Software": None}, bbox_inches=box, pil_kwargs=PNG_OPTIONS
            )
        fig.savefig(paths[1], dpi=DPI, metadata={"Date": None}, bbox_inches=box)
    return paths


def arm_colors(arms: list[str]) -> dict[str, tuple[float, ...]]:
    """arm -> colour, by position in the run's arm order (tab10, tab20 beyond ten arms): the same arm has the
    same colour in every figure of a report."""
    palette = matplotlib.colormaps["tab10" if len(arms) <= 10 else "tab20"].colors
    return {arm: palette[i % len(palette)] for i, arm in enumerate(arms)}


def set_title(ax: Axes, text: str, **style: Any) -> None:
    """`ax`'s title, just above the plot. Its height is given: left to matplotlib, every draw measures the
    tick labels to see whether the title must move up, about a twentieth of a figure's drawing time in each
    of its two files, and it never does here: no axis has ticks on top, and a y axis's offset text (x10^k)
    sits at its top-left corner, beside these centred titles."""
    ax.set_title(text, y=1.0, **style)


def _legend_outside(ax: Axes) -> None:
    """The legend to the right of the plot, so it never hides data however many arms there are."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def error_bars(values: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """The (2, n) distances from each of `values` down to `lo` and up to `hi`, as errorbar takes them, never
    negative (a CI end past its value draws no bar; NaN stays NaN: no bar). On arrays: pandas's arithmetic
    and clip on each figure's few rows cost more than drawing their bars."""
    return np.vstack([np.clip(values - lo, 0, None), np.clip(hi - values, 0, None)])


def _yerr(frame: pd.DataFrame, value: str, lo: str, hi: str) -> np.ndarray:
    """`error_bars` of the columns `value`, `lo` and `hi` of `frame` (one bar a row)."""
    return error_bars(*(frame[name].to_numpy(dtype=float) for name in (value, lo, hi)))


STALE_COLUMNS = ["stale_probes", "stale_error_rate", "stale_error_rate_lo", "stale_error_rate_hi"]


def ranked_by_stale_rate(
    summary: pd.DataFrame, arms: list[str], groups: list[str]
) -> dict[str, tuple[list[str], np.ndarray]]:
    """group -> its panel of the stale-error figure: `arms` ranked by stale-error rate (those without a rate,
    missing from the group included, first; ties in the order of `arms`) and their STALE_COLUMNS in that
    order, one row a column (NaN for an arm the group lacks). On the columns' arrays: a frame reindexed
    and sorted per panel cost more than drawing it."""
    table = np.full((len(STALE_COLUMNS), len(summary) + 1), np.nan)  # the last column: an arm missing
    table[:, :-1] = summary[STALE_COLUMNS].to_numpy(dtype=float).T
    row_of = {key: row for row, key in enumerate(zip(summary["arm"], summary["group"], strict=True))}
    panels = {}
    for group in groups:
        rows = np.array([row_of.get((arm, group), -1) for arm in arms], dtype=int)
        rates = table[1, rows]
        order = np.argsort(np.where(np.isnan(rates), -1.0, rates), kind="stable")
        panels[group] = ([arms[i] for i in order], table[:, rows[order]])
    return panels


def stale_error_by_arm_group(summary: pd.DataFrame, folder: Path, colors: Mapping[str, tuple]) -> list[Path]:
    """Small multiples, one panel per group: arms ranked by stale-error rate, a dot with its 95% CI and the
    number of probes; an arm with no stale probes in a group is marked "no probes"."""
    groups = [
        g
        for g in dict.fromkeys(summary["group"])
        if (summary.loc[summary["group"] == g, "stale_probes"] > 0).any()
    ]
    groups = groups or ["all"]
    arms = list(dict.fromkeys(summary["arm"]))
    # Room, in inches, for each panel's arm names on its left and probe counts on its right (glyphs ~0.06 in
    # wide at these sizes), so that neither runs into the next panel, and for the two titles above.
    names = 0.06 * max(len(arm) for arm in arms) + 0.15
    counts = 0.06 * len(f"n={int(summary['stale_probes'].max())}") + 0.15
    panel, height = 3.2, 0.35 * len(arms) + 1.6
    width = names + len(groups) * panel + (len(groups) - 1) * (counts + names) + counts
    fig, axes = subplots(
        1, len(groups), figsize=(width, height), sharey=False, squeeze=False,
        gridspec_kw={"left": names / width, "right": 1 - counts / width, "wspace": (counts + names) / panel,
                     "top": 1 - 0.65 / height, "bottom": 0.55 / height},
    )  # fmt: skip
    for ax, (group, (ranked, (probes, rates, lo, hi))) in zip(
        axes[0], ranked_by_stale_rate(summary, arms, groups).items(), strict=True
    ):
        errors = error_bars(rates, lo, hi)
        for y, (arm, count) in enumerate(zip(ranked, probes, strict=True)):
            n = 0 if np.isnan(count) else int(count)
            if n == 0:
                ax.text(0.5, y, "no probes", va="center", ha="center", fontsize=7, color="grey")
                continue
            ax.errorbar([rates[y]], [y], xerr=errors[:, y : y + 1], fmt="o", color=colors[arm], capsize=3)
            ax.text(1.02, y, f"n={n}", va="center", fontsize=7, transform=ax.get_yaxis_transform())
        ax.set_yticks(range(len(ranked)), ranked, fontsize=8)
        ax.set_xlim(-0.03, 1.03)
        set_title(ax, f"group: {group}", fontsize=9)
        ax.set_xlabel("stale-error rate (95% CI)", fontsize=8)
    fig.suptitle("Stale-error rate by arm and group (probes with stale values; n = probes)")
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
    calls: pd.DataFrame, tasks_per_arm: pd.Series, folder: Path, colors: Mapping[str, tuple]
) -> list[Path]:
    """Per arm, the prompt tokens of its calls (`calls`: arm, sim_time, prompt_tokens) summed over simulated
    time, per task (`tasks_per_arm`: arm -> tasks)."""
    fig, ax = subplots(figsize=(8, 4))
    for arm, (moments, per_task) in cumulative_tokens(calls, tasks_per_arm).items():
        label = f"{arm} ({tasks_per_arm[arm]} tasks)"
        ax.step(moments / DAY, per_task, where="post", label=label, color=colors[arm])
    ax.set_xlabel("simulated time since task start (days)")
    ax.set_ylabel("cumulative prompt tokens per task")
    set_title(ax, "Cumulative context tokens over simulated time")
    _legend_outside(ax)
    return save_figure(fig, folder, "context_tokens_over_time")


def success_vs_tokens(summary: pd.DataFrame, folder: Path, colors: Mapping[str, tuple]) -> list[Path]:
    """One point per arm with 95% CIs; arms with identical numbers share one label so none hides another."""
    rows = summary[summary["group"] == "all"]
    fig, ax = subplots(figsize=(7, 4))
    tokens, success = rows["context_tokens"].to_numpy(dtype=float), rows["success_rate"].to_numpy(dtype=float)
    xerr = _yerr(rows, "context_tokens", "context_tokens_lo", "context_tokens_hi")
    yerr = _yerr(rows, "success_rate", "success_rate_lo", "success_rate_hi")
    for i, (arm, probes) in enumerate(zip(rows["arm"], rows["probes"], strict=True)):
        ax.errorbar(tokens[i], success[i], xerr=xerr[:, i : i + 1], yerr=yerr[:, i : i + 1], fmt="o",
                    capsize=3, color=colors[arm], label=f"{arm} (n={int(probes)})")  # fmt: skip
    same = rows.groupby([rows["context_tokens"].round(6), rows["success_rate"].round(6)], sort=False)["arm"]
    for (x, y), arms in same:
        if len(arms) > 1:
            ax.annotate(" = ".join(arms), (x, y), fontsize=7, xytext=(5, -10), textcoords="offset points")
    ax.set_xlabel("context tokens per task (mean, 95% CI)")
    ax.set_ylabel("success rate (95% CI)")
    ax.set_ylim(0, 1.05)
    set_title(ax, "Success vs. tokens (all groups; n = probes)")
    _legend_outside(ax)
    return save_figure(fig, folder, "success_vs_tokens")


def stale_error_vs_age(by_age: pd.DataFrame, folder: Path, colors: Mapping[str, tuple]) -> list[Path]:
    """Per arm, the rate in each age bin with its CI and probe count; an empty bin is an open marker at 0
    labelled n=0. The title says how many of the stale probes have a change time (the rest cannot be
    binned)."""
    fig, ax = subplots(figsize=(8, 4))
    labels = list(by_age["age_bin"].cat.categories) if len(by_age) else []
    arms = list(dict.fromkeys(by_age["arm"]))
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
        if full.any():
            ax.errorbar(x[full], rates[mine][full], errors[:, mine][:, full], fmt="o", capsize=3,
                        color=colors[arm], label=arm)  # fmt: skip
        ax.plot(x[~full], np.zeros((~full).sum()), "o", mfc="none", color=colors[arm])
        for xi, n in zip(x, counts, strict=True):
            ax.annotate(f"n={n}", (xi, -0.02), fontsize=6, ha="center", va="top", rotation=90)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlabel("time since the expected fact changed (open marker: no probes in that bin)")
    ax.set_ylabel("stale-error rate (95% CI)")
    ax.set_ylim(-0.15, 1.05)
    covered, total = by_age.attrs.get("covered", 0), by_age.attrs.get("stale_probes", 0)
    set_title(
        ax, f"Stale-error rate vs. time since the fact changed ({covered} of {total} stale probes per arm)"
    )
    if (by_age["probes"] > 0).any():
        _legend_outside(ax)
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


def strength_timeline(timeline: Timeline, folder: Path) -> list[Path]:
    """Each item's strength, recomputed with amnesia.decay from its write and touch records."""
    events, horizon, arm, task_id = timeline.events, timeline.horizon, timeline.arm, timeline.task_id
    stale_at, forgotten_at, k = timeline.stale_at, timeline.forgotten_at, timeline.decay_k
    zero_at_ttl = timeline.zero_at_ttl
    fig, ax = subplots(figsize=(8, 4))
    for item_id, item in item_records(events).items():
        if item.write is None:
            continue
        w = item.write
        ttl = math.inf if pd.isna(w["ttl"]) else float(w["ttl"])
        curve = CURVE_CODES.get(w["curve"], FLAT)
        pinned = bool(w["pinned"]) or math.isinf(ttl)
        end = horizon if item.forgotten is None else item.forgotten
        anchors = [(float(w["sim_time"]), float(w["strength"] if pd.notna(w["strength"]) else 1.0))]
        anchors += item.touches
        times = np.union1d(np.linspace(anchors[0][0], max(end, anchors[0][0]), 300), [a[0] for a in anchors])
        starts = np.array([a[0] for a in anchors])
        index = np.searchsorted(starts, times, side="right") - 1
        bases = np.array([a[1] for a in anchors])[index]
        values = decayed(bases, times - starts[index], ttl, curve, pinned, k, zero_at_ttl=zero_at_ttl)
        label = textwrap.fill(f"{item_id}: {w['content']}", 48)  # wrapped, never cut
        (line,) = ax.plot(times / DAY, values, label=label)
        ax.plot(
            starts[1:] / DAY, bases[np.searchsorted(times, starts[1:])], "o", color=line.get_color(), ms=4
        )
        if item.forgotten is not None:
            ax.plot([end / DAY], [values[-1]], "x", color=line.get_color(), ms=9, mew=2)
    ax.axhline(stale_at, ls="--", color="grey", lw=1, label=f"stale threshold {stale_at}")
    ax.axhline(forgotten_at, ls=":", color="black", lw=1, label=f"forgotten threshold {forgotten_at}")
    ax.set_xlabel("simulated time (days); o = touch, x = forgotten")
    ax.set_ylabel("strength")
    ax.set_ylim(-0.02, 1.05)
    set_title(ax, f"Memory strength timeline: {task_id} ({arm})")
    _legend_outside(ax)
    return save_figure(fig, folder, "strength_timeline")
