"""`amnesia-bench check`: a CI gate on a run.

Absolute limits: `--max metric:arm:group=limit` (and `--min`); a limit on a cell with too few observations to
judge, or inside the cell's 95% CI, passes or fails as written but says so in a NOTE line.

Against a baseline (`--baseline` a run folder, its report folder or its `per_task.csv`), every metric of
WORSE_DIRECTION (or the `--metric`s given) is compared **paired on the tasks both runs share**, per arm and
group: the difference candidate − baseline, its task-clustered CI and sign-flip p. A worsening beyond
`--tolerance` (rates: absolute; tokens: relative to the baseline) fails when it is significant
(stats.is_significant) and is a NOTE when it is not. An arm, group or metric of the baseline that the
candidate lacks fails. A passing check prints one PASS line.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from reports.metrics import RATES, WORSE_DIRECTION, paired_between
from reports.stats import DEFAULT_RESAMPLES, MIN_TASKS
from reports.wording import describe_difference
from tasks.errors import ReportInputError

SPEC = re.compile(r"^(?P<metric>[a-z_]+):(?P<arm>[^:=]+):(?P<group>[^:=]+)=(?P<limit>[-+0-9.eE]+)$")


@dataclass
class GateOutcome:
    violations: list[str] = field(default_factory=list)  # FAIL lines: exit 1 when any
    notes: list[str] = field(default_factory=list)  # NOTE lines: never fail
    passed: str = ""  # the one-line PASS summary (when nothing failed)


def _read_csv(path: Path, needed: set[str]) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise ReportInputError(f"{path}: unreadable CSV: {error}") from None
    missing = needed - set(frame.columns)
    if missing:
        raise ReportInputError(f"{path}: missing column(s) {sorted(missing)}")
    return frame


def load_per_task(path: Path) -> pd.DataFrame:
    """Per-task counts from a run folder (its logs), a report folder or a per_task.csv."""
    path = Path(path)
    needed = {"arm", "group", "task_id"}
    if path.is_file():
        if path.name == "summary.csv":
            raise ReportInputError(
                f"{path}: a summary has no per-task counts to pair on; give the run folder, its report "
                "folder or its per_task.csv"
            )
        return _read_csv(path, needed)
    if (path / "per_task.csv").is_file() and not (path / "manifest.json").exists():
        return _read_csv(path / "per_task.csv", needed)
    from reports.logread import load_runs
    from reports.metrics import per_task

    return per_task(load_runs([path]))


def load_summary(path: Path) -> pd.DataFrame:
    """A summary from a summary.csv, or computed from per-task counts (run folder, report folder or
    per_task.csv; never a stale report copy of a run folder)."""
    path = Path(path)
    if path.is_file() and path.name != "per_task.csv":
        return _read_csv(path, {"arm", "group"})
    from reports.metrics import summarise

    return summarise(load_per_task(path), ["arm", "group"])


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
        row = _cell(summary, f"{flag} {spec!r}", metric, arm, group)
        value = float(row[metric])
        broken = math.isnan(value) or (value > limit if flag == "--max" else value < limit)
        where = f"{metric} arm={arm} group={group}"
        if broken:
            bound = "max" if flag == "--max" else "min"
            outcome.violations.append(f"FAIL {where} value={value:.4g} {bound}={limit:g}")
        den = RATES.get(metric, ("", ""))[1]
        observations = row.get(den) if den in row.index else None
        lo, hi = row.get(f"{metric}_lo"), row.get(f"{metric}_hi")
        few = observations is not None and pd.notna(observations) and float(observations) < MIN_TASKS
        inside = lo is not None and hi is not None and pd.notna(lo) and pd.notna(hi) and lo <= limit <= hi
        if few or inside:
            count = (
                f"{int(observations)} {den}" if observations is not None and pd.notna(observations) else ""
            )
            outcome.notes.append(
                f"NOTE {where}: too few observations to judge the limit {limit:g} ({count}; 95% CI "
                f"[{lo:.3g}, {hi:.3g}] {'contains' if inside else 'is beside'} it): the verdict could flip "
                "on a rerun"
            )


def _missing(
    candidate: pd.DataFrame, baseline: pd.DataFrame, metrics: list[str], outcome: GateOutcome
) -> None:
    """FAIL for each arm, group or metric the baseline has and the candidate lacks."""
    for arm in sorted(set(baseline["arm"]) - set(candidate["arm"])):
        outcome.violations.append(f"FAIL arm={arm}: in the baseline, missing from the candidate")
    shared_arms = set(baseline["arm"]) & set(candidate["arm"])
    for arm in sorted(shared_arms):
        groups = set(baseline.loc[baseline["arm"] == arm, "group"])
        for group in sorted(groups - set(candidate.loc[candidate["arm"] == arm, "group"])):
            outcome.violations.append(
                f"FAIL arm={arm} group={group}: in the baseline, missing from the candidate"
            )
    for metric in metrics:
        num, den = RATES[metric]
        if {num, den} - set(candidate.columns):
            outcome.violations.append(f"FAIL {metric}: no counts for it in the candidate")
            continue
        if {num, den} - set(baseline.columns):
            continue
        for arm in sorted(shared_arms):
            base = baseline[baseline["arm"] == arm]
            cand = candidate[candidate["arm"] == arm]
            if base[den].sum() > 0 and cand[den].sum() == 0:
                outcome.violations.append(
                    f"FAIL {metric} arm={arm}: measured in the baseline ({int(base[den].sum())} {den}), "
                    "no observation in the candidate"
                )


def compare_to_baseline(
    candidate: pd.DataFrame,
    baseline: pd.DataFrame,
    metrics: list[str],
    tolerance: float,
    outcome: GateOutcome,
    resamples: int = DEFAULT_RESAMPLES,
) -> int:
    """Paired comparison per arm × group × metric; appends FAIL/NOTE lines; returns the comparisons made."""
    _missing(candidate, baseline, metrics, outcome)
    paired = paired_between(baseline, candidate, ("group",), tuple(metrics), resamples)
    if paired.empty:
        if not outcome.violations:
            outcome.violations.append("FAIL no task is shared by the candidate and the baseline")
        return 0
    for _, row in paired.iterrows():
        metric = row["metric"]
        direction = WORSE_DIRECTION[metric]
        worsening = row["diff"] * direction
        num, den = RATES[metric]
        if metric.endswith("_tokens"):
            base = baseline[baseline["arm"] == row["arm"]]
            base = base if row["group"] == "all" else base[base["group"] == row["group"]]
            allowed = tolerance * float(base[num].sum() / max(base[den].sum(), 1.0))
        else:
            allowed = tolerance
        where = f"{metric} arm={row['arm']} group={row['group']}"
        said = describe_difference(row, "candidate", "baseline")
        if worsening > allowed and row["significant"]:
            outcome.violations.append(f"FAIL {where}: worse beyond tolerance {tolerance:g}: {said}")
        elif worsening > allowed:
            outcome.notes.append(
                f"NOTE {where}: worse beyond tolerance {tolerance:g} but not failing: {said}"
            )
        elif worsening > 0 and row["significant"]:
            outcome.notes.append(f"NOTE {where}: worse but within tolerance {tolerance:g}: {said}")
    return len(paired)


def check(
    run: Path,
    maxima: list[str],
    minima: list[str],
    baseline: Path | None = None,
    tolerance: float = 0.02,
    metrics: list[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
) -> GateOutcome:
    """Run every limit and the baseline comparison; `outcome.passed` is set when nothing failed."""
    if not maxima and not minima and baseline is None:
        raise ReportInputError("check: give at least one --max/--min limit or a --baseline")
    chosen = list(metrics) if metrics else list(WORSE_DIRECTION)
    for metric in chosen:
        if metric not in WORSE_DIRECTION:
            raise ReportInputError(f"--metric: {metric!r} has no known worse direction (known: "
                                   f"{', '.join(WORSE_DIRECTION)})")  # fmt: skip
    outcome = GateOutcome()
    parts = []
    if maxima or minima:
        summary = load_summary(run)
        _limits(summary, maxima, "--max", outcome)
        _limits(summary, minima, "--min", outcome)
        parts.append(f"{len(maxima) + len(minima)} limit(s) hold")
    if baseline is not None:
        compared = compare_to_baseline(
            load_per_task(run), load_per_task(baseline), chosen, tolerance, outcome, resamples
        )
        parts.append(
            f"{compared} paired comparisons ({', '.join(chosen)}) with the baseline show no significant "
            f"worsening beyond tolerance {tolerance:g}"
        )
    if not outcome.violations:
        notes = f"; {len(outcome.notes)} note(s) above" if outcome.notes else ""
        outcome.passed = f"PASS: {'; '.join(parts)}{notes}"
    return outcome
