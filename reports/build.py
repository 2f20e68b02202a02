"""`build_report(run_dirs) -> RUN/report/`: every table, figure and report.md from the session logs.

Everything is computed before anything is written; the folder is written beside its target and renamed into
place, so a failed report leaves no half-written folder."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from reports import evidence, figures, markdown
from reports.logread import RunData, load_runs
from reports.metrics import arm_pairs, benefit_share, paired_table, per_task, stale_by_age, summarise
from reports.staging import staged_folder
from reports.stats import DEFAULT_RESAMPLES
from reports.tooluse import with_tool_calls


@dataclass
class ReportTables:
    data: RunData
    per_task: pd.DataFrame
    summary: pd.DataFrame
    categories: pd.DataFrame
    paired_groups: pd.DataFrame
    paired_categories: pd.DataFrame
    stale_by_age: pd.DataFrame
    benefit: dict[str, Any]
    evidence: pd.DataFrame  # evidence retention (imported sets; empty otherwise)
    free_text: pd.DataFrame  # token F1 beside value matching (imported sets; empty otherwise)


def _as_list(runs: Path | str | Sequence[Path | str]) -> list[Path]:
    return [Path(runs)] if isinstance(runs, (str, Path)) else [Path(r) for r in runs]


def compute_tables(
    runs: Path | str | Sequence[Path | str], resamples: int = DEFAULT_RESAMPLES
) -> ReportTables:
    """Every table of a report (summary, categories, per task, paired, benefit, stale-by-age) from runs."""
    data = load_runs(_as_list(runs))
    table = per_task(data)
    pairs = arm_pairs(data.arms)
    return ReportTables(
        data=data,
        per_task=table,
        summary=with_tool_calls(summarise(table, ["arm", "group"], resamples), data),
        categories=summarise(table, ["arm", "group", "category"], resamples),
        paired_groups=paired_table(data, table, pairs, ["group"], resamples),
        paired_categories=paired_table(data, table, pairs, ["group", "category"], resamples),
        stale_by_age=stale_by_age(data, resamples),
        benefit=benefit_share(table, markdown.AMNESIA, markdown.FULL, markdown.NONE, "helpful", resamples),
        evidence=evidence.evidence_table(data, resamples),
        free_text=evidence.free_text_table(data, resamples),
    )


def write_figures(tables: ReportTables, folder: Path, timeline_task: str | None = None) -> list[str]:
    """Write every figure (PNG + SVG) into `folder`; returns the figure names."""
    data = tables.data
    figures.stale_error_by_arm_group(tables.summary, folder)
    figures.context_tokens_over_time(data, folder)
    figures.success_vs_tokens(tables.summary, folder)
    figures.stale_error_vs_age(tables.stale_by_age, folder)
    names = [
        "stale_error_by_arm_group",
        "context_tokens_over_time",
        "success_vs_tokens",
        "stale_error_vs_age",
    ]
    arm = markdown.AMNESIA if markdown.AMNESIA in data.arms else data.arms[-1]
    task = timeline_task or figures.choose_timeline_task(data, arm)
    if task is not None:
        figures.strength_timeline(data, arm, task, folder)
        names.append("strength_timeline")
    return names


def build_report(
    runs: Path | str | Sequence[Path | str],
    out: Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    timeline_task: str | None = None,
) -> Path:
    """Write `out` (default FIRST_RUN/report/) and return it."""
    run_dirs = _as_list(runs)
    tables = compute_tables(run_dirs, resamples)
    if timeline_task is not None and timeline_task not in tables.data.task_specs:
        from tasks.errors import ReportInputError

        raise ReportInputError(f"--timeline-task: unknown task id {timeline_task!r}")
    target = Path(out) if out is not None else run_dirs[0] / "report"
    with staged_folder(target, ".report-") as staging:
        names = write_figures(tables, staging / "figures", timeline_task)
        tables.summary.to_csv(staging / "summary.csv", index=False)
        tables.categories.to_csv(staging / "categories.csv", index=False)
        tables.per_task.to_csv(staging / "per_task.csv", index=False)
        pd.concat([tables.paired_groups, tables.paired_categories]).to_csv(
            staging / "paired.csv", index=False
        )
        tables.stale_by_age.to_csv(staging / "stale_by_age.csv", index=False)
        text = markdown.render(
            tables.data,
            tables.summary,
            tables.categories,
            tables.paired_groups,
            tables.paired_categories,
            tables.benefit,
            names,
            resamples,
        )
        if not tables.evidence.empty:
            tables.evidence.to_csv(staging / "evidence.csv", index=False)
        if not tables.free_text.empty:
            tables.free_text.to_csv(staging / "free_text.csv", index=False)
        text = _with_section(text, evidence.render_section(tables.evidence, tables.free_text))
        (staging / "report.md").write_text(text, encoding="utf-8")
    return target


def _with_section(text: str, section: list[str]) -> str:
    """`text` with `section` inserted before its "## Figures" heading (appended if there is none)."""
    if not section:
        return text
    marker = "\n## Figures\n"
    body = "\n".join(section) + "\n"
    if marker in text:
        head, tail = text.split(marker, 1)
        return f"{head}\n{body}{marker}{tail}"
    return f"{text}\n{body}"
