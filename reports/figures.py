"""The report's figures (matplotlib Agg), each saved as PNG and SVG. Every function takes tidy frames from
reports.metrics (or the loaded run) and returns the paths it wrote."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from amnesia.config import Config
from amnesia.decay import CURVE_CODES, FLAT, decayed
from reports.logread import RunData

DAY = 86400.0


def _save(fig: plt.Figure, folder: Path, name: str) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{name}.png", folder / f"{name}.svg"]
    fig.tight_layout()
    for path in paths:
        # Fixed metadata keeps the files byte-identical across rebuilds of the same run.
        metadata = {"Date": None} if path.suffix == ".svg" else {"Software": None}
        fig.savefig(path, dpi=120, metadata=metadata, bbox_inches="tight")
    plt.close(fig)
    return paths


def _use_arm_colors(ax: plt.Axes, count: int) -> None:
    """Distinct colours for up to 20 arms (tab10 repeats after ten), in the same order in every figure."""
    palette = plt.get_cmap("tab10" if count <= 10 else "tab20").colors
    ax.set_prop_cycle(color=palette[: max(count, 1)])


def _legend_outside(ax: plt.Axes) -> None:
    """The legend to the right of the plot, so it never hides data however many arms there are."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False)


def _yerr(frame: pd.DataFrame, value: str, lo: str, hi: str) -> np.ndarray:
    return np.vstack([(frame[value] - frame[lo]).clip(lower=0), (frame[hi] - frame[value]).clip(lower=0)])


def stale_error_by_arm_group(summary: pd.DataFrame, folder: Path) -> list[Path]:
    rows = summary[summary["stale_probes"] > 0]
    groups = list(dict.fromkeys(rows["group"]))
    arms = list(dict.fromkeys(summary["arm"]))
    fig, ax = plt.subplots(figsize=(8, 4))
    _use_arm_colors(ax, len(arms))
    width = 0.8 / max(len(arms), 1)
    for i, arm in enumerate(arms):
        part = rows[rows["arm"] == arm].set_index("group").reindex(groups)
        x = np.arange(len(groups)) + i * width
        ax.bar(x, part["stale_error_rate"], width, label=arm)
        ax.errorbar(x, part["stale_error_rate"], _yerr(part, "stale_error_rate", "stale_error_rate_lo",
                    "stale_error_rate_hi"), fmt="none", ecolor="black", capsize=3)  # fmt: skip
    ax.set_xticks(np.arange(len(groups)) + width * (len(arms) - 1) / 2, groups)
    ax.set_ylabel("stale-error rate (95% CI)")
    ax.set_ylim(0, 1.05)
    _legend_outside(ax)
    ax.set_title("Stale-error rate by arm and group (probes with stale values)")
    return _save(fig, folder, "stale_error_by_arm_group")


def context_tokens_over_time(data: RunData, folder: Path) -> list[Path]:
    fig, ax = plt.subplots(figsize=(8, 4))
    _use_arm_colors(ax, data.calls["arm"].nunique())
    tasks_per_arm = data.tasks.groupby("arm").size()
    for arm, calls in data.calls.groupby("arm", sort=False):
        ordered = calls.sort_values("sim_time")
        per_time = ordered.groupby("sim_time")["prompt_tokens"].sum().cumsum() / tasks_per_arm[arm]
        ax.step(per_time.index / DAY, per_time.to_numpy(), where="post", label=arm)
    ax.set_xlabel("simulated time since task start (days)")
    ax.set_ylabel("cumulative prompt tokens per task")
    ax.set_title("Cumulative context tokens over simulated time")
    _legend_outside(ax)
    return _save(fig, folder, "context_tokens_over_time")


def success_vs_tokens(summary: pd.DataFrame, folder: Path) -> list[Path]:
    rows = summary[summary["group"] == "all"]
    fig, ax = plt.subplots(figsize=(7, 4))
    _use_arm_colors(ax, len(rows))
    for _, row in rows.iterrows():
        frame = row.to_frame().T.astype({c: float for c in row.index if c not in ("arm", "group")})
        ax.errorbar(row["context_tokens"], row["success_rate"],
                    xerr=_yerr(frame, "context_tokens", "context_tokens_lo", "context_tokens_hi"),
                    yerr=_yerr(frame, "success_rate", "success_rate_lo", "success_rate_hi"),
                    fmt="o", capsize=3, label=row["arm"])  # fmt: skip
    ax.set_xlabel("context tokens per task (mean, 95% CI)")
    ax.set_ylabel("success rate (95% CI)")
    ax.set_ylim(0, 1.05)
    ax.set_title("Success vs. tokens (all groups)")
    _legend_outside(ax)
    return _save(fig, folder, "success_vs_tokens")


def stale_error_vs_age(by_age: pd.DataFrame, folder: Path) -> list[Path]:
    fig, ax = plt.subplots(figsize=(8, 4))
    _use_arm_colors(ax, by_age["arm"].nunique())
    labels = list(by_age["age_bin"].cat.categories) if len(by_age) else []
    for arm, part in by_age.groupby("arm", sort=False):
        x = [labels.index(b) for b in part["age_bin"]]
        ax.errorbar(x, part["rate"], _yerr(part, "rate", "lo", "hi"), marker="o", capsize=3, label=arm)
    ax.set_xticks(range(len(labels)), labels)
    ax.set_xlabel("time since the expected fact changed")
    ax.set_ylabel("stale-error rate (95% CI)")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title("Stale-error rate vs. time since the fact changed")
    if len(by_age):
        _legend_outside(ax)
    return _save(fig, folder, "stale_error_vs_age")


def _config_value(config: Any, name: str) -> Any:
    """Find an option by name anywhere in an arm's describe() dict (arms nest their options differently)."""
    if isinstance(config, dict):
        if name in config:
            return config[name]
        for value in config.values():
            found = _config_value(value, name)
            if found is not None:
                return found
    return None


def choose_timeline_task(data: RunData, arm: str) -> str | None:
    """The task that shows decay best for `arm`: most items forgotten by decay or expiry (not by an agent
    ending or an explicit forget), then the most writes and forgets, preferring the harmful group."""
    memory = data.memory[(data.memory["arm"] == arm) & data.memory["event"].isin(["write", "forget"])]
    if memory.empty:
        return None
    counts = (
        memory.assign(decayed=memory["reason"].isin(["stale", "expired"]))
        .groupby(["task_id", "group"])
        .agg(decayed=("decayed", "sum"), n=("event", "size"))
        .reset_index()
    )
    counts["harmful"] = counts["group"] == "harmful"
    order = counts.sort_values(
        ["decayed", "harmful", "n", "task_id"], ascending=[False, False, False, True], kind="stable"
    )
    return str(order.iloc[0]["task_id"])


def strength_timeline(data: RunData, arm: str, task_id: str, folder: Path) -> list[Path]:
    """Each item's strength, recomputed with amnesia.decay from its write and touch records."""
    defaults = Config()
    config = data.arm_configs.get(arm, {})
    stale_at = _config_value(config, "stale_strength") or defaults.stale_strength
    forgotten_at = _config_value(config, "forgotten_strength") or defaults.forgotten_strength
    k = _config_value(config, "decay_k") or defaults.decay_k
    zero_at_ttl = (_config_value(config, "decay_mode") or defaults.decay_mode) == "forget"  # rank: no cut-off
    events = data.memory[(data.memory["arm"] == arm) & (data.memory["task_id"] == task_id)]
    events = events[events["run"] == events["run"].min()].sort_values("sim_time", kind="stable")
    horizon = float(
        data.tasks[(data.tasks["arm"] == arm) & (data.tasks["task_id"] == task_id)]["horizon"].max()
    )
    fig, ax = plt.subplots(figsize=(8, 4))
    for item_id, item in events.groupby("item_id", sort=False):
        write = item[item["event"] == "write"]
        if write.empty:
            continue
        w = write.iloc[0]
        ttl = math.inf if pd.isna(w["ttl"]) else float(w["ttl"])
        curve = CURVE_CODES.get(w["curve"], FLAT)
        pinned = bool(w["pinned"]) or math.isinf(ttl)
        forgets = item[item["event"] == "forget"]
        end = float(forgets["sim_time"].iloc[0]) if len(forgets) else horizon
        touches = item[item["event"] == "touch"]
        anchors = [(float(w["sim_time"]), float(w["strength"] if pd.notna(w["strength"]) else 1.0))]
        anchors += [
            (float(t), float(s)) for t, s in zip(touches["sim_time"], touches["strength"], strict=True)
        ]
        times = np.union1d(np.linspace(anchors[0][0], max(end, anchors[0][0]), 300), [a[0] for a in anchors])
        starts = np.array([a[0] for a in anchors])
        index = np.searchsorted(starts, times, side="right") - 1
        bases = np.array([a[1] for a in anchors])[index]
        values = decayed(bases, times - starts[index], ttl, curve, pinned, k, zero_at_ttl=zero_at_ttl)
        (line,) = ax.plot(times / DAY, values, label=f"{item_id}: {str(w['content'])[:30]}")
        ax.plot(
            starts[1:] / DAY, bases[np.searchsorted(times, starts[1:])], "o", color=line.get_color(), ms=4
        )
        if len(forgets):
            ax.plot([end / DAY], [values[-1]], "x", color=line.get_color(), ms=9, mew=2)
    ax.axhline(stale_at, ls="--", color="grey", lw=1, label=f"stale threshold {stale_at}")
    ax.axhline(forgotten_at, ls=":", color="black", lw=1, label=f"forgotten threshold {forgotten_at}")
    ax.set_xlabel("simulated time (days); o = touch, x = forgotten")
    ax.set_ylabel("strength")
    ax.set_ylim(-0.02, 1.05)
    ax.set_title(f"Memory strength timeline: {task_id} ({arm})")
    _legend_outside(ax)
    return _save(fig, folder, "strength_timeline")
