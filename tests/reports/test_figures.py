"""Figures a reader can trust: one colour per arm everywhere, and a trade-off figure that takes several
labelled runs (the sweep report's entry point)."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from PIL import Image

from reports.build import compute_tables
from reports.figures import DPI, PAD, arm_styles, save_figure, subplots
from reports.tradeoff import tradeoff_figure, tradeoff_points


def test_an_arm_keeps_its_style_and_twenty_arms_get_twenty_looks():
    """Ten tab10 colours, then the same colours with another marker and line style: no two of 20 arms look
    alike, and an arm looks the same however often the styles are made."""
    styles = arm_styles([f"arm-{i}" for i in range(20)])
    assert len({(look.color, look.marker) for look in styles.values()}) == 20
    assert len({look.color for look in styles.values()}) == 10  # the paler tab20 halves are not used
    assert arm_styles(["a", "b", "c"]) == arm_styles(["a", "b", "c"])


def test_the_tradeoff_takes_several_labelled_runs(write_run, tmp_path):
    summary = compute_tables(write_run(tmp_path / "run"), resamples=100).summary
    worse = summary.assign(stale_error_rate=summary["stale_error_rate"].fillna(0) + 0.1)
    points = tradeoff_points({"ttl exact": summary, "ttl noisy": worse})
    assert list(points["label"].unique()) == ["ttl exact", "ttl noisy"]
    assert set(points["arm"]) == {"no-memory", "full-memory", "amnesia"}
    amnesia = points[points["arm"] == "amnesia"].set_index("label")
    assert amnesia.loc["ttl noisy", "stale_error_rate"] == amnesia.loc["ttl exact", "stale_error_rate"] + 0.1
    paths = tradeoff_figure(points, tmp_path / "figures", name="sweep")
    assert [p.name for p in paths] == ["sweep.png", "sweep.svg"] and all(p.stat().st_size > 0 for p in paths)


def test_every_age_bin_is_reported_with_its_count_even_when_empty(write_run, tmp_path):
    by_age = compute_tables(write_run(tmp_path / "run"), resamples=100).stale_by_age
    assert len(by_age) == 3 * 5  # 3 arms x 5 bins, empty ones included
    empty = by_age[by_age["probes"] == 0]
    assert not empty.empty and empty["rate"].isna().all()
    assert by_age.attrs["stale_probes"] == 2 and by_age.attrs["covered"] == 2
    assert isinstance(by_age, pd.DataFrame)


@pytest.mark.parametrize("label", [10, 40, 90, 400])  # characters: the legend ends inside / past the margins
def test_a_figure_is_cropped_to_all_it_draws_however_far_its_legend_reaches(tmp_path, label):
    """The PNG is the drawn content plus the pad, as `bbox_inches="tight"` gives it, also when the legend
    beside the plot reaches past the canvas margins (the figure is then laid out the slow way); the SVG
    has the same box."""
    fig, ax = subplots(figsize=(4, 3), dpi=DPI)  # text is measured at the dpi it is drawn at
    ax.plot([0, 1], [0, 1], label="x" * label)
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0))
    tight = fig.get_tightbbox(fig.canvas.get_renderer()).padded(PAD)
    png, svg = save_figure(fig, tmp_path, "f")
    width, height = Image.open(png).size
    assert abs(width - tight.width * DPI) <= 6 and abs(height - tight.height * DPI) <= 6  # 0.05 in
    view = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', svg.read_text()).groups()
    assert abs(float(view[0]) / 72 - width / DPI) < 0.05 and abs(float(view[1]) / 72 - height / DPI) < 0.05


@pytest.mark.parametrize("width", [1.03, 1.08, 2.5, 7.77, 12.34])  # inches: canvases of fractional pixels
def test_a_figure_of_any_size_is_saved_with_its_tight_box(tmp_path, width):
    fig, ax = subplots(figsize=(width, 2.01), dpi=DPI)
    ax.set_title("a title")
    tight = fig.get_tightbbox(fig.canvas.get_renderer()).padded(PAD)
    png, _ = save_figure(fig, tmp_path, "f")
    size = Image.open(png).size
    assert abs(size[0] - tight.width * DPI) <= 6 and abs(size[1] - tight.height * DPI) <= 6


def test_the_svg_keeps_every_string_as_text(tmp_path):
    """SVG strings are text elements (searchable, read aloud), not glyph outlines: title, axis labels, tick
    labels and legend entries."""
    fig, ax = subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="amnesia (n=12)")
    ax.set_title("stale errors by age")
    ax.set_xlabel("simulated days")
    ax.set_xticks([0, 1], ["start", "end"])
    ax.legend()
    _, svg = save_figure(fig, tmp_path, "f")
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg.read_text(encoding="utf-8"))
    assert {"stale errors by age", "simulated days", "start", "end", "amnesia (n=12)"} <= set(texts)


def _made_by_pyplot(nrows=1, ncols=1, *, figsize, dpi=None, **options):
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=figsize, dpi=dpi, **options)


def test_every_figure_is_the_same_file_as_drawn_through_pyplot(write_run, tmp_path, monkeypatch):
    """`subplots` makes the figure without pyplot (no figure manager, nothing to close in a worker): the same
    files as pyplot's figures, for every figure of a report."""
    import matplotlib.pyplot as plt

    from reports import figures
    from reports.build import write_figures

    tables = compute_tables(write_run(tmp_path / "run"), resamples=100)
    names = write_figures(tables, tmp_path / "given", workers=0)
    monkeypatch.setattr(figures, "subplots", _made_by_pyplot)
    try:
        write_figures(tables, tmp_path / "theirs", workers=0)
    finally:
        plt.close("all")
    files = sorted(path.name for path in (tmp_path / "given").iterdir())
    assert len(files) == 2 * len(names) == 12
    for name in files:
        assert (tmp_path / "given" / name).read_bytes() == (tmp_path / "theirs" / name).read_bytes(), name


@given(
    st.lists(st.tuples(*[st.floats(-2, 2) | st.just(float("nan")) for _ in range(3)]), min_size=0, max_size=8)
)
def test_error_bars_are_the_distances_to_the_ci_ends_as_pandas_gives_them(rows):
    """`_yerr` works on the columns' arrays: the same distances as pandas's arithmetic and clip on the
    Series (NaN stays NaN: no bar), so the figures draw the same bars."""
    from reports.figures import _yerr

    frame = pd.DataFrame(rows, columns=["value", "lo", "hi"], dtype=float)
    expected = np.vstack(
        [(frame["value"] - frame["lo"]).clip(lower=0), (frame["hi"] - frame["value"]).clip(lower=0)]
    )
    np.testing.assert_array_equal(_yerr(frame, "value", "lo", "hi"), expected)


_TIMES = st.sampled_from([0.0, 0.5, 3600.0, 86400.0, 1e6])  # few values: calls and records share times


@given(
    st.lists(st.tuples(st.sampled_from(["b", "a", "c"]), _TIMES, st.integers(0, 10**9)), max_size=40),
    st.integers(1, 50),
)
def test_cumulative_tokens_are_pandas_sums_per_time_per_task(calls, tasks):
    """`cumulative_tokens` on the columns' arrays: per arm, in the order arms first appear, the same steps as
    pandas's groupby by time, sum and cumsum, divided by the arm's tasks (bit for bit: the figure's files
    must not change)."""
    from reports.figures import cumulative_tokens

    frame = pd.DataFrame(calls, columns=["arm", "sim_time", "prompt_tokens"])
    tasks_per_arm = pd.Series({arm: tasks + i for i, arm in enumerate(["a", "b", "c"])})
    curves = cumulative_tokens(frame, tasks_per_arm)
    expected = {
        arm: part.groupby("sim_time")["prompt_tokens"].sum().cumsum() / tasks_per_arm[arm]
        for arm, part in frame.groupby("arm", sort=False)
    }
    assert list(curves) == list(expected)
    for arm, (moments, per_task) in curves.items():
        np.testing.assert_array_equal(moments, expected[arm].index.to_numpy())
        np.testing.assert_array_equal(per_task, expected[arm].to_numpy())


_MAYBE = st.floats(0, 1) | st.just(float("nan"))


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["m-2", "m-1", None]),
            st.sampled_from(["write", "touch", "forget", "rejected"]),
            _TIMES,
            _MAYBE,  # strength
            st.sampled_from([86400.0, float("nan")]),  # ttl
            st.sampled_from(["flat", "ebbinghaus", None]),  # curve
            st.sampled_from([True, False, None]),  # pinned
            st.sampled_from(["x", "y", None]),  # content
        ),
        max_size=30,
    )
)
def test_item_records_are_the_groupby_of_the_timeline(rows):
    """`item_records` in one pass: per item, in the order items first appear (records without an item id left
    out), the first write's fields, the first forget's time and every touch, as the frame grouped by item
    and filtered by event gives them."""
    from reports.figures import WRITE_FIELDS, item_records

    columns = ["item_id", "event", "sim_time", "strength", "ttl", "curve", "pinned", "content"]
    events = pd.DataFrame(rows, columns=columns).sort_values("sim_time", kind="stable")
    items = item_records(events)
    groups = dict(list(events.groupby("item_id", sort=False)))
    assert list(items) == list(groups)
    for item_id, item in groups.items():
        writes, forgets = item[item["event"] == "write"], item[item["event"] == "forget"]
        touches = item[item["event"] == "touch"]
        if writes.empty:
            assert items[item_id].write is None
        else:
            first = writes.iloc[0]
            assert items[item_id].write.keys() == set(WRITE_FIELDS)
            for name in WRITE_FIELDS:
                got, want = items[item_id].write[name], first[name]
                assert (pd.isna(got) and pd.isna(want)) or got == want, name
        assert items[item_id].forgotten == (float(forgets["sim_time"].iloc[0]) if len(forgets) else None)
        expected = list(
            zip(touches["sim_time"].astype(float), touches["strength"].astype(float), strict=True)
        )
        np.testing.assert_array_equal(
            np.array(items[item_id].touches).reshape(-1, 2), np.array(expected).reshape(-1, 2)
        )


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["no-memory", "amnesia", "full-memory", "retrieval"]),
            st.sampled_from(["harmful", "mixed", "helpful", "all"]),
            st.integers(0, 30),
            _MAYBE,
            _MAYBE,
            _MAYBE,
        ),
        max_size=12,
        unique_by=lambda row: row[:2],
    )
)
def test_every_stale_panel_has_the_arms_in_one_order_and_enough_probes(rows):
    """`stale_panels`: a panel per group where some arm has MIN_PANEL_PROBES stale probes, each listing the
    given arms in the given order (NaN for an arm the group lacks); every other group is named with its
    probe count."""
    from reports.figures import MIN_PANEL_PROBES, STALE_COLUMNS, stale_panels

    summary = pd.DataFrame(rows, columns=["arm", "group", *STALE_COLUMNS])
    arms = ["retrieval", "amnesia", "no-memory", "full-memory"]
    panels, left_out = stale_panels(summary, arms)
    groups = list(dict.fromkeys(summary["group"]))
    assert set(panels) | {entry.split(" (")[0] for entry in left_out} == set(groups)
    for group in groups:
        part = summary[summary["group"] == group].set_index("arm").reindex(arms)[STALE_COLUMNS]
        most = part["stale_probes"].max()
        if group in panels:
            assert most >= MIN_PANEL_PROBES
            assert list(panels[group].index) == arms
            np.testing.assert_array_equal(panels[group].to_numpy(dtype=float), part.to_numpy(dtype=float))
        else:
            count = 0 if pd.isna(most) else int(most)
            assert f"{group} ({count} probe{'' if count == 1 else 's'})" in left_out


def _timeline(rows, forgotten_at=0.05, zero_at_ttl=True):
    from reports.figureinputs import Timeline

    columns = ["item_id", "event", "sim_time", "strength", "ttl", "curve", "pinned", "content"]
    events = pd.DataFrame(rows, columns=columns)
    return Timeline("amnesia", "t", events, 40 * 86400.0, 0.3, forgotten_at, 3.0, zero_at_ttl)


def test_a_forgotten_item_s_line_ends_where_its_strength_drops_and_a_kept_one_at_the_horizon():
    from reports.figures import item_curve, item_records

    day = 86400.0
    timeline = _timeline([
        ("m-1", "write", 0.0, 1.0, 10 * day, "flat", False, "expires at its ttl, swept later"),
        ("m-1", "forget", 14 * day, None, None, None, None, None),
        ("m-2", "write", 0.0, 1.0, 10 * day, "flat", False, "superseded on day 3"),
        ("m-2", "forget", 3 * day, None, None, None, None, None),
        ("m-3", "write", 0.0, 1.0, 100 * day, "ebbinghaus", False, "never forgotten"),
        ("m-3", "touch", 5 * day, 1.0, None, None, None, None),
    ])  # fmt: skip
    items = item_records(timeline.events)
    times, values, _ = item_curve(items["m-1"], timeline)
    assert times[-1] == pytest.approx(10 * day, rel=0.01) and values[-1] == 0.0  # the drop, not the sweep
    assert (values[:-1] >= 0.05).all()
    times, values, _ = item_curve(items["m-2"], timeline)
    assert times[-1] == 3 * day and values[-1] == 1.0  # forgotten while strong: ends at its forget
    times, values, touches = item_curve(items["m-3"], timeline)
    assert times[-1] == 40 * day and touches == [(5 * day, 1.0)]


def test_a_timeline_draws_at_most_eight_items_the_forgotten_first_in_write_order():
    from reports.figures import TIMELINE_ITEMS, item_records, timeline_items

    rows = [(f"m-{i:02d}", "write", float(i), 1.0, 86400.0, "flat", False, f"item {i}") for i in range(12)]
    rows += [(f"m-{i:02d}", "forget", 100.0 + i, None, None, None, None, None) for i in (3, 9, 11)]
    shown = timeline_items(item_records(_timeline(rows).events))
    assert len(shown) == TIMELINE_ITEMS == 8
    # the three forgotten ones and the first five kept, drawn in write order
    assert shown == ["m-00", "m-01", "m-02", "m-03", "m-04", "m-05", "m-09", "m-11"]


def test_labels_placed_beside_crowded_points_do_not_cover_each_other():
    """A sweep's case: two arms' paths of six points each, the points closer together than their labels
    are long: every label lands beside its point, and no two overlap once drawn."""
    from reports.figures import place_labels

    fig, ax = subplots(figsize=(7, 5), dpi=DPI)
    ax.set_xlim(-0.03, 1.03)
    ax.set_ylim(-0.03, 1.03)
    points = np.array([(0.2 + 0.03 * i, 0.4 + 0.01 * i + 0.04 * arm) for arm in range(2) for i in range(6)])
    ax.plot(points[:, 0], points[:, 1], "o")
    place_labels(ax, points, [f"p{i:03d}" for i in range(12)], ["k"] * 12, fontsize=7)
    renderer = fig.canvas.get_renderer()
    boxes = [text.get_window_extent(renderer) for text in ax.texts]
    assert len(boxes) == 12
    assert [(i, j) for i in range(12) for j in range(i) if boxes[i].overlaps(boxes[j])] == []
    anchors = ax.transData.transform(points)
    for box, (x, y) in zip(boxes, anchors, strict=True):  # beside its point: the far ring at most
        assert box.x0 - 5 * box.height <= x <= box.x1 + 5 * box.height
        assert box.y0 - 5 * box.height <= y <= box.y1 + 5 * box.height


def test_the_legend_names_arms_drawn_on_one_spot_together():
    from reports.figures import same_points

    rows = pd.DataFrame(
        {"arm": ["a", "b", "c", "d"], "x": [1.0, 2.0, 1.0, 1.0000001], "y": [0.5, 0.5, 0.5, 0.5]}
    )
    assert same_points(rows, "x", "y") == [["a", "c", "d"], ["b"]]
