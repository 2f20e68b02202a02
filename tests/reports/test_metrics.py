"""Metric values against hand-computed expectations on the fixed fixture log (`write_run` in conftest.py)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reports.logread import load_runs
from reports.metrics import (
    AGE_KEYS,
    AGE_RATE,
    PAIRED_METRICS,
    RATES,
    age_counts,
    arm_pairs,
    benefit_share,
    bootstrap_tables,
    cell_rates,
    paired_frame,
    per_task,
    per_task_mechanism,
    probe_flags,
    rate_columns,
    stale_by_age,
    summarise,
)
from reports.staleness import StaleValue, Statement, stale_values


@pytest.fixture(scope="module")
def tables(write_run, tmp_path_factory):
    data = load_runs([write_run(tmp_path_factory.mktemp("run"))])
    table = per_task(data)
    return data, table, summarise(table, ["arm", "group"], resamples=200)


def _row(summary, arm, group):
    return summary[(summary["arm"] == arm) & (summary["group"] == group)].iloc[0]


def test_rates_match_hand_computed_values(tables):
    _, _, summary = tables
    assert _row(summary, "full-memory", "harmful")["stale_error_rate"] == 1.0
    assert _row(summary, "amnesia", "harmful")["stale_error_rate"] == 0.0
    assert _row(summary, "amnesia", "all")["success_rate"] == pytest.approx(4 / 5)
    assert _row(summary, "full-memory", "all")["success_rate"] == pytest.approx(3 / 5)
    assert _row(summary, "amnesia", "helpful")["false_forgetting_rate"] == pytest.approx(1 / 3)
    assert _row(summary, "no-memory", "helpful")["abstention_rate"] == 1.0
    assert _row(summary, "amnesia", "harmful")["probes"] == 2


def test_stale_injection_counts_superseded_and_expired_values(tables):
    _, table, summary = tables
    full = table[table["arm"] == "full-memory"].set_index("task_id")
    # drink: lapsang is shown at the update (2d) and at the probe (5d); freeze: shown after expiry (7d).
    assert full.loc["harmful/drink", "stale_injection_calls"] == 2
    assert full.loc["harmful/freeze", "stale_injection_calls"] == 1
    assert _row(summary, "full-memory", "harmful")["stale_injection_rate"] == pytest.approx(3 / 5)
    assert _row(summary, "amnesia", "harmful")["stale_injection_rate"] == 0.0
    assert full.loc["harmful/drink", "stale_inject_only_items"] == 1


def test_context_tokens_are_the_sum_of_prompt_tokens(tables):
    data, table, _ = tables
    expected = data.calls.groupby(["arm", "task_id"])["prompt_tokens"].sum()
    for _, row in table.iterrows():
        assert row["context_tokens"] == expected[(row["arm"], row["task_id"])]


def test_paired_difference_and_memory_benefit(tables):
    data, table, _ = tables
    rates = cell_rates(table, ["arm", "group"], resamples=200)
    paired = paired_frame(rates, arm_pairs(data.arms), resamples=200)
    row = paired[(paired["arm"] == "amnesia") & (paired["reference"] == "full-memory")]
    harmful = row[(row["group"] == "harmful") & (row["metric"] == "success_rate")].iloc[0]
    # Two tasks, both better: p = 0.5 exactly (2 of the 4 sign assignments are as extreme), not significant,
    # and two tasks are too few for any interval.
    assert harmful["diff"] == 1.0 and harmful["p_value"] == 0.5 and harmful["p_method"] == "exact"
    assert harmful["tasks_differ"] == 2 and not harmful["significant"]
    assert math.isnan(harmful["diff_lo"]) and math.isnan(harmful["diff_hi"])
    # Stale errors: only the harmful tasks list stale values, so "all" compares those two tasks alone.
    stale = row[(row["group"] == "all") & (row["metric"] == "stale_error_rate")].iloc[0]
    assert stale["diff"] == -1.0 and stale["tasks"] == 2
    benefit = benefit_share(rates, "amnesia", "full-memory", "no-memory", "helpful")
    assert benefit["full_benefit"] == 1.0 and benefit["tasks"] == 2
    assert benefit["share"] == pytest.approx(2 / 3) and benefit["share_missing"] == "n too small"


def test_a_to_b_to_a_value_is_current_again():
    task = {
        "sessions": [
            {"at": 0, "turns": [{"remember": [{"content": "Drink is lapsang.", "key": "d", "ttl": None}]}]},
            {"at": 10, "turns": [{"remember": [{"content": "Drink is oolong.", "key": "d", "ttl": None}]}]},
            {
                "at": 20,
                "turns": [{"remember": [{"content": "Drink is lapsang again.", "key": "d", "ttl": None}]}],
            },
            {"at": 30, "turns": [{"probe": {"expect": ["oolong"], "stale": ["lapsang"]}}]},
        ]
    }
    (value,) = stale_values(task)
    assert [value.out_of_date(t) for t in (5, 15, 25)] == [False, True, False]


def _out_of_date_by_definition(value: StaleValue, t: float) -> bool:
    """The module docstring's rule, read literally: asserted at or before t, and the latest related statement
    at or before t does not assert the value, or asserts it with a ttl that has run out."""
    past = [i for i, s in enumerate(value.statements) if s.at <= t]
    if not any(value.asserts[i] for i in past):
        return False
    latest = value.statements[past[-1]]
    if not value.asserts[past[-1]]:
        return True
    return latest.at + (math.inf if latest.ttl is None else latest.ttl) <= t


@settings(max_examples=200, deadline=None)
@given(
    statements=st.lists(
        st.tuples(st.integers(0, 20), st.booleans(), st.one_of(st.none(), st.integers(1, 10))), max_size=8
    ),
    t=st.integers(-1, 40),
)
def test_a_value_is_out_of_date_exactly_when_the_rule_says(statements, t):
    ordered = sorted(statements, key=lambda s: s[0])  # stale_values keeps statements in time order
    chosen = tuple(Statement(float(at), i, "x", None, ttl) for i, (at, _, ttl) in enumerate(ordered))
    value = StaleValue("x", chosen, tuple(asserts for _, asserts, _ in ordered))
    assert value.out_of_date(float(t)) == _out_of_date_by_definition(value, float(t))


def test_every_arm_is_paired_with_the_reference_arms_whatever_the_run_order():
    pairs = arm_pairs(["amnesia", "claims", "full-memory", "no-memory"])
    assert pairs == [
        ("amnesia", "no-memory"),
        ("claims", "no-memory"),
        ("full-memory", "no-memory"),
        ("amnesia", "full-memory"),
        ("claims", "full-memory"),
    ]
    assert arm_pairs(["b", "a", "c"]) == [("a", "b"), ("c", "b")]


def test_the_timeline_task_is_the_one_where_decay_forgot_the_most():
    from types import SimpleNamespace

    import pandas as pd

    from reports.figureinputs import choose_timeline_task

    rows = [
        # many events, but everything ended with the sub-agent: nothing decayed
        *[("harmful", "t/busy", "forget", "agent-disposed")] * 5,
        ("helpful", "t/decayed", "write", None),
        ("helpful", "t/decayed", "forget", "stale"),
        ("mixed", "t/other-arm", "forget", "expired"),
    ]
    memory = pd.DataFrame(rows, columns=["group", "task_id", "event", "reason"]).assign(arm="amnesia")
    memory.loc[memory["task_id"] == "t/other-arm", "arm"] = "full-memory"
    assert choose_timeline_task(SimpleNamespace(memory=memory), "amnesia") == "t/decayed"


@given(
    st.lists(
        st.tuples(
            st.sampled_from(["harmful", "mixed", None]),
            st.sampled_from(["t/b", "t/a", "t/c", None]),
            st.sampled_from(["write", "forget", "touch"]),
            st.sampled_from(["stale", "expired", "explicit", None]),
            st.sampled_from(["amnesia", "full-memory"]),
        ),
        max_size=30,
    )
)
def test_the_timeline_task_is_the_first_of_the_groupby_ranking(rows):
    """`choose_timeline_task` on the columns' codes picks the task that pandas's groupby by (task, group),
    sorted by decayed items, harmful, events and task id, puts first (None when the arm wrote and forgot
    nothing)."""
    from types import SimpleNamespace

    from reports.figureinputs import choose_timeline_task

    memory = pd.DataFrame(rows, columns=["group", "task_id", "event", "reason", "arm"])
    mine = memory[(memory["arm"] == "amnesia") & memory["event"].isin(["write", "forget"])]
    counts = (
        mine.assign(decayed=mine["reason"].isin(["stale", "expired"]))
        .groupby(["task_id", "group"])
        .agg(decayed=("decayed", "sum"), n=("event", "size"))
        .reset_index()
    )
    counts["harmful"] = counts["group"] == "harmful"
    order = counts.sort_values(
        ["decayed", "harmful", "n", "task_id"], ascending=[False, False, False, True], kind="stable"
    )
    expected = str(order.iloc[0]["task_id"]) if len(order) else None
    assert choose_timeline_task(SimpleNamespace(memory=memory), "amnesia") == expected


def test_a_named_reference_arm_is_paired_with_every_arm_not_yet_paired_with_it():
    pairs = arm_pairs(["amnesia", "amnesia-hard-ttl", "full-memory", "claims"], ["amnesia"])
    assert pairs == [
        ("amnesia", "full-memory"),
        ("amnesia-hard-ttl", "full-memory"),
        ("claims", "full-memory"),
        ("amnesia-hard-ttl", "amnesia"),
        ("claims", "amnesia"),
    ]
    assert arm_pairs(["a", "b"], ["full-memory"]) == [("b", "a")]  # a named reference that did not run


def test_tables_made_with_shared_work_are_the_tables_made_alone(write_run, tmp_path):
    """A report flags the probes once and resamples the stale-by-age counts with its other tables (the task
    weights drawn once): the same tables, to the last bit, as each made alone."""
    data = load_runs([write_run(tmp_path / "run")])
    flags = probe_flags(data.probes)
    pd.testing.assert_frame_equal(per_task(data, flags), per_task(data), check_exact=True)
    pd.testing.assert_frame_equal(per_task_mechanism(data, flags), per_task_mechanism(data), check_exact=True)
    ages = age_counts(data)
    assert not ages.counts.empty
    table = per_task(data)
    fine = bootstrap_tables(
        {
            "tasks": (table, ["model", "arm", "group", "category"], rate_columns(RATES)),
            "ages": (ages.counts, AGE_KEYS, rate_columns(AGE_RATE)),
        },
        300,
    )
    together, alone = stale_by_age(data, 300, ages=ages, fine=fine["ages"]), stale_by_age(data, 300)
    pd.testing.assert_frame_equal(together, alone, check_exact=True)
    assert together.attrs == alone.attrs
    assert not together["rate"].isna().all()


@st.composite
def _per_task_tables(draw: st.DrawFn) -> pd.DataFrame:
    """A per-task table (the counts of RATES) of a few tasks, some run by only some of three arms; counts,
    token counts or fractions, a task's denominators often the same for every arm (as when every arm
    answers the same probes)."""
    kind = draw(st.sampled_from(["counts", "tokens", "fractions"]))
    values = {"counts": st.integers(0, 3).map(float), "tokens": st.integers(0, 900).map(float),
              "fractions": st.integers(0, 500).map(lambda v: v / 7)}[kind]  # fmt: skip
    rows = []
    for task in range(draw(st.integers(1, 24))):
        group = draw(st.sampled_from(["helpful", "harmful"]))
        dens = {den: draw(values) for _, den in RATES.values()}
        for arm in draw(st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3, unique=True)):
            row = {"run": 0, "arm": arm, "task_id": f"t{task}", "group": group, "category": "c", "model": "m"}
            row.update({den: dens[den] if draw(st.booleans()) else draw(values) for den in dens})
            row.update({num: draw(values) for num, _ in RATES.values()})
            row["tasks"] = 1.0
            rows.append(row)
    return pd.DataFrame(rows)


@settings(max_examples=30, deadline=None)
@given(table=_per_task_tables(), seed=st.integers(0, 2**16))
def test_paired_rows_are_the_comparisons_of_the_tasks_both_arms_ran(table, seed):
    """Each paired row is stats.paired_difference of its cell's tasks that both arms ran (a rate bounded
    to [-1, 1], a per-task mean not), and a comparison without an observation on a side has no row."""
    from reports.stats import paired_difference

    rates = cell_rates(table, ["arm", "group"], resamples=50, seed=seed)
    pairs = [("y", "x"), ("z", "x"), ("z", "y")]
    paired = paired_frame(rates, pairs, resamples=120, seed=seed)
    wide = rates.wide
    found_rows = {(r["arm"], r["reference"], r["group"], r["metric"]): r for r in paired.to_dict("records")}
    expected = {}
    for group in wide.index.get_level_values("group").unique():
        part = wide.xs(group, level="group")
        for arm, reference in pairs:
            for metric in PAIRED_METRICS:
                num, den = RATES[metric]
                if (den, arm) not in part.columns or (den, reference) not in part.columns:
                    continue
                shared = (part[(den, arm)].notna() & part[(den, reference)].notna()).to_numpy()
                arrays = [part[(c, side)].to_numpy()[shared] for side in (arm, reference) for c in (num, den)]
                found = paired_difference(*arrays, bounded=den != "tasks", resamples=120, seed=seed)
                if found is not None:
                    expected[(arm, reference, group, metric)] = found
    assert found_rows.keys() == expected.keys()
    for key, found in expected.items():
        row = found_rows[key]
        assert (row["diff"], row["p_value"], row["p_method"], row["tasks"], row["tasks_differ"]) == (
            found.diff, found.p_value, found.p_method, found.tasks, found.tasks_differ)  # fmt: skip
        interval = [row["diff_lo"], row["diff_hi"], row["mde"]]
        assert np.array_equal(interval, [found.lo, found.hi, found.mde], equal_nan=True)


@settings(max_examples=40, deadline=None)
@given(table=_per_task_tables(), seed=st.integers(0, 2**16))
def test_a_summary_is_each_metrics_own_cis(table, seed):
    """summary_frame takes every metric's CIs in one percentile pass: the frame made metric by metric, each
    with its own percentile_ci, to the bit (dtypes and column order too)."""
    from reports.metrics import COUNTS, summary_frame
    from reports.stats import percentile_ci

    rates = cell_rates(table, ["arm", "group"], resamples=80, seed=seed)
    plain = rates.cells.copy()
    for name in rates.point:
        lo, hi = percentile_ci(rates.samples[name])
        plain[name], plain[f"{name}_lo"], plain[f"{name}_hi"] = rates.point[name], lo, hi
    for count in ("probes", *COUNTS):
        if count in plain.columns:
            plain[count] = plain[count].astype(int)
    pd.testing.assert_frame_equal(summary_frame(rates), plain, check_exact=True)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["a", "b", None]), st.sampled_from([1.0, 2.0, float("nan")]), st.booleans()
        ),
        min_size=1,
        max_size=30,
    )
)
def test_cells_are_the_keys_without_duplicates(rows):
    """_factorize takes each cell's first row by its number: the cells of drop_duplicates, in the same
    order, missing keys included."""
    from reports.metrics import _factorize

    frame = pd.DataFrame(rows, columns=["k1", "k2", "k3"]).assign(value=1.0)
    keys = ["k1", "k2", "k3"]
    codes, cells = _factorize(frame, keys)
    plain = frame[keys].drop_duplicates().reset_index(drop=True)
    pd.testing.assert_frame_equal(cells, plain, check_exact=True)
    assert codes.tolist() == frame.groupby(keys, sort=False, dropna=False).ngroup().tolist()
