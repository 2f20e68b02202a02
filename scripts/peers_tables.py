"""The README's peers tables, copied from the reports in docs/results-peers/ (issue 33): never typed by hand.

    python scripts/peers_tables.py           # README.md between <!-- peers:begin --> and <!-- peers:end -->
    python scripts/peers_tables.py --check   # exit 1 when README.md is not what the reports give

Each table is the `all` rows of one table of a report.md that `amnesia-bench report` wrote (the shipped sets:
docs/results-peers/shipped/report.md; LoCoMo: docs/results-peers/locomo/report.md), cells as the report
printed them: the same statistics, CIs and wording. docs/results-peers/README.md has the runs' commands.
"""

from __future__ import annotations

import argparse
import itertools
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "docs" / "results-peers"
README = ROOT / "README.md"
BEGIN, END = "<!-- peers:begin -->", "<!-- peers:end -->"

# (caption, report, section heading, column, value): the rows of that section's first table whose `column`
# holds `value`.
TABLES = (
    (
        "**Exposure** on the shipped sets (model-free; all groups; of the probes that list such a value):",
        "shipped",
        "## Exposure by arm and group: what reached the prompt (model-free)",
        "group",
        "all",
    ),
    (
        "**Answers** on the shipped sets (`scripted` model, all groups):",
        "shipped",
        "## Answers by arm and group (`all` = overall)",
        "group",
        "all",
    ),
    (
        "**Paired against `full-memory`** on the shipped sets (all groups; the report's test and words):",
        "shipped",
        "## Paired differences by group",
        "group",
        "all",
    ),
    (
        "**LoCoMo evidence retention** (model-free; all question categories; per memory):",
        "locomo",
        "## Evidence retention",
        "mechanism",
        "all",
    ),
    (
        "**LoCoMo evidence retention per dialog id** (all question categories):",
        "locomo",
        "### Evidence retention per dialog id",
        "mechanism",
        "all",
    ),
)


def table_rows(report: Path, heading: str, column: str, value: str) -> list[str]:
    """The header, rule and the rows whose `column` is `value` of the first table under `heading`."""
    text = report.read_text(encoding="utf-8")
    if f"\n{heading}\n" not in text:
        raise SystemExit(f"{report}: no section {heading!r}")
    section = text.split(f"\n{heading}\n", 1)[1].split("\n#", 1)[0].splitlines()
    start = next(number for number, line in enumerate(section) if line.startswith("|"))
    lines = [*itertools.takewhile(lambda line: line.startswith("|"), section[start:])]
    cells = [cell.strip() for cell in lines[0].strip("|").split("|")]
    if column not in cells:
        raise SystemExit(f"{report}: the table under {heading!r} has no column {column!r}")
    where = cells.index(column)
    kept = [line for line in lines[2:] if line.strip("|").split("|")[where].strip() == value]
    return [lines[0], lines[1], *kept]


def section() -> str:
    """The README's peers tables, from the reports."""
    parts = []
    for caption, report, heading, column, value in TABLES:
        rows = table_rows(RESULTS / report / "report.md", heading, column, value)
        parts.append(caption + "\n\n" + "\n".join(rows))
    return "\n\n".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only check that README.md is up to date")
    args = parser.parse_args()
    text = README.read_text(encoding="utf-8")
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{README}: no {BEGIN} ... {END} section")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    updated = f"{head}{BEGIN}\n{section()}\n{END}{tail}"
    if args.check:
        if updated != text:
            sys.exit(
                "README.md: its peers tables are not docs/results-peers'; run python scripts/peers_tables.py"
            )
        return
    README.write_text(updated, encoding="utf-8")


if __name__ == "__main__":
    main()
