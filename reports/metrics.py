"""Metrics from a loaded run: per-task counts, then rates per arm × group (× category) with clustered CIs.

Each rate is a ratio of per-task sums (see RATES); per-task means (tokens, steps, wall time) use a denominator
of one per task. Group "all" pools every group.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from reports.logread import RunData
from reports.staleness import out_of_date_values, stale_values
from reports.stats import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_weights,
    mcnemar,
    paired_difference,
    ratio_cis,
)

CLUSTER = ["run", "task_id"]
# metric -> (numerator column, denominator column) of the per-task table
RATES: dict[str, tuple[str, str]] = {
    "success_rate": ("correct", "probes"),
    "stale_error_rate": ("stale_errors", "stale_probes"),
    "poison_error_rate": ("poison_errors", "poison_probes"),
    "abstention_rate": ("abstained", "probes"),
    "false_forgetting_rate": ("false_forgets", "ff_eligible"),
    "stale_injection_rate": ("stale_injection_calls", "model_calls"),
    "context_tokens": ("context_tokens", "tasks"),
    "injected_tokens": ("injected_tokens", "tasks"),
    "steps": ("model_calls", "tasks"),
    "wall_seconds": ("wall_seconds", "tasks"),
}
COUNTS = ["tasks", "probes", "stale_probes", "poison_probes", "inject_only_items", "stale_inject_only_items"]
PAIRED_METRICS = ("success_rate", "stale_error_rate")
AGE_BINS = (0.0, 3600.0, 86400.0, 7 * 86400.0, 30 * 86400.0, np.inf)
AGE_LABELS = ("<1h", "1h-1d", "1d-7d", "7d-30d", ">=30d")


def flag_stale_injections(data: RunData) -> pd.Series:
    """Per model call: does the injected block assert a stale value that is out of date at the call's time?"""
    if data.calls.empty:
        return pd.Series([], dtype=bool)
    values = {task_id: stale_values(task) for task_id, task in data.task_specs.items()}
    turn = ["run", "arm", "task_id", "session_index", "turn_index"]
    blocks = data.injections.set_index(turn)["block"].to_dict() if not data.injections.empty else {}
    flags = [
        bool(out_of_date_values(blocks.get(key, ""), values[key[2]], t))
        for key, t in zip(
            data.calls[turn].itertuples(index=False, name=None), data.calls["sim_time"], strict=True
        )
    ]
    return pd.Series(flags, index=data.calls.index, dtype=bool)


def inject_only_items(data: RunData) -> pd.DataFrame:
    """Items whose every touch was an injection (kept alive only by being shown), and whether such an item was
    out of date at one of those touches. One row per item."""
    memory = data.memory
    if memory.empty or not (memory["event"] == "touch").any():
        return pd.DataFrame(columns=[*CLUSTER, "arm", "item_id", "stale"])
    key = ["run", "arm", "task_id", "item_id"]
    touches = memory[memory["event"] == "touch"]
    by_item = touches.groupby(key).agg(reasons=("reason", set), times=("sim_time", list))
    only = by_item[by_item["reasons"].apply(lambda r: r == {"inject"})]
    contents = memory[memory["event"] == "write"].set_index(key)["content"].to_dict()
    values = {task_id: stale_values(task) for task_id, task in data.task_specs.items()}
    rows = []
    for item, times in only["times"].items():
        text = contents.get(item) or ""
        stale = any(out_of_date_values(text, values[item[2]], t) for t in times)
        rows.append(dict(zip(key, item, strict=True), stale=stale))
    return pd.DataFrame(rows, columns=[*key, "stale"])


def per_task(data: RunData) -> pd.DataFrame:
    """One row per (run, arm, task) with the counts every metric is built from."""
    probes = data.probes.copy()
    cls = probes["classification"]
    has_stale = probes["stale"].apply(len) > 0 if len(probes) else pd.Series([], dtype=bool)
    has_poison = probes["poison"].apply(len) > 0 if len(probes) else pd.Series([], dtype=bool)
    eligible = (probes["group"] == "helpful") & ~probes["abstain"].astype(bool) if len(probes) else has_stale
    probes = probes.assign(
        correct=cls == "correct",
        stale_probes=has_stale,
        stale_errors=has_stale & (cls == "stale"),
        poison_probes=has_poison,
        poison_errors=has_poison & (cls == "poisoned"),
        abstained=cls == "abstained",
        ff_eligible=eligible,
        false_forgets=eligible & (cls == "abstained"),
    )
    key = ["run", "arm", "task_id"]
    flags = ["correct", "stale_probes", "stale_errors", "poison_probes", "poison_errors", "abstained"]
    probe_counts = probes.groupby(key)[[*flags, "ff_eligible", "false_forgets"]].sum()
    calls = data.calls.assign(stale_injection_calls=flag_stale_injections(data))
    call_counts = calls.groupby(key).agg(
        context_tokens=("prompt_tokens", "sum"), stale_injection_calls=("stale_injection_calls", "sum")
    )
    injected = data.injections.groupby(key)["tokens"].sum().rename("injected_tokens")
    items = inject_only_items(data)
    kept = items.groupby(key).agg(
        inject_only_items=("stale", "size"), stale_inject_only_items=("stale", "sum")
    )
    table = data.tasks.set_index(key)[["group", "category", "lang", "probes", "model_calls", "wall_seconds"]]
    table = table.join(probe_counts).join(call_counts).join(injected).join(kept)
    table = table.fillna({c: 0 for c in table.columns if c not in ("group", "category", "lang")})
    table["tasks"] = 1
    numeric = [c for c in table.columns if c not in ("group", "category", "lang")]
    table[numeric] = table[numeric].astype(float)
    return table.reset_index()


def with_all_group(table: pd.DataFrame) -> pd.DataFrame:
    return pd.concat([table, table.assign(group="all", category="all")], ignore_index=True)


def summarise(
    table: pd.DataFrame,
    by: list[str],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> pd.DataFrame:
    """Tidy rates with `_lo`/`_hi` 95% cluster-bootstrap CIs per `by` cell (group "all" added)."""
    rows = []
    nums = [num for num, _ in RATES.values()]
    dens = [den for _, den in RATES.values()]
    for cell, part in with_all_group(table).groupby(by, sort=False):
        cell = cell if isinstance(cell, tuple) else (cell,)
        weights = bootstrap_weights(len(part), resamples, seed)
        estimates = ratio_cis(part[nums].to_numpy(), part[dens].to_numpy(), weights)
        row: dict[str, Any] = dict(zip(by, cell, strict=True))
        row.update({count: int(part[count].sum()) for count in COUNTS})
        for name, estimate in zip(RATES, estimates, strict=True):
            row.update({name: estimate.value, f"{name}_lo": estimate.lo, f"{name}_hi": estimate.hi})
        rows.append(row)
    return pd.DataFrame(rows)


def _aligned(table: pd.DataFrame, arm_a: str, arm_b: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    a = table[table["arm"] == arm_a].set_index(CLUSTER)
    b = table[table["arm"] == arm_b].set_index(CLUSTER)
    shared = a.index.intersection(b.index)
    return a.loc[shared], b.loc[shared]


def _probe_outcomes(probes: pd.DataFrame, arm_a: str, arm_b: str) -> tuple[np.ndarray, np.ndarray]:
    key = [*CLUSTER, "session_index", "turn_index"]
    a = probes[probes["arm"] == arm_a].set_index(key)["classification"] == "correct"
    b = probes[probes["arm"] == arm_b].set_index(key)["classification"] == "correct"
    joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
    return joined["a"].to_numpy(), joined["b"].to_numpy()


def _cells(frame: pd.DataFrame, by: list[str]) -> dict[tuple, pd.DataFrame]:
    return {
        cell if isinstance(cell, tuple) else (cell,): part for cell, part in frame.groupby(by, sort=False)
    }


# The arms every other arm is compared with, when the run has them: no memory (arm − it = the memory benefit)
# and memory without forgetting.
REFERENCE_ARMS = ("no-memory", "full-memory")


def arm_pairs(arms: list[str]) -> list[tuple[str, str]]:
    """(arm, reference) pairs: every arm against each reference arm in the run (no memory, then full memory),
    whatever the run order; with neither in the run, every arm against the first. Each unordered pair once."""
    references = [arm for arm in REFERENCE_ARMS if arm in arms] or arms[:1]
    pairs: list[tuple[str, str]] = []
    for reference in references:
        for arm in arms:
            if arm != reference and (reference, arm) not in pairs:
                pairs.append((arm, reference))
    return pairs


def paired_table(
    data: RunData,
    table: pd.DataFrame,
    pairs: list[tuple[str, str]],
    by: list[str],
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> pd.DataFrame:
    """Paired differences (arm − reference) per cell of `by` for PAIRED_METRICS, with McNemar on success."""
    rows = []
    table_cells = _cells(with_all_group(table), by)
    probe_cells = _cells(pd.concat([data.probes, data.probes.assign(group="all", category="all")]), by)
    for arm, reference in pairs:
        for cell, part in table_cells.items():
            a, b = _aligned(part, arm, reference)
            if a.empty:
                continue
            outcome = mcnemar(*_probe_outcomes(probe_cells[cell], arm, reference))
            for metric in PAIRED_METRICS:
                num, den = RATES[metric]
                if a[den].sum() == 0:
                    continue
                diff = paired_difference(a[num], a[den], b[num], b[den], resamples, seed)
                rows.append(
                    {
                        "arm": arm,
                        "reference": reference,
                        **dict(zip(by, cell, strict=True)),
                        "metric": metric,
                        "diff": diff.diff,
                        "diff_lo": diff.lo,
                        "diff_hi": diff.hi,
                        "p_value": diff.p_value,
                        "mde": diff.mde,
                        "tasks": diff.clusters,
                        "mcnemar_only_arm": outcome.only_a,
                        "mcnemar_only_reference": outcome.only_b,
                        "mcnemar_p": outcome.p_value,
                    }
                )
    return pd.DataFrame(rows)


def benefit_share(
    table: pd.DataFrame,
    arm: str,
    full: str,
    none: str,
    group: str,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> dict[str, float]:
    """Memory benefit = success(x) − success(none); the share of full memory's benefit that `arm` keeps."""
    part = with_all_group(table)
    part = part[part["group"] == group]
    cells = [part[part["arm"] == name].set_index(CLUSTER) for name in (arm, full, none)]
    shared = cells[0].index.intersection(cells[1].index).intersection(cells[2].index)
    if len(shared) == 0:
        return {}
    weights = bootstrap_weights(len(shared), resamples, seed)
    rates = []
    for cell in cells:
        num = cell.loc[shared, "correct"].to_numpy()
        den = cell.loc[shared, "probes"].to_numpy()
        rates.append((num.sum() / max(den.sum(), 1.0), (weights @ num) / np.maximum(weights @ den, 1.0)))
    (arm_rate, arm_boot), (full_rate, full_boot), (none_rate, none_boot) = rates
    with np.errstate(divide="ignore", invalid="ignore"):
        share_boot = (arm_boot - none_boot) / (full_boot - none_boot)
    share_boot = share_boot[np.isfinite(share_boot)]
    full_benefit = full_rate - none_rate
    return {
        "arm_benefit": arm_rate - none_rate,
        "full_benefit": full_benefit,
        "share": (arm_rate - none_rate) / full_benefit if full_benefit else float("nan"),
        "share_lo": float(np.percentile(share_boot, 2.5)) if len(share_boot) else float("nan"),
        "share_hi": float(np.percentile(share_boot, 97.5)) if len(share_boot) else float("nan"),
    }


def stale_by_age(data: RunData, resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED) -> pd.DataFrame:
    """Stale-error rate by time since the expected fact changed (probes that have stale values)."""
    probes = data.probes
    if probes.empty:
        return pd.DataFrame(columns=["arm", "age_bin", "probes", "rate", "lo", "hi"])
    probes = probes[(probes["stale"].apply(len) > 0) & probes["fact_changed_at"].notna()]
    age = probes["sim_time"] - probes["fact_changed_at"].astype(float)
    probes = probes.assign(
        age_bin=pd.cut(age, AGE_BINS, labels=AGE_LABELS, right=False), err=probes["classification"] == "stale"
    )
    rows = []
    for (arm, age_bin), part in probes.groupby(["arm", "age_bin"], sort=False, observed=True):
        counts = part.groupby(CLUSTER)["err"].agg(["sum", "size"])
        estimate = ratio_cis(
            counts["sum"].to_numpy(),
            counts["size"].to_numpy(),
            bootstrap_weights(len(counts), resamples, seed),
        )[0]
        rows.append(
            {
                "arm": arm,
                "age_bin": age_bin,
                "probes": len(part),
                "rate": estimate.value,
                "lo": estimate.lo,
                "hi": estimate.hi,
            }
        )
    result = pd.DataFrame(rows, columns=["arm", "age_bin", "probes", "rate", "lo", "hi"])
    result["age_bin"] = pd.Categorical(result["age_bin"], categories=AGE_LABELS, ordered=True)
    return result.sort_values(["arm", "age_bin"]).reset_index(drop=True)
