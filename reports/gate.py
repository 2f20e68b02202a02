"""`amnesia-bench check`: a CI gate on a run's summary.

Absolute limits: `--max metric:arm:group=limit` (and `--min`). Against a baseline (`--baseline OLD_RUN or
summary.csv`, `--tolerance t`) the gate is noise-aware: for each gated metric it estimates the increase
and its 95% CI from both summaries' CIs (normal approximation, SE = CI width / 3.92, independent runs) and
fails only when the whole CI lies above the tolerance; a point increase above the tolerance inside the
noise is reported as a note.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from reports.metrics import RATES
from tasks.errors import ReportInputError

SPEC = re.compile(r"^(?P<metric>[a-z_]+):(?P<arm>[^:=]+):(?P<group>[^:=]+)=(?P<limit>[-+0-9.eE]+)$")
Z95 = 1.959963984540054


@dataclass
class GateOutcome:
    violations: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def load_summary(path: Path) -> pd.DataFrame:
    """A summary from a summary.csv, or computed from a run folder's logs (never a stale report copy)."""
    path = Path(path)
    if path.is_file() and path.suffix == ".csv":
        try:
            summary = pd.read_csv(path)
        except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
            raise ReportInputError(f"{path}: unreadable CSV: {error}") from None
        missing = {"arm", "group"} - set(summary.columns)
        if missing:
            raise ReportInputError(f"{path}: missing column(s) {sorted(missing)}")
        return summary
    from reports.logread import load_runs
    from reports.metrics import per_task, summarise

    return summarise(per_task(load_runs([path])), ["arm", "group"])


def _cell(summary: pd.DataFrame, source: str, metric: str, arm: str, group: str) -> pd.Series:
    if metric not in summary.columns:
        raise ReportInputError(f"{source}: metric: unknown {metric!r} (known: {', '.join(RATES)})")
    row = summary[(summary["arm"] == arm) & (summary["group"] == group)]
    if row.empty:
        raise ReportInputError(f"{source}: no row for arm {arm!r} and group {group!r}")
    return row.iloc[0]


def _limits(summary: pd.DataFrame, specs: list[str], flag: str, outcome: GateOutcome) -> None:
    for spec in specs:
        match = SPEC.match(spec.strip())
        if match is None:
            raise ReportInputError(f"{flag} {spec!r}: expected metric:arm:group=limit")
        metric, arm, group = match["metric"], match["arm"], match["group"]
        try:
            limit = float(match["limit"])
        except ValueError:
            raise ReportInputError(f"{flag} {spec!r}: limit: not a number") from None
        value = float(_cell(summary, f"{flag} {spec!r}", metric, arm, group)[metric])
        broken = math.isnan(value) or (value > limit if flag == "--max" else value < limit)
        if broken:
            bound = "max" if flag == "--max" else "min"
            outcome.violations.append(
                f"FAIL {metric} arm={arm} group={group} value={value:.4g} {bound}={limit:g}"
            )


def _half_width(row: pd.Series, metric: str) -> float:
    lo, hi = row.get(f"{metric}_lo"), row.get(f"{metric}_hi")
    if lo is None or hi is None or pd.isna(lo) or pd.isna(hi):
        return 0.0
    return (float(hi) - float(lo)) / 2.0


def _baseline(
    summary: pd.DataFrame, baseline: pd.DataFrame, metrics: list[str], tolerance: float, outcome: GateOutcome
) -> None:
    for metric in metrics:
        if metric not in summary.columns or metric not in baseline.columns:
            raise ReportInputError(f"--metric: unknown {metric!r} (known: {', '.join(RATES)})")
    merged = summary.merge(baseline, on=["arm", "group"], suffixes=("", "_base"))
    for _, row in merged.iterrows():
        for metric in metrics:
            now, before = float(row[metric]), float(row[f"{metric}_base"])
            if math.isnan(now) or math.isnan(before):
                continue
            base_row = pd.Series({k.removesuffix("_base"): v for k, v in row.items() if k.endswith("_base")})
            se = math.hypot(_half_width(row, metric), _half_width(base_row, metric)) / Z95
            increase = now - before
            lo, hi = increase - Z95 * se, increase + Z95 * se
            where = f"{metric} arm={row['arm']} group={row['group']}"
            detail = f"increase={increase:+.4g} 95% CI [{lo:+.4g}, {hi:+.4g}] tolerance={tolerance:g}"
            if lo > tolerance:
                outcome.violations.append(f"FAIL {where} value={now:.4g} baseline={before:.4g} {detail}")
            elif increase > tolerance:
                outcome.notes.append(f"NOTE {where}: {detail}: above tolerance but within noise, not failing")


def check(
    run: Path,
    maxima: list[str],
    minima: list[str],
    baseline: Path | None = None,
    tolerance: float = 0.02,
    metrics: list[str] | None = None,
) -> GateOutcome:
    if not maxima and not minima and baseline is None:
        raise ReportInputError("check: give at least one --max/--min limit or a --baseline")
    summary = load_summary(run)
    outcome = GateOutcome()
    _limits(summary, maxima, "--max", outcome)
    _limits(summary, minima, "--min", outcome)
    if baseline is not None:
        _baseline(summary, load_summary(baseline), metrics or ["stale_error_rate"], tolerance, outcome)
    return outcome
