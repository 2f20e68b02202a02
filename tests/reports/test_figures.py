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
from reports.figures import DPI, PAD, arm_colors, save_figure, subplots
from reports.tradeoff import tradeoff_figure, tradeoff_points


def test_an_arm_keeps_its_colour_and_twenty_arms_get_twenty_colours():
    arms = [f"arm-{i}" for i in range(20)]
    colors = arm_colors(arms)
    assert len(set(colors.values())) == 20
    assert arm_colors(["a", "b", "c"]) == arm_colors(["a", "b", "c"])


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


def _placed_by_matplotlib(ax, text, **style):
    ax.set_title(text, **style)


def _made_by_pyplot(nrows=1, ncols=1, *, figsize, dpi=None, **options):
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=figsize, dpi=dpi, **options)


@pytest.mark.parametrize(
    ("shortcut", "matplotlibs_way"),
    [("set_title", _placed_by_matplotlib), ("subplots", _made_by_pyplot)],
)
def test_every_figure_is_the_same_file_as_drawn_matplotlibs_own_way(
    write_run, tmp_path, monkeypatch, shortcut, matplotlibs_way
):
    """The figures' shortcuts give the same files as matplotlib's own way, for every figure of a report:
    `set_title` gives the title's height (matplotlib would measure the tick labels at every draw to place
    it), and `subplots` makes the figure without pyplot (no figure manager)."""
    import matplotlib.pyplot as plt

    from reports import figures, tradeoff
    from reports.build import write_figures

    tables = compute_tables(write_run(tmp_path / "run"), resamples=100)
    names = write_figures(tables, tmp_path / "given", workers=0)
    for module in (figures, tradeoff):
        monkeypatch.setattr(module, shortcut, matplotlibs_way)
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
            st.sampled_from(["harmful", "mixed", "all"]),
            st.integers(0, 300),
            _MAYBE,
            _MAYBE,
            _MAYBE,
        ),
        max_size=12,
        unique_by=lambda row: row[:2],
    )
)
def test_a_stale_panel_ranks_arms_as_the_reindexed_sorted_frame(rows):
    """`ranked_by_stale_rate` on arrays: per group, the arms ranked as the group's rows reindexed by arm and
    stably sorted by rate (no rate first) rank them, with the same numbers (NaN for a missing arm)."""
    from reports.figures import STALE_COLUMNS, ranked_by_stale_rate

    summary = pd.DataFrame(rows, columns=["arm", "group", *STALE_COLUMNS])
    arms = ["amnesia", "no-memory", "retrieval", "full-memory"]
    panels = ranked_by_stale_rate(summary, arms, ["mixed", "harmful", "all"])
    assert list(panels) == ["mixed", "harmful", "all"]
    for group, (ranked, table) in panels.items():
        part = summary[summary["group"] == group].set_index("arm").reindex(arms)
        part = part.assign(_rank=part["stale_error_rate"].fillna(-1.0)).sort_values("_rank", kind="stable")
        assert ranked == list(part.index)
        np.testing.assert_array_equal(table, part[STALE_COLUMNS].to_numpy(dtype=float).T)
