"""Metrics from a loaded run: per-task counts, then rates per cell (arm × group, × category, × mechanism,
× model) with task-clustered CIs, and paired differences between arms on the same tasks.

Each rate is a ratio of per-task sums (see RATES); per-task means (tokens, steps, wall time) use a denominator
of one per task. Group "all" pools every group. A task is the cluster: the seeds, epochs and models that ran
it are repeated measures of it. Every cell's CI and every paired difference of one table come from one pass of
the bootstrap (`CellRates`), since a task gets the same bootstrap weight in every cell.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import sparse

from reports.logread import RunData
from reports.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_column_sums,
    cluster_keys,
    paired_difference,
    percentile_ci,
    ratio,
    ratio_interval,
)
from tasks.exposure import KINDS
from tasks.failures import FAILURE_CODES, INVALIDATED_CODES, failure_code

CLUSTER = "task_id"
# failure code -> the per-task count of probes that got it (`tasks.failures`)
FAILURE_COUNTS = {code: "failures_" + code.replace("-", "_") for code in FAILURE_CODES}
# failure code -> its rate: probes with that code / probes
FAILURE_RATES: dict[str, tuple[str, str]] = {
    code.replace("-", "_") + "_failure_rate": (count, "probes") for code, count in FAILURE_COUNTS.items()
}
# metric -> (numerator column, denominator column) of the per-task table
RATES: dict[str, tuple[str, str]] = {
    "success_rate": ("correct", "probes"),
    # (correct - answers that relied on invalidated memory) / probes: docs/reports.md
    "forgetting_aware_success": ("forgetting_aware_score", "probes"),
    "stale_error_rate": ("stale_errors", "stale_probes"),
    "poison_error_rate": ("poison_errors", "poison_probes"),
    "abstention_rate": ("abstained", "probes"),
    "false_forgetting_rate": ("false_forgets", "ff_eligible"),
    "stale_injection_rate": ("stale_injection_calls", "model_calls"),
    "expected_exposed_rate": ("expected_exposed", "expect_probes"),
    "stale_exposed_rate": ("stale_exposed", "stale_exposure_probes"),
    "poison_exposed_rate": ("poison_exposed", "poison_exposure_probes"),
    "context_tokens": ("context_tokens", "tasks"),
    "injected_tokens": ("injected_tokens", "tasks"),
    "steps": ("model_calls", "tasks"),
    "wall_seconds": ("wall_seconds", "tasks"),
    **FAILURE_RATES,
}
# The rates a probe decides on its own (the only ones a per-mechanism breakdown can give).
PROBE_RATES = (
    "success_rate",
    "forgetting_aware_success",
    "stale_error_rate",
    "poison_error_rate",
    "abstention_rate",
    "false_forgetting_rate",
    "expected_exposed_rate",
    "stale_exposed_rate",
    "poison_exposed_rate",
)
# The model-free level: what reached the prompt at a probe (tasks.exposure), whichever model then answers.
EXPOSURE_RATES = ("expected_exposed_rate", "stale_exposed_rate", "poison_exposed_rate")
COUNTS = ["tasks", "probes", "expect_probes", "stale_probes", "poison_probes", "ff_eligible", "model_calls",
          "inject_only_items", "stale_inject_only_items"]  # fmt: skip
# Metrics compared between arms (and between runs by `compare` and `check`).
PAIRED_METRICS = (
    "success_rate",
    "stale_error_rate",
    "poison_error_rate",
    "false_forgetting_rate",
    "context_tokens",
)
# +1: an increase is a worsening (errors, forgetting, tokens); -1: a decrease is (success). The gate checks
# these.
WORSE_DIRECTION = {"success_rate": -1, "stale_error_rate": 1, "poison_error_rate": 1,
                   "false_forgetting_rate": 1, "context_tokens": 1}  # fmt: skip
# Binary per-probe outcome of each paired probe metric, for McNemar: (rows it is defined on, event).
PROBE_EVENTS = {
    "success_rate": ("probe", "correct"),
    "stale_error_rate": ("stale_probes", "stale_errors"),
    "poison_error_rate": ("poison_probes", "poison_errors"),
    "false_forgetting_rate": ("ff_eligible", "false_forgets"),
}
AGE_BINS = (0.0, 3600.0, 86400.0, 7 * 86400.0, 30 * 86400.0, np.inf)
AGE_LABELS = ("<1h", "1h-1d", "1d-7d", "7d-30d", ">=30d")
UNLABELLED = "unlabelled"  # probes whose `mechanism` is ""


def probe_flags(probes: pd.DataFrame) -> pd.DataFrame:
    """`probes` with one boolean column per count a metric is built from (correct, stale_probes, ...). A
    probe whose exposure is unknown (`exposed` None) counts in no exposure rate."""
    cls = probes["classification"]
    has_expect, has_stale, has_poison = (
        probes[kind].apply(len) > 0
        if len(probes) and kind in probes.columns
        else pd.Series(False, probes.index)
        for kind in KINDS
    )
    exposed = probes["exposed"].tolist() if "exposed" in probes.columns else [None] * len(probes)
    dicts = [found if isinstance(found, dict) else None for found in exposed]
    known = np.array([found is not None for found in dicts], dtype=bool)
    held = {kind: np.array([bool(f and f.get(kind)) for f in dicts], dtype=bool) for kind in KINDS}
    eligible = (probes["group"] == "helpful") & ~probes["abstain"].astype(bool) if len(probes) else has_stale
    mechanisms = probes["mechanism"] if "mechanism" in probes.columns else pd.Series("", probes.index)
    # one failure_code call per distinct (mechanism, classification), not per probe
    pairs = mechanisms.fillna("").astype(str) + "\t" + cls.astype(str)
    codes = {pair: failure_code(*pair.split("\t")) for pair in pairs.unique()}
    failures = pairs.map(codes).astype(object)
    invalidated = failures.isin(INVALIDATED_CODES)
    return probes.assign(
        probe=True,
        correct=cls == "correct",
        failure=failures,
        forgetting_aware_score=(cls == "correct").astype(float) - invalidated.astype(float),
        **{count: failures == code for code, count in FAILURE_COUNTS.items()},
        stale_probes=has_stale,
        stale_errors=has_stale & (cls == "stale"),
        poison_probes=has_poison,
        poison_errors=has_poison & (cls == "poisoned"),
        abstained=cls == "abstained",
        ff_eligible=eligible,
        false_forgets=eligible & (cls == "abstained"),
        expect_probes=has_expect & known,
        expected_exposed=has_expect & known & held["expect"],
        stale_exposure_probes=has_stale & known,
        stale_exposed=has_stale & known & held["stale"],
        poison_exposure_probes=has_poison & known,
        poison_exposed=has_poison & known & held["poison"],
    )


_PROBE_COUNTS = ["correct", "forgetting_aware_score", *FAILURE_COUNTS.values(), "stale_probes",
                 "stale_errors", "poison_probes", "poison_errors", "abstained", "ff_eligible",
                 "false_forgets", "expect_probes", "expected_exposed", "stale_exposure_probes",
                 "stale_exposed", "poison_exposure_probes", "poison_exposed"]  # fmt: skip
_LABELS = ("group", "category", "lang", "model")


def _run_models(data: RunData) -> dict[int, str]:
    return {run.index: run.model for run in data.runs}


def flagged(probes: pd.DataFrame) -> pd.DataFrame:
    """`probes` with `probe_flags`'s columns: itself when it has them already (the flags are a function of
    the probe's own columns, so a report works them out once for all its tables)."""
    return probes if {"probe", *_PROBE_COUNTS} <= set(probes.columns) else probe_flags(probes)


def per_task(data: RunData, probes: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (run, arm, task) with the counts every metric is built from (and the run's model); the
    stale counts come with the tasks frame (logread.STALE_COLUMNS, worked out as the logs are read).
    `probes`: `data.probes`, maybe flagged already (`flagged`)."""
    probes = flagged(data.probes if probes is None else probes)
    key = ["run", "arm", "task_id"]
    probe_counts = probes.groupby(key)[_PROBE_COUNTS].sum()
    context = data.calls.groupby(key)["prompt_tokens"].sum().rename("context_tokens")
    injected = data.injections.groupby(key)["tokens"].sum().rename("injected_tokens")
    tasks = data.tasks.assign(model=data.tasks["run"].map(_run_models(data))).set_index(key)
    table = tasks[["group", "category", "lang", "model", "probes", "model_calls", "wall_seconds"]]
    table = table.join(probe_counts).join(context).join(tasks[["stale_injection_calls"]]).join(injected)
    table = table.join(tasks[["inject_only_items", "stale_inject_only_items"]])
    table = table.fillna({c: 0 for c in table.columns if c not in _LABELS})
    table["tasks"] = 1
    numeric = [c for c in table.columns if c not in _LABELS]
    table[numeric] = table[numeric].astype(float)
    return table.reset_index()


def per_task_mechanism(data: RunData, probes: pd.DataFrame | None = None) -> pd.DataFrame:
    """One row per (run, arm, task, mechanism) with the probe counts (probes without a mechanism label are
    `unlabelled`); only the probe rates (PROBE_RATES) are defined on it. `probes` as in `per_task`."""
    probes = flagged(data.probes if probes is None else probes)
    if "mechanism" not in probes.columns:
        probes = probes.assign(mechanism="")
    probes = probes.assign(
        mechanism=probes["mechanism"].fillna("").replace("", UNLABELLED),
        model=probes["run"].map(_run_models(data)),
    )
    key = ["run", "arm", "task_id", "group", "category", "model", "mechanism"]
    table = probes.groupby(key)[["probe", *_PROBE_COUNTS]].sum().astype(float)
    return table.rename(columns={"probe": "probes"}).assign(tasks=1.0).reset_index()


def with_all_group(table: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([table, table.assign(group="all", category="all")], ignore_index=True)


def _factorize(frame: pd.DataFrame, keys: list[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Each row's cell number and the cells (key columns), in order of first appearance."""
    if frame.empty:
        return np.array([], dtype=int), pd.DataFrame(columns=keys)
    codes = frame.groupby(keys, sort=False, dropna=False).ngroup().to_numpy()
    # each cell's first row (cells are numbered in order of first appearance): what drop_duplicates keeps,
    # without hashing the keys again
    first = np.unique(codes, return_index=True)[1]
    return codes, frame[keys].iloc[first].reset_index(drop=True)


@dataclass
class Fine:
    """Bootstrap sums of a table's count columns in its finest cells (one pass of the shared bootstrap)."""

    frame: pd.DataFrame  # the per-task table
    keys: list[str]  # the finest cell keys
    columns: list[str]  # the count columns summed
    cells: pd.DataFrame  # one row per finest cell: keys + count sums
    totals: np.ndarray  # (cells × columns) point sums
    sums: np.ndarray  # (cells × columns × resamples) resampled sums


def bootstrap_tables(
    tables: dict[str, tuple[pd.DataFrame, list[str], list[str]]],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Fine]:
    """name -> (per-task table, finest cell keys, count columns): every table's cells resampled with the same
    task weights, drawn once for all of them (one sparse matrix, one `stats.bootstrap_column_sums`)."""
    task_ids = pd.Index(
        pd.unique(np.concatenate([frame[CLUSTER].to_numpy(dtype=object) for frame, _, _ in tables.values()]))
    )
    blocks, layout = [], []
    offset = 0
    for frame, keys, columns in tables.values():
        width = len(columns)
        codes, cell_frame = _factorize(frame, keys)
        rows = np.repeat(task_ids.get_indexer(frame[CLUSTER]), width)
        cols = (np.asarray(codes)[:, None] * width + np.arange(width)[None, :]).ravel()
        values = frame[columns].to_numpy(dtype=float).ravel()
        # Zeros left out (about half the counts): a resampled sum adds weight x value over a column's
        # entries in task order, starting from +0, so a zero entry adds +0 and changes no bit of it.
        kept = values != 0
        shape = (len(task_ids), len(cell_frame) * width)
        blocks.append(sparse.csr_matrix((values[kept], (rows[kept], cols[kept])), shape=shape))
        layout.append((offset, cell_frame, codes))
        offset += shape[1]
        del rows, cols, values, kept  # not held while the next block is made
    matrix = sparse.hstack(blocks, format="csr") if blocks else sparse.csr_matrix((len(task_ids), 0))
    blocks.clear()
    totals = np.asarray(matrix.sum(axis=0)).ravel()
    # the column-major copy `bootstrap_column_sums` works on, made here: the row-major one is let go first
    matrix = matrix.tocsc()
    sums = bootstrap_column_sums(cluster_keys(task_ids), matrix, resamples, seed)
    del matrix
    found = {}
    for (name, (frame, keys, columns)), (start, cell_frame, _) in zip(tables.items(), layout, strict=True):
        width, count = len(columns), len(cell_frame)
        stop = start + count * width
        counts = [c for c in dict.fromkeys(("probes", *COUNTS)) if c in frame.columns]
        if len(frame) and counts:
            cell_frame = cell_frame.join(frame.groupby(keys, sort=False)[counts].sum(), on=keys)
        found[name] = Fine(
            frame, keys, columns, cell_frame, totals[start:stop].reshape(count, width),
            sums[start:stop].reshape(count, width, resamples),
        )  # fmt: skip
    return found


@dataclass
class CellRates:
    """Rates of every cell of a breakdown (one row of `cells` per cell) with their bootstrap resamples."""

    by: list[str]
    cells: pd.DataFrame  # the `by` columns + counts, one row per cell
    point: dict[str, np.ndarray]  # metric -> (cells,)
    samples: dict[str, np.ndarray]  # metric -> (resamples × cells)
    fine: Fine  # the finest cells the rates were coarsened from (their per-task table makes `wide`)
    all_group: bool  # whether group "all" was added

    @functools.cached_property
    def wide(self) -> pd.DataFrame:
        """Per-task sums: index (other `by` keys..., task_id), columns (count column, arm); empty without
        "arm" in `by`. Made when first asked for: only the paired tables read it (a stale-by-age table never
        does)."""
        if "arm" not in self.by:
            return pd.DataFrame()
        others = [k for k in self.by if k != "arm"]
        return _wide(self.fine.frame, others, self.fine.columns, self.all_group)

    def index(self, **cell: Any) -> int | None:
        """The position of the cell with these key values, or None."""
        mask = np.ones(len(self.cells), dtype=bool)
        for name, value in cell.items():
            mask &= (self.cells[name] == value).to_numpy()
        found = np.flatnonzero(mask)
        return int(found[0]) if len(found) else None


def coarsen(
    fine: Fine, by: list[str], metrics: dict[str, tuple[str, str]], all_group: bool = True
) -> CellRates:
    """Rates per cell of `by` (a subset of the finest keys), group "all" added when `by` has group and
    `all_group`: cells are sums of finest cells, so their resamples are sums of the finest resamples."""
    cells = fine.cells.assign(_fine=np.arange(len(fine.cells)))
    if all_group and "group" in by:
        everything = cells.assign(group="all", **({"category": "all"} if "category" in cells else {}))
        cells = pd.concat([cells, everything], ignore_index=True)
    codes, coarse_frame = _factorize(cells, by)
    mapping = sparse.csr_matrix(
        (np.ones(len(cells)), (cells["_fine"].to_numpy(dtype=int), np.asarray(codes))),
        shape=(len(fine.cells), len(coarse_frame)),
    )
    width = len(fine.columns)
    resamples = fine.sums.shape[2]
    flat = fine.sums.reshape(len(fine.cells), width * resamples)  # a view: no copy of the resamples
    sums = np.asarray(mapping.T @ flat).reshape(-1, width, resamples)  # coarse cells x columns x resamples
    totals = np.asarray(mapping.T @ fine.totals)
    position = {c: i for i, c in enumerate(fine.columns)}
    point, samples = {}, {}
    for name, (num, den) in metrics.items():
        point[name] = ratio(totals[:, position[num]], totals[:, position[den]])
        samples[name] = ratio(sums[:, position[num]], sums[:, position[den]]).T  # resamples x cells
    counts = [c for c in cells.columns if c not in (*fine.keys, "_fine")]
    if counts and len(cells):
        coarse_frame = coarse_frame.join(cells.groupby(by, sort=False)[counts].sum(), on=by)
    return CellRates(by, coarse_frame, point, samples, fine, all_group)


def rate_columns(metrics: dict[str, tuple[str, str]]) -> list[str]:
    """The count columns the metrics are ratios of."""
    return list(dict.fromkeys(c for pair in metrics.values() for c in pair))


def cell_rates(
    table: pd.DataFrame,
    by: list[str],
    metrics: dict[str, tuple[str, str]] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    all_group: bool = True,
) -> CellRates:
    """Rates per cell of `by` of one table (group "all" added when `by` has group and `all_group`), each
    with its task-clustered bootstrap resamples."""
    metrics = metrics if metrics is not None else RATES
    fine = bootstrap_tables({"table": (table, by, rate_columns(metrics))}, resamples, seed)["table"]
    return coarsen(fine, by, metrics, all_group)


def summary_frame(rates: CellRates) -> pd.DataFrame:
    """Tidy rates with `_lo`/`_hi` 95% CIs, one row per cell."""
    names = list(rates.point)
    cells = len(rates.cells)
    # every metric's CIs in one pass: the metrics' resamples side by side, one column per (metric, cell)
    every = np.concatenate([rates.samples[name].T for name in names]) if names else np.empty((0, 0))
    lo, hi = percentile_ci(every.T) if names and cells else (np.empty(0), np.empty(0))
    found: dict[str, np.ndarray] = {}
    for i, name in enumerate(names):
        part = slice(i * cells, (i + 1) * cells)
        found[name], found[f"{name}_lo"], found[f"{name}_hi"] = rates.point[name], lo[part], hi[part]
    frame = pd.concat([rates.cells, pd.DataFrame(found, index=rates.cells.index)], axis=1)
    return frame.astype({count: int for count in ("probes", *COUNTS) if count in frame.columns})


def summarise(
    table: pd.DataFrame, by: list[str], resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED
) -> pd.DataFrame:
    """Tidy rates with `_lo`/`_hi` 95% task-clustered bootstrap CIs per `by` cell (group "all" added)."""
    return summary_frame(cell_rates(table, by, RATES, resamples, seed))


def with_distinct_tasks(summary: pd.DataFrame, table: pd.DataFrame) -> pd.DataFrame:
    """`summary` (rows per arm × group, group "all" included) with `tasks` the distinct tasks of each row
    and `task_runs` the (run, task) rows behind it: pooled seeds and epochs are repeated measures of the same
    tasks, so with S seeds `task_runs` is S × `tasks`. `table`: the per-task table the summary was made of."""
    rows = table[["arm", "group", "task_id"]]
    distinct = pd.concat([rows, rows.assign(group="all")]).groupby(["arm", "group"])["task_id"].nunique()
    keys = list(zip(summary["arm"], summary["group"], strict=True))
    result = summary.rename(columns={"tasks": "task_runs"})
    result.insert(list(result.columns).index("task_runs"), "tasks", [int(distinct.get(k, 0)) for k in keys])
    return result


# The arms every other arm is compared with, when the run has them: no memory (arm − it = the memory benefit)
# and memory without forgetting.
REFERENCE_ARMS = ("no-memory", "full-memory")


def arm_pairs(arms: list[str], extra_references: Sequence[str] = ()) -> list[tuple[str, str]]:
    """(arm, reference) pairs: every arm against each reference arm in the run (no memory, then full memory,
    then `extra_references` in order), whatever the run order; with none in the run, every arm against the
    first. Each unordered pair once."""
    wanted = [*REFERENCE_ARMS, *(arm for arm in extra_references if arm not in REFERENCE_ARMS)]
    references = [arm for arm in wanted if arm in arms] or arms[:1]
    pairs: list[tuple[str, str]] = []
    for reference in references:
        for arm in arms:
            if arm != reference and (reference, arm) not in pairs:
                pairs.append((arm, reference))
    return pairs


def _wide(frame: pd.DataFrame, others: list[str], columns: list[str], all_group: bool) -> pd.DataFrame:
    """Per-task sums of `columns`: index (`others`..., task_id), columns (count column, arm), group "all"
    added when `all_group` and `others` has group; NaN where an arm did not run a task."""
    frame = frame[list(dict.fromkeys([*others, CLUSTER, "arm", *columns]))]  # the columns read
    frame = with_all_group(frame) if all_group and "group" in others else frame
    if not len(frame):
        return pd.DataFrame()
    return frame.groupby([*others, CLUSTER, "arm"], sort=False)[columns].sum().unstack("arm")


def _cell_rows(wide: pd.DataFrame, others: list[str]) -> list[tuple[tuple, np.ndarray]]:
    """(cell of the `others` index levels, its rows' positions in order) per cell, in the order a groupby on
    those levels meets them (one table's positions, not a frame per cell)."""
    if not others:
        return [((), np.arange(len(wide)))]
    codes = wide.groupby(level=others, sort=False).ngroup().to_numpy()
    order = np.argsort(codes, kind="stable")  # each cell's rows together, in their order
    starts = np.flatnonzero(np.r_[True, codes[order][1:] != codes[order][:-1]])
    labels = wide.index.droplevel([n for n in wide.index.names if n not in others])
    return [
        (tuple(labels[rows[0]]) if len(others) > 1 else (labels[rows[0]],), rows)
        for rows in np.split(order, starts[1:])
    ]


def paired_rows(
    wide: pd.DataFrame,
    others: list[str],
    pairs: list[tuple[str, str]],
    metrics: tuple[str, ...] = PAIRED_METRICS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> pd.DataFrame:
    """Paired differences (arm − reference) on the tasks both ran, per cell of `others`, from per-task sums
    (`_wide`): one row per (pair, cell, metric) with the difference, its interval, p-value and how it was
    computed, tasks, tasks that differ, MDE and `significant` (stats.paired_difference)."""
    rows: list[dict[str, Any]] = []
    if wide.empty:
        return pd.DataFrame(rows)
    column = {key: j for j, key in enumerate(wide.columns)}
    every = wide.to_numpy(dtype=float)  # column lookups below are plain indexing
    for cell, positions in _cell_rows(wide, others):
        values = every[positions]
        for arm, reference in pairs:
            for metric in metrics:
                num, den = RATES[metric]
                if not {(num, arm), (den, arm), (num, reference), (den, reference)} <= column.keys():
                    continue
                a_den, b_den = values[:, column[(den, arm)]], values[:, column[(den, reference)]]
                shared = ~np.isnan(a_den) & ~np.isnan(b_den)
                result = paired_difference(
                    values[shared, column[(num, arm)]], a_den[shared],
                    values[shared, column[(num, reference)]], b_den[shared],
                    bounded=den != "tasks", resamples=resamples, seed=seed,
                )  # fmt: skip
                if result is None:
                    continue
                labels = dict(zip(others, cell, strict=True))
                rows.append(
                    {"arm": arm, "reference": reference, **labels, "metric": metric, "diff": result.diff,
                     "diff_lo": result.lo, "diff_hi": result.hi, "p_value": result.p_value,
                     "p_method": result.p_method, "p_resamples": result.p_resamples,
                     "significant": result.significant, "tasks": result.tasks,
                     "tasks_differ": result.tasks_differ, "mde": result.mde}
                )  # fmt: skip
    return pd.DataFrame(rows)


def paired_frame(
    rates: CellRates,
    pairs: list[tuple[str, str]],
    metrics: tuple[str, ...] = PAIRED_METRICS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> pd.DataFrame:
    """`paired_rows` per cell of the breakdown's keys other than the arm."""
    chosen = tuple(metric for metric in metrics if metric in rates.point)
    return paired_rows(rates.wide, [k for k in rates.by if k != "arm"], pairs, chosen, resamples, seed)


def benefit_share(
    rates: CellRates, arm: str, full: str, none: str, group: str, resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:  # fmt: skip
    """Memory benefit = success(x) − success(none) on `group`'s tasks that the three arms ran; the share of
    full memory's benefit that `arm` keeps, with the interval of stats.ratio_interval (`share_missing` says
    why there is none)."""
    wide = rates.wide
    wanted = [(column, name) for column in ("correct", "probes") for name in (arm, full, none)]
    if wide.empty or "group" not in wide.index.names or not set(wanted) <= set(wide.columns):
        return {}
    part = wide[wide.index.get_level_values("group") == group]
    part = part[part[[("probes", name) for name in (arm, full, none)]].notna().all(axis=1)]
    probes = {name: float(part[("probes", name)].sum()) for name in (arm, full, none)}
    if part.empty or min(probes.values()) == 0:
        return {}
    share = {name: part[("correct", name)].to_numpy(dtype=float) / probes[name] for name in (arm, full, none)}
    kept = ratio_interval(share[arm] - share[none], share[full] - share[none], resamples, seed)
    return {
        "arm_benefit": float((share[arm] - share[none]).sum()),
        "full_benefit": float((share[full] - share[none]).sum()),
        "share": kept.estimate,
        "share_lo": kept.lo,
        "share_hi": kept.hi,
        "share_missing": kept.missing,
        "tasks": kept.tasks,
    }


AGE_COLUMNS = ["arm", "age_bin", "probes", "tasks", "rate", "lo", "hi"]
AGE_KEYS = ["arm", "age_bin"]
AGE_RATE = {"rate": ("err", "probes")}


@dataclass
class AgeCounts:
    """The stale probes' counts per (run, arm, task, age bin), with what `stale_by_age` says of coverage."""

    counts: pd.DataFrame  # run, arm, task_id, age_bin, err, probes, tasks (empty: no probe has a change time)
    covered: int  # one arm's stale probes with a change time
    stale_probes: int  # one arm's probes that list stale values


def age_counts(data: RunData) -> AgeCounts:
    """`stale_by_age`'s per-task counts: the stale probes with a change time, binned by their age."""
    probes = data.probes
    if probes.empty:
        return AgeCounts(pd.DataFrame(), 0, 0)
    stale = probes[probes["stale"].apply(len) > 0]
    timed = stale[stale["fact_changed_at"].notna()]
    first = data.arms[0] if data.arms else None  # every arm answers the same probes: count one arm's
    covered, listed = int((timed["arm"] == first).sum()), int((stale["arm"] == first).sum())
    if timed.empty:
        return AgeCounts(pd.DataFrame(), covered, listed)
    age = timed["sim_time"] - timed["fact_changed_at"].astype(float)
    timed = timed.assign(
        age_bin=pd.cut(age, AGE_BINS, labels=AGE_LABELS, right=False).astype(str),
        err=(timed["classification"] == "stale").astype(float),
        probes=1.0,
    )
    counts = timed.groupby(["run", "arm", CLUSTER, "age_bin"], as_index=False)[["err", "probes"]].sum()
    return AgeCounts(counts.assign(tasks=1.0), covered, listed)


def stale_by_age(
    data: RunData,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    ages: AgeCounts | None = None,
    fine: Fine | None = None,
) -> pd.DataFrame:
    """Stale-error rate by time since the expected fact changed, every (arm, bin) cell present (an empty bin
    has 0 probes and no rate); `attrs["covered"]`/`attrs["stale_probes"]`: one arm's probes with a change
    time / all its probes that list stale values. `ages`: `age_counts(data)` when made already; `fine`: its
    counts resampled by `bootstrap_tables` with a report's other tables (keys AGE_KEYS, columns of
    AGE_RATE), else they are resampled here."""
    ages = age_counts(data) if ages is None else ages
    if data.probes.empty:
        empty = pd.DataFrame(columns=AGE_COLUMNS)
        empty.attrs.update(covered=0, stale_probes=0)
        return empty
    grid = pd.MultiIndex.from_product([data.arms, AGE_LABELS], names=AGE_KEYS).to_frame(index=False)
    if ages.counts.empty:
        result = grid.assign(probes=0, tasks=0, rate=np.nan, lo=np.nan, hi=np.nan)
    else:
        if fine is None:
            columns = rate_columns(AGE_RATE)
            fine = bootstrap_tables({"ages": (ages.counts, AGE_KEYS, columns)}, resamples, seed)["ages"]
        rates = coarsen(fine, AGE_KEYS, AGE_RATE)
        found = summary_frame(rates).rename(columns={"rate_lo": "lo", "rate_hi": "hi"})
        result = grid.merge(found[AGE_COLUMNS], on=AGE_KEYS, how="left")
    result = result.fillna({"probes": 0, "tasks": 0})
    result[["probes", "tasks"]] = result[["probes", "tasks"]].astype(int)
    result["age_bin"] = pd.Categorical(result["age_bin"], categories=AGE_LABELS, ordered=True)
    result.attrs.update(covered=ages.covered, stale_probes=ages.stale_probes)
    return result.reset_index(drop=True)


def paired_between(
    before: pd.DataFrame,
    after: pd.DataFrame,
    by: tuple[str, ...] = ("group",),
    metrics: tuple[str, ...] = PAIRED_METRICS,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> pd.DataFrame:
    """Paired differences after − before of two per-task tables (e.g. a baseline run and a candidate run),
    per arm and cell of `by`, on the tasks both ran with that arm. Columns as `paired_frame`'s, with the arm
    in `arm` and no `reference`."""
    combined = pd.concat([before.assign(side="before"), after.assign(side="after")], ignore_index=True)
    combined = combined.rename(columns={"arm": "bench_arm"}).rename(columns={"side": "arm"})
    metrics = tuple(m for m in metrics if set(RATES[m]) <= set(before.columns) & set(after.columns))
    wanted = {name: RATES[name] for name in metrics}
    wide = _wide(combined, ["bench_arm", *by], rate_columns(wanted), all_group=True)
    paired = paired_rows(wide, ["bench_arm", *by], [("after", "before")], metrics, resamples, seed)
    if paired.empty:
        return paired
    return paired.drop(columns=["arm", "reference"]).rename(columns={"bench_arm": "arm"})


@dataclass(frozen=True)
class Overlap:
    """How many tasks two per-task tables share (the tasks a paired comparison of them is made on)."""

    shared: int  # task ids that both tables ran with at least one same arm
    before: int  # task ids of the first table
    after: int  # task ids of the second table

    def words(self, first: str = "baseline", second: str = "candidate") -> str:
        """'30 of 96 baseline tasks (candidate: 30 tasks)'."""
        return f"{self.shared} of {self.before} {first} tasks ({second}: {self.after} tasks)"


def task_overlap(before: pd.DataFrame, after: pd.DataFrame) -> Overlap:
    """The tasks two per-task tables share: a task counts when both ran it with the same arm."""
    pairs = set(zip(before["arm"], before[CLUSTER], strict=True)) & set(
        zip(after["arm"], after[CLUSTER], strict=True)
    )
    return Overlap(len({task for _, task in pairs}), before[CLUSTER].nunique(), after[CLUSTER].nunique())
