"""The README's results tables, copied from the reports `amnesia-bench report` wrote: never typed by hand.

    python scripts/readme_tables.py           # rewrite every section below
    python scripts/readme_tables.py --check   # exit 1 when a file is not what the reports give

Each section lies between `<!-- NAME:begin -->` and `<!-- NAME:end -->` of its file:
- `results` (README.md) and `arms` (arms/README.md): from docs/results/report.md, the shipped-set panel;
- `ttl` (README.md): from docs/results-ttl/POLICY/report.md, one report per ttl policy;
- `generated` (README.md): from docs/results-generated/report.md, the 900 generated tasks
  (scripts/regenerate_results.sh runs all of these);
- `peers` (README.md): from docs/results-peers/{shipped,locomo}/report.md (commands in
  docs/results-peers/README.md);
- `real-model` (README.md): from docs/results-real-model/report.md, every shipped task on SmolLM2-135M
  (benchmarks/real_model_all.py; command in docs/results-real-model/README.md).

A table is either a copy of a report table's rows that match a filter (cells as the report printed them), or
a pivot that puts cells of several rows of one report table side by side, one row per arm; no number is
computed here.
"""

from __future__ import annotations

import argparse
import itertools
import re
import sys
from fnmatch import fnmatchcase
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
PANEL = ROOT / "docs" / "results" / "report.md"
PEERS = ROOT / "docs" / "results-peers"
TTL = ROOT / "docs" / "results-ttl"
TTL_POLICIES = ("task", "fixed:1d", "fixed:7d", "fixed:30d", "noisy:1")
REAL_MODEL = ROOT / "docs" / "results-real-model" / "report.md"

EXPOSURE = "## Exposure by arm and group: what reached the prompt (model-free)"
ANSWERS = "## Answers by arm and group (`all` = overall)"
BY_MODEL = "## Results by model"
PAIRED = "## Paired differences by group"
PAIRED_MECHANISM = "## Paired differences by mechanism"

Where = tuple[tuple[str, tuple[str, ...]], ...]


class Copy(NamedTuple):
    """The rows of the first table under `heading` of `report` whose cells match `where`."""

    caption: str
    """The line printed above the table."""
    report: Path
    """A report.md."""
    heading: str
    """The section heading, as the report prints it."""
    where: Where
    """(column, shell patterns): a row is kept when every column's cell matches one of its patterns."""


class Column(NamedTuple):
    """One column of a pivot: the `source` cell of the row that matches `where` (and the pivot row's arm)."""

    header: str
    """The column's header in the README."""
    where: Where
    """As Copy.where; with the arm, it must pick exactly one row."""
    source: str
    """The report column whose cell is copied."""
    also: tuple[str, ...] = ()
    """Further columns of the same row, their cells appended after `; ` (the header says which)."""


class Pivot(NamedTuple):
    """One row per arm (in the report's order), one cell per Column, from the first table under `heading`."""

    caption: str
    """The line printed above the table."""
    report: Path
    """A report.md."""
    heading: str
    """The section heading, as the report prints it."""
    columns: tuple[Column, ...]
    """The columns after `arm`."""


class Across(NamedTuple):
    """One row per report (each under its label), one cell per Column, from the first table under `heading` of
    each report: the same statistic from runs that differ in one setting."""

    caption: str
    """The line printed above the table."""
    corner: str
    """The header of the label column."""
    reports: tuple[tuple[str, Path], ...]
    """(label, report.md), one table row each."""
    heading: str
    """The section heading, as the reports print it."""
    columns: tuple[Column, ...]
    """The columns after the label; each must pick exactly one row of each report."""


class Measured(NamedTuple):
    """The line that says at which commit and on how many tasks the reports' runs were made, read from each
    report's "Runs, model and task set" section (so prose never carries a stale commit)."""

    reports: tuple[Path, ...]
    """The report.md files whose runs the tables show."""


def _all(column: str) -> Where:
    return ((column, ("all",)),)


def _panel_model(model: str, group: str) -> Where:
    return (("model", (model,)), ("group", (group,)))


UNIFORM, NEWEST, TEMPORAL = "scripted/uniform", "scripted:newest", "scripted:temporal"

SECTIONS: dict[str, tuple[Path, tuple[Copy | Pivot | Across | Measured, ...]]] = {
    "results": (
        README,
        (
            Measured((PANEL,)),
            Copy(
                "**Exposure** (model-free; all groups; of the probes that list such a value):",
                PANEL,
                EXPOSURE,
                _all("group"),
            ),
            Pivot(
                "**Answers** (all groups, per scripted model; false forgetting is of helpful-group probes):",
                PANEL,
                BY_MODEL,
                (
                    *(
                        Column(f"{metric} `{label}`", _panel_model(model, "all"), metric)
                        for metric in ("success", "stale-error")
                        for label, model in (
                            ("scripted", UNIFORM),
                            ("newest", NEWEST),
                            ("temporal", TEMPORAL),
                        )
                    ),
                    Column("false-forgetting `scripted`", _panel_model(UNIFORM, "all"), "false-forgetting"),
                    Column("context tokens/task", _panel_model(UNIFORM, "all"), "context tokens/task"),
                ),
            ),
            Copy(
                "**Paired against `full-memory`** (all groups; the three models pooled as repeated measures "
                "of each task; the report's test and words):",
                PANEL,
                PAIRED,
                (
                    ("arm − reference", ("* − full-memory",)),
                    ("group", ("all",)),
                    ("metric", ("success_rate", "stale_error_rate", "false_forgetting_rate")),
                ),
            ),
            Copy(
                "**`amnesia` against `full-memory` by mechanism** (success; the three models pooled; "
                "tasks/README.md defines each mechanism):",
                PANEL,
                PAIRED_MECHANISM,
                (("arm − reference", ("amnesia − full-memory",)), ("metric", ("success_rate",))),
            ),
        ),
    ),
    "ttl": (
        README,
        (
            Measured(tuple(TTL / policy.replace(":", "-") / "report.md" for policy in TTL_POLICIES)),
            Across(
                "Success, paired against `full-memory` (difference [95% CI]; p; tasks (differ); significant "
                "by the rule), one report per policy (docs/results-ttl/):",
                "policy",
                tuple(
                    (f"`{policy}`", TTL / policy.replace(":", "-") / "report.md") for policy in TTL_POLICIES
                ),
                PAIRED,
                tuple(
                    Column(
                        f"`{arm}` {group}",
                        (
                            ("arm − reference", (f"{arm} − full-memory",)),
                            ("group", (group,)),
                            ("metric", ("success_rate",)),
                        ),
                        "difference [95% CI]",
                        ("p (sign-flip)", "tasks (differ)", "significant"),
                    )
                    for arm, group in (
                        ("amnesia", "helpful"),
                        ("amnesia", "harmful"),
                        ("amnesia", "all"),
                        ("amnesia-hard-ttl", "helpful"),
                        ("amnesia-hard-ttl", "all"),
                    )
                ),
            ),
        ),
    ),
    "generated": (
        README,
        (
            Measured((ROOT / "docs" / "results-generated" / "report.md",)),
            Pivot(
                "Answers (both scripted models pooled), from docs/results-generated/report.md:",
                ROOT / "docs" / "results-generated" / "report.md",
                ANSWERS,
                (
                    *(
                        Column(f"success {group}", (("group", (group,)),), "success")
                        for group in ("helpful", "harmful", "mixed", "all")
                    ),
                    Column("stale-error", _all("group"), "stale-error"),
                    Column("false forgetting", _all("group"), "false-forgetting"),
                ),
            ),
        ),
    ),
    "arms": (
        ROOT / "arms" / "README.md",
        (
            Measured((PANEL,)),
            Pivot(
                'Answers of `scripted` (uniform choice), from docs/results/report.md\'s "Results by model":',
                PANEL,
                BY_MODEL,
                (
                    *(
                        Column(f"success {group}", _panel_model(UNIFORM, group), "success")
                        for group in ("helpful", "harmful", "mixed", "all")
                    ),
                    Column("stale-error (all)", _panel_model(UNIFORM, "all"), "stale-error"),
                    Column("poison-error (all)", _panel_model(UNIFORM, "all"), "poison-error"),
                    Column("false forgetting (helpful)", _panel_model(UNIFORM, "all"), "false-forgetting"),
                    Column("context tokens/task (all)", _panel_model(UNIFORM, "all"), "context tokens/task"),
                ),
            ),
        ),
    ),
    "peers": (
        README,
        (
            Copy(
                "**Exposure** on the shipped sets (model-free; all groups; "
                "of the probes that list such a value):",
                PEERS / "shipped" / "report.md",
                EXPOSURE,
                _all("group"),
            ),
            Copy(
                "**Answers** on the shipped sets (`scripted` model, all groups):",
                PEERS / "shipped" / "report.md",
                ANSWERS,
                _all("group"),
            ),
            Copy(
                "**Paired against `full-memory`** on the shipped sets "
                "(all groups; the report's test and words):",
                PEERS / "shipped" / "report.md",
                PAIRED,
                _all("group"),
            ),
            Copy(
                "**LoCoMo evidence retention** (model-free; all question categories; per memory):",
                PEERS / "locomo" / "report.md",
                "## Evidence retention",
                _all("mechanism"),
            ),
            Copy(
                "**LoCoMo evidence retention per dialog id** (all question categories):",
                PEERS / "locomo" / "report.md",
                "### Evidence retention per dialog id",
                _all("mechanism"),
            ),
        ),
    ),
    "real-model": (
        README,
        (
            Measured((REAL_MODEL,)),
            Copy(
                "**Exposure** (model-free; all groups; of the probes that list such a value):",
                REAL_MODEL,
                EXPOSURE,
                _all("group"),
            ),
            Copy(
                "**Answers of `gguf:smollm2-135m`** (all groups; the rule scorer's verdicts):",
                REAL_MODEL,
                ANSWERS,
                _all("group"),
            ),
            Copy(
                "**Paired** (all groups; the report's test and words):",
                REAL_MODEL,
                PAIRED,
                (("group", ("all",)), ("metric", ("success_rate", "stale_error_rate"))),
            ),
        ),
    ),
}


def report_table(report: Path, heading: str) -> tuple[list[str], list[dict[str, str]]]:
    """The header and rule lines of the first table under `heading`, and its rows as {column: cell} (each with
    its printed line under the key '')."""
    text = report.read_text(encoding="utf-8")
    if f"\n{heading}\n" not in text:
        raise SystemExit(f"{report}: no section {heading!r}")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0].splitlines()
    start = next(number for number, line in enumerate(section) if line.startswith("|"))
    lines = [*itertools.takewhile(lambda line: line.startswith("|"), section[start:])]
    columns = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        rows.append({**dict(zip(columns, cells, strict=True)), "": line})
    return lines[:2], rows


def _matches(row: dict[str, str], where: Where, report: Path) -> bool:
    for column, patterns in where:
        if column not in row:
            raise SystemExit(f"{report}: a table has no column {column!r}")
        if not any(fnmatchcase(row[column], pattern) for pattern in patterns):
            return False
    return True


def _cell(rows: list[dict[str, str]], column: Column, where: Where, report: Path, heading: str) -> str:
    found = [row for row in rows if _matches(row, where, report)]
    if len(found) != 1:
        raise SystemExit(f"{report}: {len(found)} rows under {heading!r} match {where}")
    return "; ".join(found[0][name] for name in (column.source, *column.also))


def _markdown(corner: str, columns: tuple[Column, ...], body: list[str]) -> list[str]:
    return [
        f"| {corner} | " + " | ".join(column.header for column in columns) + " |",
        "|---|" + "---|" * len(columns),
        *body,
    ]


def _runs(report: Path) -> tuple[set[str], set[str]]:
    """The commits and the task counts of a report's runs."""
    text = report.read_text(encoding="utf-8")
    runs = text.split("\n## Runs, model and task set\n", 1)[-1].split("\n## ", 1)[0]
    commits = set(re.findall(r", commit ([0-9a-f]{7})[0-9a-f]*,", runs))
    tasks = set(re.findall(r"^Task set `[^`]*`: ([0-9,]+) tasks", runs, flags=re.MULTILINE))
    if not commits or not tasks:
        raise SystemExit(f"{report}: no run commit or task count under 'Runs, model and task set'")
    return commits, tasks


def render(table: Copy | Pivot | Across | Measured) -> str:
    """The caption and the Markdown table (or, for Measured, the line)."""
    if isinstance(table, Measured):
        commits: set[str] = set()
        tasks: set[str] = set()
        for report in table.reports:
            more_commits, more_tasks = _runs(report)
            commits |= more_commits
            tasks |= more_tasks
        return (
            f"Measured at commit {', '.join(f'`{commit}`' for commit in sorted(commits))} "
            f"on {' and '.join(sorted(tasks))} tasks (the reports' run records)."
        )
    if isinstance(table, Across):
        body = []
        for label, report in table.reports:
            rows = report_table(report, table.heading)[1]
            cells = [_cell(rows, column, column.where, report, table.heading) for column in table.columns]
            body.append(f"| {label} | " + " | ".join(cells) + " |")
        return "\n".join([table.caption, "", *_markdown(table.corner, table.columns, body)])
    head, rows = report_table(table.report, table.heading)
    if isinstance(table, Copy):
        kept = [row[""] for row in rows if _matches(row, table.where, table.report)]
        return "\n".join([table.caption, "", *head, *kept])
    body = []
    for arm in dict.fromkeys(row["arm"] for row in rows):
        cells = [
            _cell(rows, column, (*column.where, ("arm", (arm,))), table.report, table.heading)
            for column in table.columns
        ]
        body.append(f"| `{arm}` | " + " | ".join(cells) + " |")
    return "\n".join([table.caption, "", *_markdown("arm", table.columns, body)])


def section(name: str) -> str:
    """The text between section `name`'s markers, from the reports."""
    return "\n\n".join(render(table) for table in SECTIONS[name][1])


def markers(name: str) -> tuple[str, str]:
    """Section `name`'s begin and end markers."""
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def updated(name: str, text: str, path: Path) -> str:
    """`text` with section `name` replaced by what the reports give."""
    begin, end = markers(name)
    if begin not in text or end not in text:
        raise SystemExit(f"{path}: no {begin} ... {end} section")
    head, rest = text.split(begin, 1)
    tail = rest.split(end, 1)[1]
    return f"{head}{begin}\n{section(name)}\n{end}{tail}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that the files are up to date")
    args = parser.parse_args()
    stale = []
    for path in dict.fromkeys(path for path, _ in SECTIONS.values()):
        text = path.read_text(encoding="utf-8")
        new = text
        for name in (name for name, (where, _) in SECTIONS.items() if where == path):
            new = updated(name, new, path)
        if new != text:
            stale.append(path.relative_to(ROOT))
            if not args.check:
                path.write_text(new, encoding="utf-8")
    if args.check and stale:
        names = ", ".join(map(str, stale))
        sys.exit(f"{names}: tables differ from the reports; run python scripts/readme_tables.py")


if __name__ == "__main__":
    main()
