"""What two of the report's figures are drawn from, made in the report's process and sent to a figure worker:
the strength timeline's `Timeline` (the task it shows, `choose_timeline_task`; its records, `timeline_of`; the
arm's decay options) and the cumulative-context figure's calls (`context_calls`). Imports nothing heavy at
module level: `amnesia-bench report` imports the figure pool, which names these, before pandas."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tasks.logschema import SUMMARY_COLUMNS

if TYPE_CHECKING:
    import pandas as pd

    from reports.logread import RunData


@dataclass(frozen=True)
class Timeline:
    """What the strength timeline of one task shows (sent to a worker instead of the run). The arm's decay
    options are looked up here, in the report's process: a worker would import amnesia.config (and yaml) for
    these four values, about a tenth of a second of CPU."""

    arm: str
    task_id: str
    events: pd.DataFrame  # the task's memory records for the arm, first run only, in simulated-time order
    horizon: float  # the task's last simulated time (items never forgotten are drawn up to it)
    stale_at: float  # the arm's stale_strength (amnesia's default when it sets none)
    forgotten_at: float  # its forgotten_strength
    decay_k: float  # its decay_k
    zero_at_ttl: bool  # decay_mode "forget": strength 0 at the ttl ("rank" has no cut-off)


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


def timeline_of(data: RunData, arm: str, task_id: str) -> Timeline:
    """The Timeline of `task_id` under `arm` from a loaded run: the pair's memory records, of the first run
    that has some, read again from its log (a report's memory frame has only the columns the tables read,
    logread.REPORT_COLUMNS; the figure reads the items' ttl, curve, pinned and strength besides)."""
    import pandas as pd

    from reports.logread import pair_summary

    memory, tasks = data.memory, data.tasks
    runs = memory.loc[(memory["arm"] == arm) & (memory["task_id"] == task_id), "run"]
    pair = tasks[(tasks["arm"] == arm) & (tasks["task_id"] == task_id)]
    records = {name: [] for name in SUMMARY_COLUMNS["memory"]}
    if len(runs):
        records = pair_summary(pair.loc[pair["run"] == runs.min(), "file"].iloc[0])["memory"]
    # numbers as in a frame of many pairs, where some are set (a pair's might all be None)
    events = pd.DataFrame(records).astype({"ttl": float, "strength": float})
    events = events.sort_values("sim_time", kind="stable")
    options = decay_options(data.arm_configs.get(arm, {}))
    return Timeline(
        arm,
        task_id,
        events,
        float(pair["horizon"].max()),
        stale_at=options["stale_strength"],
        forgotten_at=options["forgotten_strength"],
        decay_k=options["decay_k"],
        zero_at_ttl=options["decay_mode"] == "forget",
    )


DECAY_OPTIONS = ("stale_strength", "forgotten_strength", "decay_k", "decay_mode")


def decay_options(config: Any) -> dict[str, Any]:
    """The arm's DECAY_OPTIONS as the strength timeline draws with them: each found in its describe() dict,
    else (missing, or 0, "" or None there) amnesia's default. amnesia.config (with yaml and the item and
    safety checks: about 30 ms of the report's process, before its tables) is imported only when a default
    is needed: an amnesia arm's configuration lists all four."""
    found = {name: _config_value(config, name) for name in DECAY_OPTIONS}
    if all(found.values()):
        return found
    from amnesia.config import Config

    defaults = Config()
    return {name: value or getattr(defaults, name) for name, value in found.items()}


def context_calls(data: RunData) -> tuple[pd.DataFrame, pd.Series]:
    """What the cumulative-context figure shows: each model call's arm, simulated time and prompt tokens,
    and the number of tasks per arm."""
    return data.calls[["arm", "sim_time", "prompt_tokens"]], data.tasks.groupby("arm").size()


def choose_timeline_task(data: RunData, arm: str) -> str | None:
    """The task that shows decay best for `arm`: most items forgotten by decay or expiry (not by an agent
    ending or an explicit forget), then the most writes and forgets, preferring the harmful group."""
    import numpy as np
    import pandas as pd

    memory = data.memory[(data.memory["arm"] == arm) & data.memory["event"].isin(["write", "forget"])]
    # Counted per (task, group) on the columns' codes: pandas's groupby, agg and sort took ~9 ms of the
    # report's own process at 900 tasks. Rows without a task or group are left out, as a groupby leaves them.
    tasks, task_ids = pd.factorize(memory["task_id"])
    groups, group_names = pd.factorize(memory["group"])
    kept = (tasks >= 0) & (groups >= 0)
    if not kept.any():
        return None
    pairs, at = np.unique(tasks[kept] * len(group_names) + groups[kept], return_inverse=True)
    decayed = np.bincount(at, weights=memory["reason"].isin(["stale", "expired"]).to_numpy()[kept])
    events = np.bincount(at)
    harmful = group_names[pairs % len(group_names)] == "harmful"
    best = decayed == decayed.max()  # the most decayed, then harmful, then the most events, then the first id
    best &= harmful >= harmful[best].max()
    best &= events >= events[best].max()
    return str(min(task_ids[pairs // len(group_names)][best]))
