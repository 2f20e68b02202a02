"""`amnesia-bench check`: a CI gate on a run.

Absolute limits: `--max metric:arm:group=limit` (and `--min`); a limit on a cell with too few observations to
judge, or inside the cell's 95% CI, passes or fails as written but says so in a NOTE line.

Against a baseline (`--baseline` a run folder, its report folder or its `per_task.csv`), every metric of
WORSE_DIRECTION (or the `--metric`s given) is compared **paired on the tasks both runs share** (the first
line says how many), per arm and group: the difference candidate − baseline, its interval and sign-flip p.
The gate is a one-sided test, so that a small sample can fail: a worsening beyond `--tolerance` (rates:
absolute; tokens: relative to the baseline) fails when its one-sided p < `--alpha`, and any worsening beyond
`--max-drop` (when given; same units) fails whatever its p; other worsenings are NOTE lines. The report's
"significant" (two-sided, at least 10 differing tasks) is for claims, not alarms. An MDE line per arm and
metric says how large a worsening the shared tasks could detect, so a pass on a small sample reads as what
it is. An arm, group or metric of the baseline that the candidate lacks fails.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from reports.metrics import RATES, WORSE_DIRECTION, paired_between, task_overlap
from reports.stats import ALPHA, DEFAULT_RESAMPLES, MIN_TASKS, format_p, one_sided_p
from reports.wording import amount, describe_difference
from tasks.errors import ReportInputError

SPEC = re.compile(r"^(?P<metric>[a-z_]+):(?P<arm>[^:=]+):(?P<group>[^:=]+)=(?P<limit>[-+0-9.eE]+)$")


@dataclass
class GateOutcome:
    violations: list[str] = field(default_factory=list)  # FAIL lines: exit 1 when any
    notes: list[str] = field(default_factory=list)  # NOTE lines: never fail
    facts: list[str] = field(default_factory=list)  # what the baseline comparison rests on: tasks, MDEs
    passed: str = ""  # the one-line PASS summary (when nothing failed)

    def lines(self) -> list[str]:
        """Everything to print, in order: facts, notes, failures, then the PASS line."""
        return [*self.facts, *self.notes, *self.violations, *([self.passed] if self.passed else [])]


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


def _baseline_mean(baseline: pd.DataFrame, metric: str, arm: str, group: str) -> float:
    """The baseline's value of a per-task mean (tokens) for an arm and group: what relative limits scale."""
    num, den = RATES[metric]
    base = baseline[baseline["arm"] == arm]
    base = base if group == "all" else base[base["group"] == group]
    return float(base[num].sum() / max(base[den].sum(), 1.0))


def compare_to_baseline(
    candidate: pd.DataFrame,
    baseline: pd.DataFrame,
    metrics: list[str],
    tolerance: float,
    outcome: GateOutcome,
    resamples: int = DEFAULT_RESAMPLES,
    alpha: float = ALPHA,
    max_drop: float | None = None,
) -> int:
    """Paired comparison per arm × group × metric; appends fact, FAIL and NOTE lines; returns the
    comparisons made."""
    _missing(candidate, baseline, metrics, outcome)
    paired = paired_between(baseline, candidate, ("group",), tuple(metrics), resamples)
    if paired.empty:
        if not outcome.violations:
            outcome.violations.append("FAIL no task is shared by the candidate and the baseline")
        return 0
    outcome.facts.append(f"paired on {task_overlap(baseline, candidate).words()}")
    detectable: dict[str, list[str]] = {}  # arm -> each metric's MDE on group "all"
    for row in paired.to_dict("records"):
        metric, arm, group = row["metric"], row["arm"], row["group"]
        direction = WORSE_DIRECTION[metric]
        worsening = row["diff"] * direction
        scale = _baseline_mean(baseline, metric, arm, group) if metric.endswith("_tokens") else 1.0
        allowed = tolerance * scale
        one_sided = one_sided_p(row["p_value"], row["diff"], direction)
        shown = format_p(one_sided, row["p_method"], row["p_resamples"])
        p_words = f"one-sided p {shown}" if shown.startswith("<") else f"one-sided p = {shown}"
        where = f"{metric} arm={arm} group={group}"
        said = describe_difference(row, "candidate", "baseline")
        if group == "all":
            mde = "n too small" if pd.isna(row["mde"]) else amount(row["mde"], metric, signed=False)
            detectable.setdefault(arm, []).append(f"{metric} {mde} ({int(row['tasks'])} tasks)")
        if worsening > allowed and one_sided < alpha:
            outcome.violations.append(
                f"FAIL {where}: worse beyond tolerance {tolerance:g} ({p_words} < {alpha:g}): {said}"
            )
        elif max_drop is not None and worsening > max_drop * scale:
            outcome.violations.append(f"FAIL {where}: worse by more than --max-drop {max_drop:g}: {said}")
        elif worsening > allowed:
            outcome.notes.append(
                f"NOTE {where}: worse beyond tolerance {tolerance:g} but not failing ({p_words} ≥ "
                f"{alpha:g}): {said}"
            )
        elif worsening > 0 and one_sided < alpha:
            outcome.notes.append(f"NOTE {where}: worse but within tolerance {tolerance:g}: {said}")
    for arm, sizes in detectable.items():
        outcome.facts.append(
            f"MDE arm={arm} group=all (smallest difference detected with 80% power, two-sided 5%): "
            + "; ".join(sizes)
        )
    return len(paired)


def check(
    run: Path,
    maxima: list[str],
    minima: list[str],
    baseline: Path | None = None,
    tolerance: float = 0.02,
    metrics: list[str] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    alpha: float = ALPHA,
    max_drop: float | None = None,
) -> GateOutcome:
    """Run every limit and the baseline comparison; `outcome.passed` is set when nothing failed."""
    if not maxima and not minima and baseline is None:
        raise ReportInputError("check: give at least one --max/--min limit or a --baseline")
    if not 0 < alpha < 1:
        raise ReportInputError(f"--alpha: {alpha:g} is not between 0 and 1")
    if max_drop is not None and not max_drop >= 0:
        raise ReportInputError(f"--max-drop: {max_drop:g} is negative")
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
            load_per_task(run),
            load_per_task(baseline),
            chosen,
            tolerance,
            outcome,
            resamples,
            alpha,
            max_drop,
        )
        beyond = f"; none worse than --max-drop {max_drop:g}" if max_drop is not None else ""
        parts.append(
            f"{compared} paired comparisons ({', '.join(chosen)}) with the baseline show no worsening beyond "
            f"tolerance {tolerance:g} at one-sided p < {alpha:g}{beyond}"
        )
    if not outcome.violations:
        notes = f"; {len(outcome.notes)} note(s) above" if outcome.notes else ""
        outcome.passed = f"PASS: {'; '.join(parts)}{notes}"
    return outcome
