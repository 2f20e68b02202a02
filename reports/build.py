"""`build_report(run_dirs) -> RUN/report/`: every table, figure and report.md from the session logs.

Everything is computed before anything is written; the folder is written beside its target and renamed into
place, so a failed report leaves no half-written folder."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from reports import evidence, figureinputs, figurepool, judging, markdown
from reports.logread import RunData, load_runs
from reports.metrics import (
    AGE_KEYS,
    AGE_RATE,
    PROBE_RATES,
    RATES,
    age_counts,
    arm_pairs,
    benefit_share,
    bootstrap_tables,
    coarsen,
    paired_frame,
    per_task,
    per_task_mechanism,
    probe_flags,
    rate_columns,
    stale_by_age,
    summary_frame,
    with_distinct_tasks,
)
from reports.staging import staged_folder
from reports.stats import DEFAULT_RESAMPLES
from reports.tables import ReportTables
from reports.tooluse import with_tool_calls
from tasks.errors import ReportInputError


def _as_list(runs: Path | str | Sequence[Path | str]) -> list[Path]:
    return [Path(runs)] if isinstance(runs, (str, Path)) else [Path(r) for r in runs]


def compute_tables(
    runs: Path | str | Sequence[Path | str],
    resamples: int = DEFAULT_RESAMPLES,
    references: Sequence[str] = (),
) -> ReportTables:
    """Every table of a report (summary, categories, mechanisms, models, per task, paired, benefit,
    stale-by-age) from runs; the task bootstrap weights are drawn once for all of them. `references`: arms
    every other arm is also compared with, besides no-memory and full-memory (ReportInputError if absent)."""
    data = load_runs(_as_list(runs))
    _check_references(data, references)
    return tables_of(data, resamples, references)


def _check_references(data: RunData, references: Sequence[str]) -> None:
    missing = [arm for arm in references if arm not in data.arms]
    if missing:
        arms = ", ".join(data.arms)
        raise ReportInputError(f"--reference: arm {missing[0]!r} is not in the runs (arms: {arms})")


def tables_of(
    data: RunData,
    resamples: int = DEFAULT_RESAMPLES,
    references: Sequence[str] = (),
    shown: Callable[[pd.DataFrame, pd.DataFrame], None] | None = None,
) -> ReportTables:
    """`compute_tables` on runs already loaded (references checked). `shown(summary, stale_by_age)` is called
    as soon as the tables the figures show exist, before the paired tables (the longest part) are computed."""
    flags = probe_flags(data.probes)  # for every table below
    table = per_task(data, flags)
    by_mechanism = per_task_mechanism(data, flags)
    probe_rates = {name: RATES[name] for name in PROBE_RATES}
    ages = age_counts(data)
    tables = {
        "tasks": (table, ["model", "arm", "group", "category"], rate_columns(RATES)),
        "mechanisms": (by_mechanism, ["model", "arm", "mechanism"], rate_columns(probe_rates)),
    }
    if not ages.counts.empty:  # resampled with the same task weights, drawn once for all tables
        tables["ages"] = (ages.counts, AGE_KEYS, rate_columns(AGE_RATE))
    fine = bootstrap_tables(tables, resamples)
    groups = coarsen(fine["tasks"], ["arm", "group"], RATES)
    summary = with_tool_calls(with_distinct_tasks(summary_frame(groups), table), data)
    by_age = stale_by_age(data, resamples, ages=ages, fine=fine.get("ages"))
    if shown is not None:
        shown(summary, by_age)
    pairs = arm_pairs(data.arms, references)
    categories = coarsen(fine["tasks"], ["arm", "group", "category"], RATES)
    mechanisms = coarsen(fine["mechanisms"], ["arm", "mechanism"], probe_rates, all_group=False)
    several_models = table["model"].nunique() > 1
    models = coarsen(fine["tasks"], ["model", "arm", "group"], RATES) if several_models else None
    return ReportTables(
        data=data,
        per_task=table,
        summary=summary,
        categories=summary_frame(categories),
        paired_groups=paired_frame(groups, pairs, resamples=resamples),
        paired_categories=paired_frame(categories, pairs, resamples=resamples),
        stale_by_age=by_age,
        benefit=benefit_share(groups, markdown.AMNESIA, markdown.FULL, markdown.NONE, "helpful", resamples),
        evidence=evidence.evidence_table(data, resamples),
        free_text=evidence.free_text_table(data, resamples),
        mechanisms=summary_frame(mechanisms),
        models=summary_frame(models) if models is not None else pd.DataFrame(),
        paired_mechanisms=paired_frame(mechanisms, pairs, resamples=resamples),
        paired_models=paired_frame(models, pairs, resamples=resamples)
        if models is not None
        else pd.DataFrame(),
    )


FIGURES = (  # in report.md's order
    "stale_error_by_arm_group",
    "context_tokens_over_time",
    "success_vs_tokens",
    "stale_error_vs_age",
    "tradeoff",
    "strength_timeline",  # when some task of the timeline's arm wrote and forgot memories
)


def _draw_from_logs(
    pool: figurepool.FigurePool, folder: Path, data: RunData, timeline_task: str | None
) -> list[str]:
    """Submit the figures drawn from the logs alone; returns every figure name of the report."""
    arm = markdown.AMNESIA if markdown.AMNESIA in data.arms else data.arms[-1]
    task = timeline_task or figureinputs.choose_timeline_task(data, arm)
    pool.submit("context_tokens_over_time", folder, data.arms, *figureinputs.context_calls(data))
    if task is not None:
        pool.submit("strength_timeline", folder, data.arms, figureinputs.timeline_of(data, arm, task))
    return [name for name in FIGURES if name != "strength_timeline" or task is not None]


def _draw_from_tables(
    pool: figurepool.FigurePool, folder: Path, arms: list[str]
) -> Callable[[pd.DataFrame, pd.DataFrame], None]:
    """`tables_of`'s `shown`: submit the figures of the tables, the longest to draw first (each goes to the
    first worker free: the last figure drawn is a short one, so the workers finish at about the same time)."""

    def submit(summary: pd.DataFrame, by_age: pd.DataFrame) -> None:
        pool.submit("stale_error_by_arm_group", folder, arms, summary)
        pool.submit("stale_error_vs_age", folder, arms, by_age)
        pool.submit("success_vs_tokens", folder, arms, summary)
        pool.submit("tradeoff", folder, arms, summary)

    return submit


def write_figures(
    tables: ReportTables, folder: Path, timeline_task: str | None = None, workers: int = figurepool.WORKERS
) -> list[str]:
    """Write every figure (PNG + SVG) into `folder`; returns the figure names."""
    folder.mkdir(parents=True, exist_ok=True)
    with figurepool.FigurePool(workers) as pool:
        names = _draw_from_logs(pool, folder, tables.data, timeline_task)
        _draw_from_tables(pool, folder, tables.data.arms)(tables.summary, tables.stale_by_age)
        pool.wait()
    return names


def _progress(enabled: bool) -> Callable[[str], None]:
    """A function printing `report: <phase done> (<seconds since the start>s)` on stderr, or doing nothing.
    A phase is announced when it is done, so bad input gets its error line alone (tests/hardening)."""
    started = time.perf_counter()

    def say(phase: str) -> None:
        if enabled:
            print(f"report: {phase} ({time.perf_counter() - started:.1f}s)", file=sys.stderr, flush=True)

    return say


def build_report(
    runs: Path | str | Sequence[Path | str],
    out: Path | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    timeline_task: str | None = None,
    references: Sequence[str] = (),
    progress: bool = False,
    workers: int = figurepool.WORKERS,
    pool: figurepool.FigurePool | None = None,
    arms: Sequence[str] = (),
    figure_style: str = "report",
    primary: str = "rules",
    figures: bool = True,
) -> Path:
    """Write `out` (default FIRST_RUN/report/) and return it; `references` as in `compute_tables`.
    `progress`: one line per phase on stderr. `workers`: processes drawing the figures while the tables
    are computed (0: draw them here; see reports.figurepool); the files are the same either way. `pool`:
    workers already started (by the caller, before its own imports) to use instead, maybe reading the logs
    (`FigurePool(read=runs)`); closed at the end. `arms`: only these arms, in this order, in every table and
    figure (default: all, in the runs' order). `figure_style`: a key of reports.figures.STYLES (the report's
    own, or sized for a paper's column), used when the pool is made here (a given pool has its own).
    `primary`: whose verdicts the tables count, the `rules`' or a model `judge`'s (reports.judging).
    `figures=False`: the tables and report.md only, no figures folder (about half a small report's CPU time
    is matplotlib's; a CI gate reads the tables); no worker is forked unless a `pool` is given."""
    run_dirs = _as_list(runs)
    say = _progress(progress)
    with pool or figurepool.FigurePool(
        workers if figures else 0, style=figure_style
    ) as pool:  # forked now: matplotlib meanwhile
        data = pool.logs(run_dirs)
        if arms:
            data = data.with_arms(arms)
        verdicts = judging.judge_verdicts(data)
        data = judging.with_primary(data, verdicts, primary)
        _check_references(data, references)
        if timeline_task is not None and not (data.tasks["task_id"] == timeline_task).any():
            raise ReportInputError(f"--timeline-task: unknown task id {timeline_task!r}")
        say(f"read {len(data.tasks):,} session logs")
        target = Path(out) if out is not None else run_dirs[0] / "report"
        with staged_folder(target, ".report-") as staging:
            try:
                _write_report(pool, staging, data, resamples, timeline_task, references, say, figures)
                if verdicts is not None:
                    _add_judge_section(staging, verdicts, primary)
            except BaseException:
                pool.close(abort=True)  # no worker may write into the folder being removed
                raise
    say("figures drawn" if figures else "done (no figures)")
    return target


def _write_report(
    pool: figurepool.FigurePool,
    staging: Path,
    data: RunData,
    resamples: int,
    timeline_task: str | None,
    references: Sequence[str],
    say: Callable[[str], None],
    figures: bool = True,
) -> None:
    """Every file of the report into `staging`, the figures (if `figures`) drawn by `pool` beside the
    tables."""
    names: list[str] = []
    shown = None
    if figures:
        folder = staging / "figures"
        folder.mkdir()
        names = _draw_from_logs(pool, folder, data, timeline_task)  # drawn beside the tables
        shown = _draw_from_tables(pool, folder, data.arms)
    tables = tables_of(data, resamples, references, shown=shown)
    say("tables computed")
    tables.summary.to_csv(staging / "summary.csv", index=False)
    tables.categories.to_csv(staging / "categories.csv", index=False)
    tables.per_task.to_csv(staging / "per_task.csv", index=False)
    tables.paired().to_csv(staging / "paired.csv", index=False)
    if not tables.mechanisms.empty:
        tables.mechanisms.to_csv(staging / "mechanisms.csv", index=False)
    if not tables.models.empty:
        tables.models.to_csv(staging / "models.csv", index=False)
    tables.stale_by_age.to_csv(staging / "stale_by_age.csv", index=False)
    text = markdown.render(tables, names, resamples)
    if not tables.evidence.empty:
        tables.evidence.to_csv(staging / "evidence.csv", index=False)
    if not tables.free_text.empty:
        tables.free_text.to_csv(staging / "free_text.csv", index=False)
    text = _with_section(text, evidence.render_section(tables.evidence, tables.free_text))
    (staging / "report.md").write_text(text, encoding="utf-8")
    say("tables and report.md written")
    pool.wait()


def _add_judge_section(staging: Path, verdicts: pd.DataFrame, primary: str) -> None:
    """judge.csv (every judged probe: the rules' and the judge's verdicts) and the "Judge vs rules" section of
    report.md."""
    verdicts.to_csv(staging / "judge.csv", index=False)
    report = staging / "report.md"
    text = _with_section(report.read_text(encoding="utf-8"), judging.render_section(verdicts, primary))
    report.write_text(text, encoding="utf-8")


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
