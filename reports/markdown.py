"""report.md: methodology, task set, arms, model, seeds, tables with CIs, figures and the limits."""

from __future__ import annotations

import json
import math
from typing import Any

import pandas as pd

from reports.coverage import limit_note
from reports.logread import RunData
from reports.stats import DEFAULT_RESAMPLES
from reports.tooluse import tool_use_line

AMNESIA, FULL, NONE = "amnesia", "full-memory", "no-memory"
FIGURES = (
    ("stale_error_by_arm_group", "Stale-error rate by arm and group"),
    ("context_tokens_over_time", "Cumulative context tokens over simulated time"),
    ("success_vs_tokens", "Success vs. tokens"),
    ("stale_error_vs_age", "Stale-error rate vs. time since the fact changed"),
    ("strength_timeline", "Memory-strength timeline of one task"),
)
SUMMARY_COLUMNS = (
    ("success_rate", "success", True),
    ("stale_error_rate", "stale-error", True),
    ("poison_error_rate", "poison-error", True),
    ("false_forgetting_rate", "false-forgetting", True),
    ("stale_injection_rate", "stale-injection", True),
    ("context_tokens", "context tokens/task", False),
)


def fmt_ci(value: float, lo: float, hi: float, percent: bool = True) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if percent:
        return f"{value * 100:.1f}% [{lo * 100:.1f}, {hi * 100:.1f}]"
    return f"{value:,.0f} [{lo:,.0f}, {hi:,.0f}]"


def table(frame: pd.DataFrame, keys: list[str], columns=SUMMARY_COLUMNS) -> str:
    header = [*keys, "probes", *(label for _, label, _ in columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in frame.iterrows():
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
        "MDE",
        "McNemar b/c, p",
    ]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for _, row in paired.iterrows():
        cells = [f"{row['arm']} − {row['reference']}", *(str(row[k]) for k in keys), row["metric"]]
        cells += [
            f"{row['diff'] * 100:+.1f} pts [{row['diff_lo'] * 100:+.1f}, {row['diff_hi'] * 100:+.1f}]",
            f"{row['p_value']:.3g}",
            f"{row['mde'] * 100:.1f} pts",
            f"{row['mcnemar_only_arm']}/{row['mcnemar_only_reference']}, {row['mcnemar_p']:.3g}",
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _select(paired: pd.DataFrame, metric: str, **cell: str) -> pd.DataFrame:
    if paired.empty:
        return paired
    mask = (paired["arm"] == AMNESIA) & (paired["reference"] == FULL) & (paired["metric"] == metric)
    for name, value in cell.items():
        mask &= paired[name] == value
    return paired[mask]


def headline(paired_groups: pd.DataFrame, paired_categories: pd.DataFrame) -> str:
    """One sentence: does amnesia beat full memory on the harmful group at 95%, and where does it not?"""
    row = _select(paired_groups, "success_rate", group="harmful")
    if row.empty:
        return f"No harmful-group comparison of `{AMNESIA}` with `{FULL}` is possible in this run."
    row = row.iloc[0]
    beats = row["diff_lo"] > 0
    cats = _select(paired_categories, "success_rate", group="harmful")
    losing = sorted(cats.loc[~(cats["diff_lo"] > 0), "category"])
    where = f" It does not on: {', '.join(losing)}." if losing else " It does on every harmful category."
    verdict = "beats" if beats else "does not beat"
    return (
        f"On the harmful group, `{AMNESIA}` {verdict} `{FULL}` at the 95% level on success rate "
        f"({row['diff'] * 100:+.1f} pts, 95% CI [{row['diff_lo'] * 100:+.1f}, {row['diff_hi'] * 100:+.1f}], "
        f"{int(row['tasks'])} tasks).{where}"
    )


def power_line(paired_groups: pd.DataFrame) -> str:
    row = _select(paired_groups, "success_rate", group="all")
    if row.empty:
        return "No amnesia/full-memory pair in this run: no power statement."
    row = row.iloc[0]
    return (
        f"Power: with {int(row['tasks'])} paired tasks, success-rate differences between "
        f"`{AMNESIA}` and `{FULL}` "
        f"smaller than {row['mde'] * 100:.1f} points cannot be reliably detected (80% "
        f"power, two-sided α = 0.05); "
        "a 'no difference' below that size means nothing."
    )


def benefit_line(benefit: dict[str, float]) -> str:
    if not benefit:
        return f"Memory benefit needs `{AMNESIA}`, `{FULL}` and `{NONE}` on the same tasks: not available."
    return (
        f"Helpful group: memory benefit (success − success of `{NONE}`) is "
        f"{benefit['full_benefit'] * 100:+.1f} pts "
        f"for `{FULL}` and {benefit['arm_benefit'] * 100:+.1f} pts for `{AMNESIA}`; `{AMNESIA}` keeps "
        f"{fmt_ci(benefit['share'], benefit['share_lo'], benefit['share_hi'])} of full memory's benefit."
    )


def _manifest_section(data: RunData) -> list[str]:
    first = data.runs[0].manifest
    tasks = first.get("tasks", {})
    lines = ["## Runs, model and task set", ""]
    for run in data.runs:
        m = run.manifest
        lines.append(
            f"- `{run.path.name}`: seed {m.get('seed')}, created {m.get('created_wall')}, "
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


def render(
    data: RunData,
    summary: pd.DataFrame,
    categories: pd.DataFrame,
    paired_groups: pd.DataFrame,
    paired_categories: pd.DataFrame,
    benefit: dict[str, Any],
    figures: list[str],
    resamples: int = DEFAULT_RESAMPLES,
) -> str:
    clusters = data.tasks[["run", "task_id"]].drop_duplicates()
    lines = [
        "# Amnesia benchmark report",
        "",
        *limit_note(data),
        headline(paired_groups, paired_categories),
        "",
        benefit_line(benefit),
        "",
        power_line(paired_groups),
        "",
        "## Methodology",
        "",
        f"Every arm replayed the same {len(clusters)} task runs (tasks × seeds) on a "
        f"simulated clock; this report "
        "reads only the session logs and manifest(s). A probe is a success when classified `correct`; the "
        "stale-error rate is `stale` probes / probes that list stale values; the poison-error rate likewise; "
        "false forgetting is helpful-group probes answered `abstained` where a valid answer existed; the "
        "stale-injection rate (model-independent) is the share of model calls whose injected block asserts a "
        "probe's stale value after that fact was superseded, forgotten or expired (task "
        "spec timeline); context "
        "tokens are the prompt tokens of every model call, per task. Rates are ratios of per-task sums. "
        f"95% CIs: percentile bootstrap over tasks (clusters; {resamples} resamples, "
        f"seeded); seeds pool with "
        "each (seed, task) as a cluster. Paired differences resample the same tasks for "
        "both arms; p-values come "
        "from a within-task sign-flip permutation test; McNemar is the exact test on discordant probe pairs "
        "(b = only the arm correct, c = only the reference correct). MDE = (z₀.₉₇₅ + z₀.₈) × bootstrap SE of "
        "the difference. Definitions: docs/reports.md.",
        "",
        "## Results by arm and group",
        "",
        table(summary, ["arm", "group"]),
        "",
        tool_use_line(data),
        "",
        "## Results by category",
        "",
        table(categories[categories["category"] != "all"], ["arm", "group", "category"], SUMMARY_COLUMNS[:3]),
        "",
        "## Paired differences by group",
        "",
        paired_markdown(paired_groups, ["group"]),
        "",
        "## Figures",
        "",
    ]
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
