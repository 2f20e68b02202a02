"""When memories turned stale: a stale transition is not an event in the log (strength decays continuously),
so it is recomputed from the item's write and touch records with the engine's own decay functions, exactly
as the report's strength timeline does, and placed in the timeline at the moment it happened."""

from __future__ import annotations

from typing import Any

from amnesia.config import Config
from amnesia.decay import idle_fraction

STALE_TYPE = "memory_stale"  # the synthetic record type the viewer shows (never written to a log)
_DECAYING_CURVES = ("linear", "ebbinghaus")  # flat never turns stale: it is forgotten at its ttl


def _decay_settings(arm_config: dict[str, Any]) -> tuple[float, float] | None:
    """(stale threshold, decay k) when the arm decays memories into a stale state, else None."""
    config = arm_config.get("config")
    if not isinstance(config, dict) or "stale_strength" not in config:
        return None  # not an amnesia-engine arm: strength means nothing comparable
    defaults = Config()
    if not config.get("auto_expire", defaults.auto_expire) or config.get("decay_mode") == "rank":
        return None  # forgetting switched off, or decay only re-ranks: nothing is ever hidden as stale
    return float(config["stale_strength"]), float(config.get("decay_k", defaults.decay_k))


def stale_transitions(records: list[dict[str, Any]], arm_config: dict[str, Any]) -> list[dict[str, Any]]:
    """One `memory_stale` record per time an item's strength fell below the stale threshold while idle
    (between its write or last touch and its next touch, its forgetting or the end of the task)."""
    settings = _decay_settings(arm_config)
    if settings is None or not records:
        return []
    threshold, k = settings
    horizon = max(float(record["sim_time"]) for record in records)
    anchors: dict[str, list[tuple[float, float]]] = {}  # item -> (time, base strength) at write and touches
    shape: dict[str, tuple[float, str]] = {}  # item -> (ttl, curve) of a decaying, unpinned item
    ends: dict[str, float] = {}
    for record in records:
        item, kind, now = record.get("item_id"), record["type"], float(record["sim_time"])
        if kind == "memory_write":
            ttl, curve = record.get("ttl"), record.get("curve")
            if ttl and curve in _DECAYING_CURVES and not record.get("pinned"):
                shape[item] = (float(ttl), curve)
                anchors[item] = [(now, float(record.get("strength") or 1.0))]
        elif kind == "memory_touch" and item in anchors and record.get("strength") is not None:
            anchors[item].append((now, float(record["strength"])))
        elif kind == "memory_forget" and item in anchors:
            ends[item] = now
    events = []
    for item, points in anchors.items():
        ttl, curve = shape[item]
        limits = [time for time, _ in points[1:]] + [ends.get(item, horizon)]
        for (start, base), limit in zip(points, limits, strict=True):
            fraction = idle_fraction(base, curve, threshold, k)
            at = start + fraction * ttl
            if fraction < 1.0 and at <= limit:
                events.append({"type": STALE_TYPE, "sim_time": at, "item_id": item, "threshold": threshold})
    return sorted(events, key=lambda event: event["sim_time"])


def with_stale_transitions(records: list[dict[str, Any]], arm_config: dict[str, Any]) -> list[dict[str, Any]]:
    """The records with each stale transition inserted before the first record that happened after it."""
    merged: list[dict[str, Any]] = []
    pending = stale_transitions(records, arm_config)
    for record in records:
        while pending and pending[0]["sim_time"] < float(record["sim_time"]):
            merged.append(pending.pop(0))
        merged.append(record)
    return merged + pending
