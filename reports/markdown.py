"""report.md: methodology, task set, arms, model, seeds, tables with CIs, figures and the limits."""

from __future__ import annotations

import json
import math
from datetime import datetime, timezone
from typing import Any

import pandas as pd

from reports.coverage import limit_note
from reports.fairness import oracle_lines
from reports.logread import RunData
from reports.metrics import FAILURE_RATES, PROBE_RATES
from reports.stats import ALPHA, DEFAULT_RESAMPLES, EXACT_UP_TO, MIN_TASKS, MIN_TASKS_FOR_INTERVAL
from reports.tables import ReportTables
from reports.tooluse import tool_use_line
from reports.wording import amount, describe_difference, interval_text, p_text

AMNESIA, FULL, NONE = "amnesia", "full-memory", "no-memory"
FIGURES = (
    ("stale_error_by_arm_group", "Stale-error rate by arm and group"),
    ("context_tokens_over_time", "Cumulative context tokens over simulated time"),
    ("success_vs_tokens", "Success vs. tokens"),
    ("stale_error_vs_age", "Stale-error rate vs. time since the fact changed"),
    ("strength_timeline", "Memory-strength timeline of one task"),
    ("tradeoff", "Trade-off: stale errors vs false forgetting"),
)
SUMMARY_COLUMNS = (
    ("success_rate", "success", True),
    ("forgetting_aware_success", "forgetting-aware success", True),
    ("stale_error_rate", "stale-error", True),
    ("poison_error_rate", "poison-error", True),
    ("false_forgetting_rate", "false-forgetting", True),
    ("context_tokens", "context tokens/task", False),
)
# The failure codes (`tasks.failures`), each as a share of all probes.
FAILURE_COLUMNS = tuple(
    (rate, rate.removesuffix("_failure_rate").replace("_", "-"), True) for rate in FAILURE_RATES
)
# The model-free level (what reached the prompt), shown before the answers.
EXPOSURE_COLUMNS = (
    ("expected_exposed_rate", "expected value in prompt", True),
    ("stale_exposed_rate", "stale value in prompt", True),
    ("poison_exposed_rate", "poison value in prompt", True),
    ("stale_injection_rate", "stale-injection", True),
)


def fmt_ci(value: float, lo: float, hi: float, percent: bool = True) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if percent:
        return f"{value * 100:.1f}% [{lo * 100:.1f}, {hi * 100:.1f}]"
    return f"{value:,.0f} [{lo:,.0f}, {hi:,.0f}]"


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """`frame.to_dict("records")`, the same plain Python values, taken column by column: pandas's own takes
    each column as a Series (`itertuples`), which costs more than the rows of a report's tables."""
    names = frame.columns.tolist()
    columns = [frame[name].tolist() for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]


def table(frame: pd.DataFrame, keys: list[str], columns=SUMMARY_COLUMNS) -> str:
    header = [*keys, "probes", *(label for _, label, _ in columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in records(frame):  # plain values: iterrows makes a Series per row
        cells = [str(row[k]) for k in keys] + [str(int(row["probes"]))]
        cells += [fmt_ci(row[m], row[f"{m}_lo"], row[f"{m}_hi"], percent) for m, _, percent in columns]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def paired_markdown(paired: pd.DataFrame, keys: list[str]) -> str:
    header = [
        "arm − reference",
        *keys,
        "metric",
        "difference [95% CI]",
        "p (sign-flip)",
        "tasks (differ)",
        "significant",
        "MDE",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in records(paired):
        metric = row["metric"]
        cells = [f"{row['arm']} − {row['reference']}", *(str(row[k]) for k in keys), metric]
        cells += [
            f"{amount(row['diff'], metric)} {interval_text(row, metric)}",
            p_text(row),
            f"{int(row['tasks'])} ({int(row['tasks_differ'])})",
            "yes" if row["significant"] else "no",
            amount(row["mde"], metric, signed=False),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _main_pair(paired: pd.DataFrame) -> tuple[str, str] | None:
    """The comparison the headline is about: amnesia vs full memory when both ran, else the first pair."""
    if paired.empty:
        return None
    pairs = list(dict.fromkeys(zip(paired["arm"], paired["reference"], strict=True)))
    return (AMNESIA, FULL) if (AMNESIA, FULL) in pairs else pairs[0]


def _rows(
    paired: pd.DataFrame, pair: tuple[str, str], metric: str | None = None, **cell: str
) -> pd.DataFrame:
    """The rows of `pair`, of `metric` (any when None) and of the `cell` key values."""
    mask = (paired["arm"] == pair[0]) & (paired["reference"] == pair[1])
    if metric is not None:
        mask &= paired["metric"] == metric
    for name, value in cell.items():
        mask &= paired[name] == value
    return paired[mask]


def headline(paired_groups: pd.DataFrame, paired_categories: pd.DataFrame) -> str:
    """The headline sentences, generated from the paired tables only: the main pair's success and stale-error
    differences on each group and overall, then the categories where the success difference is significant
    either way, all worded by `wording.describe_difference`."""
    pair = _main_pair(paired_groups)
    if pair is None:
        return "No two arms share tasks in this run: no paired comparison is possible."
    sentences = []
    groups = [g for g in paired_groups["group"].unique().tolist() if g != "all"] + ["all"]
    first: dict[tuple[str, str], dict[str, Any]] = {}  # (group, metric) -> the pair's first row (one pass)
    for row in records(_rows(paired_groups, pair)):
        first.setdefault((row["group"], row["metric"]), row)
    for group in groups:
        for metric in ("success_rate", "stale_error_rate"):
            found = first.get((group, metric))
            if found is not None:
                place = "Over all groups" if group == "all" else f"On the {group} group"
                sentences.append(f"- {place}, {describe_difference(found, *pair)}.")
    cats = (
        _rows(paired_categories, pair, "success_rate") if not paired_categories.empty else paired_categories
    )
    cats = cats[cats["category"] != "all"] if not cats.empty else cats
    if not cats.empty:
        up = sorted(cats.loc[cats["significant"] & (cats["diff"] > 0), "category"])
        down = sorted(cats.loc[cats["significant"] & (cats["diff"] < 0), "category"])
        none = sorted(cats.loc[~cats["significant"].astype(bool), "category"])
        parts = [
            f"{label} on {', '.join(names)}"
            for label, names in (
                ("significantly higher", up),
                ("significantly lower", down),
                ("no significant difference", none),
            )
            if names
        ]
        sentences.append(f"- By category (success rate, `{pair[0]}` vs `{pair[1]}`): {'; '.join(parts)}.")
    return "\n".join(sentences)


def power_line(paired_groups: pd.DataFrame) -> str:
    pair = _main_pair(paired_groups)
    row = _rows(paired_groups, pair, "success_rate", group="all") if pair else paired_groups
    if row.empty:
        return "No paired comparison in this run: no power statement."
    row = row.iloc[0]
    if math.isnan(row["mde"]):
        return (
            f"Power: with {int(row['tasks'])} paired tasks, no difference between `{pair[0]}` and "
            f"`{pair[1]}` can be detected at all (n too small for any interval)."
        )
    return (
        f"Power: with {int(row['tasks'])} paired tasks, success-rate differences between "
        f"`{pair[0]}` and `{pair[1]}` "
        f"smaller than {row['mde'] * 100:.1f} points cannot be reliably detected (80% "
        f"power, two-sided α = 0.05); "
        "a 'no significant difference' below that size means nothing."
    )


def benefit_line(benefit: dict[str, float], data: RunData | None = None) -> str:
    if not benefit:
        if data is not None and {AMNESIA, FULL, NONE} <= set(data.arms):
            return "Memory benefit needs helpful-group tasks: this run has none."
        return f"Memory benefit needs `{AMNESIA}`, `{FULL}` and `{NONE}` on the same tasks: not available."
    benefits = (
        f"Helpful group ({benefit['tasks']} tasks): memory benefit (success − success of `{NONE}`) is "
        f"{benefit['full_benefit'] * 100:+.1f} pts for `{FULL}` and {benefit['arm_benefit'] * 100:+.1f} pts "
        f"for `{AMNESIA}`"
    )
    missing, share = benefit["share_missing"], benefit["share"]
    if missing == "undefined":
        return f"{benefits}; full memory has no benefit here, so no share of it is defined."
    if missing == "alike":
        alike = f"`{AMNESIA}` and `{FULL}` differ from `{NONE}` alike on every task"
        kept = f"{share * 100:.1f}% (no interval: {alike})"
    elif missing:
        kept = f"{share * 100:.1f}% ({missing} for an interval)"
    else:
        kept = fmt_ci(share, benefit["share_lo"], benefit["share_hi"])
    return f"{benefits}; `{AMNESIA}` keeps {kept} of full memory's benefit."


def iso_date(value: Any) -> str:
    """A manifest time (epoch seconds or an ISO string) as an ISO 8601 UTC date-time."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return datetime.fromtimestamp(value, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(value)


def _manifest_section(data: RunData) -> list[str]:
    first = data.runs[0].manifest
    tasks = first.get("tasks", {})
    lines = ["## Runs, model and task set", ""]
    for run in data.runs:
        m = run.manifest
        lines.append(
            f"- `{run.path.name}`: model `{run.model}`, seed {m.get('seed')}, epoch {m.get('epoch', 0)}, "
            f"created {iso_date(m.get('created_wall'))}, "
            f"package {m.get('package_version')}, commit {m.get('git_commit')}, budget "
            f"{m.get('budget_tokens')} tokens"
        )
    lines += ["", f"Model: `{json.dumps(first.get('model', {}), sort_keys=True)}`", ""]
    lines += [
        f"Task set `{tasks.get('root')}`: {tasks.get('count')} tasks, content hash "
        f"`{tasks.get('content_hash')}`."
    ]
    lines += ["", "<details><summary>Task files (sha256)</summary>", ""]
    lines += [f"- `{path}` `{sha}`" for path, sha in sorted(tasks.get("files", {}).items())]
    lines += ["", "</details>", "", "## Arms", ""]
    for arm, config in data.arm_configs.items():
        lines.append(f"- `{arm}`: `{json.dumps(config, sort_keys=True, default=str)}`")
    return lines


PROBE_COLUMNS = tuple(c for c in SUMMARY_COLUMNS if c[0] in PROBE_RATES)
PROBE_EXPOSURE_COLUMNS = tuple(c for c in EXPOSURE_COLUMNS if c[0] in PROBE_RATES)


def exposure_line(summary: pd.DataFrame) -> str:
    """The model-free level in one sentence per arm, over all groups: the share of probes whose prompt held
    an expected, a stale and a poison value (of the probes that list one)."""
    rows = [row for row in records(summary) if row["group"] == "all"]
    if not rows or "expected_exposed_rate" not in summary.columns:
        return ""

    def share(value: float) -> str:
        return "–" if value is None or math.isnan(value) else f"{value * 100:.1f}%"

    parts = [
        f"`{row['arm']}` {share(row['expected_exposed_rate'])} / {share(row['stale_exposed_rate'])} / "
        f"{share(row['poison_exposed_rate'])}"
        for row in rows
    ]
    return (
        "Exposure (model-free, over all groups): probes whose prompt held an expected / a stale / a poison "
        f"value, of the probes that list one: {'; '.join(parts)}. The lines below compare answers."
    )


def models_line(data: RunData) -> str:
    """What the answers tables measure, by the models that gave them: a scripted model's answers restate
    exposure."""
    models = sorted({run.model for run in data.runs})
    scripted = [m for m in models if m.startswith("scripted")]
    named = ", ".join(f"`{m}`" for m in models)
    if not scripted:
        return f"Answers of {named}: what the model did with what reached its prompt."
    return (
        f"Answers of {named}. A scripted model ({', '.join(f'`{m}`' for m in scripted)}) answers only with "
        "one of the probe's own values that is in its prompt, chosen by a fixed rule (docs/models.md), or "
        "abstains: its answers restate the exposure above through that rule; they are not evidence of "
        "how an agent would answer."
    )


def _age_note(by_age: pd.DataFrame) -> str:
    covered, total = by_age.attrs.get("covered", 0), by_age.attrs.get("stale_probes", 0)
    if total == covered:
        return f"The stale-error-by-age figure covers all {total} probes per arm that list stale values."
    return (
        f"The stale-error-by-age figure covers {covered} of the {total} probes per arm that list stale "
        "values (the "
        "others have no logged time at which their fact changed); each bin shows its number of probes."
    )


def render(tables: ReportTables, figures: list[str], resamples: int = DEFAULT_RESAMPLES) -> str:
    """report.md from the report's tables (every sentence about the results is generated from them)."""
    data = tables.data
    clusters = data.tasks["task_id"].nunique()
    replicates = len(data.runs)
    lines = [
        "# Amnesia benchmark report",
        "",
        *oracle_lines([run.manifest for run in data.runs]),
        *limit_note(data),
        exposure_line(tables.summary),
        "",
        headline(tables.paired_groups, tables.paired_categories),
        "",
        benefit_line(tables.benefit, data),
        "",
        power_line(tables.paired_groups),
        "",
        "## Methodology",
        "",
        f"Every arm replayed the same {clusters} tasks ({replicates} run(s): seeds, epochs or models) on a "
        "simulated clock; this report reads only the session logs and manifest(s). A probe is a success when "
        "classified `correct`; the stale-error rate is `stale` probes / probes that list stale values; the "
        "poison-error rate likewise; false forgetting is helpful-group probes answered `abstained` where a "
        "valid answer existed; the stale-injection rate (model-independent) is the share of model calls "
        "whose injected block asserts a probe's stale value after that fact was superseded, forgotten or "
        "expired (task spec timeline); context tokens are the prompt tokens of every model call, per task. "
        "Rates are ratios of per-task sums. "
        "95% CIs of rates: percentile bootstrap clustered by task (a Poisson bootstrap, "
        f"{resamples} resamples, seeded; a task's runs under several seeds, epochs or models are repeated "
        "measures of one cluster). Paired differences: p from a within-task sign-flip test (exact "
        f"enumeration when at most {EXACT_UP_TO} tasks differ, else {resamples} random flips, printed "
        f"'< 1/{resamples + 1}' when none beat the observed difference); the 95% CI is the set of "
        "differences that test does not reject (test inversion), so it excludes 0 exactly when p < 0.05; "
        "with fewer than "
        f"{MIN_TASKS_FOR_INTERVAL} tasks no interval is possible ('n too small'); when every task shows the "
        "same difference, a Clopper-Pearson bound on the share of tasks that would. A difference is called "
        f"**significant** only when p < {ALPHA:g}, the 95% CI excludes 0 **and** at least {MIN_TASKS} tasks "
        "differ; wins and losses are worded alike. MDE = (z₀.₉₇₅ + z₀.₈) / z₀.₉₇₅ × the CI's half-width. "
        "Definitions: docs/reports.md.",
        "",
        "## Exposure by arm and group: what reached the prompt (model-free)",
        "",
        "The share of probes whose prompt held one of their expected values (of probes that list one), a "
        "stale value (of probes that list stale values) and a poison value (of probes that list poison "
        "values), read before the model answers (the model's own earlier answers left out: "
        "tasks/exposure.py); and the stale-injection rate (of model calls). These depend on the arm and the "
        "task only.",
        "",
        table(tables.summary, ["arm", "group"], EXPOSURE_COLUMNS),
        "",
        "## Answers by arm and group (`all` = overall)",
        "",
        models_line(data),
        "",
        table(tables.summary, ["arm", "group"]),
        "",
        tool_use_line(data),
        "",
        "## Failure codes by arm (share of all probes)",
        "",
        "What went wrong on each probe that is not correct, from its mechanism and classification "
        "(docs/reports.md#failure-codes); a row's codes and its success add up to 100%.",
        "",
        table(tables.summary[tables.summary["group"] == "all"], ["arm"], FAILURE_COLUMNS),
        "",
    ]
    if not tables.mechanisms.empty:
        lines += [
            "## Exposure by mechanism (model-free)",
            "",
            table(tables.mechanisms, ["arm", "mechanism"], PROBE_EXPOSURE_COLUMNS),
            "",
            "## Answers by mechanism",
            "",
            table(tables.mechanisms, ["arm", "mechanism"], PROBE_COLUMNS),
            "",
        ]
    if not tables.models.empty:
        lines += ["## Results by model", "", table(tables.models, ["model", "arm", "group"]), ""]
    lines += [
        "## Results by category",
        "",
        table(
            tables.categories[tables.categories["category"] != "all"],
            ["arm", "group", "category"],
            [c for c in SUMMARY_COLUMNS if c[0] in ("success_rate", "stale_error_rate", "poison_error_rate")],
        ),
        "",
        "## Paired differences by group",
        "",
        paired_markdown(tables.paired_groups, ["group"]),
        "",
    ]
    if not tables.paired_mechanisms.empty:
        lines += ["## Paired differences by mechanism", "",
                  paired_markdown(tables.paired_mechanisms, ["mechanism"]), ""]  # fmt: skip
    lines += ["## Figures", ""]
    if figures:
        lines += [_age_note(tables.stale_by_age), ""]
    else:  # every drawn report has at least the first five figures
        lines += ["Not drawn: this report was built with `--no-figures` (tables and report.md only).", ""]
    for name, title in FIGURES:
        if name in figures:
            lines += [f"### {title}", "", f"![{title}](figures/{name}.png)", ""]
    lines += _manifest_section(data)
    lines += [
        "",
        "## Limits",
        "",
        "These numbers describe these tasks, these arm configurations and this model "
        "only; they are not a general "
        "claim about memory policies. Task sets are hand-written or generated and reward "
        "whatever their probes "
        "ask; a scripted model reads the prompt mechanically and shows what reaches it, not how a real model "
        "weighs it. CIs cover task-to-task variation within this task set, not variation across task sets.",
        "",
    ]
    return "\n".join(lines)
