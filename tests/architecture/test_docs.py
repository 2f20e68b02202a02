"""docs/ARCHITECTURE.md shows the log schema the code writes and reads, not a hand-kept copy; the README opens
with the words seed 000 §10.1 puts in its first paragraph."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from tasks.logschema import RECORD_TYPES, schema_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "ARCHITECTURE.md"
README = DOC.parents[1] / "README.md"


def test_architecture_doc_carries_the_generated_schema_table():
    text = DOC.read_text(encoding="utf-8")
    between = text.split("<!-- schema:begin -->")[1].split("<!-- schema:end -->")[0]
    assert between.strip() == schema_markdown().strip(), "regenerate with: python -m tasks.logschema"


def test_schema_table_lists_every_record_type_once():
    rows = [line for line in schema_markdown().splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == list(RECORD_TYPES)


def test_the_readme_first_paragraph_carries_the_seeds_search_words():
    """Seed 000 §10.1: "forget" and "forgetting" (two search tokens) and "anti-memory" in the first paragraph,
    the one right under the title."""
    first = README.read_text(encoding="utf-8").split("\n\n")[1]
    assert not first.startswith(("#", "```")), first[:80]
    for word in ("forget", "forgetting", "anti-memory"):
        assert re.search(rf"\b{word}\b", first), word


def _readme_tables():
    script = DOC.parents[1] / "scripts" / "readme_tables.py"
    spec = importlib.util.spec_from_file_location("readme_tables", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ["peers", "results", "ttl", "generated", "arms", "real-model"])
def test_the_readme_results_tables_are_the_reports_rows(name: str) -> None:
    """The README's results, ttl, generated, peers and real-model tables and arms/README.md's results table
    are copied from the reports (docs/results*/), never typed (issues 32, 33)."""
    module = _readme_tables()
    path = module.SECTIONS[name][0]
    begin, end = module.markers(name)
    between = path.read_text(encoding="utf-8").split(begin)[1].split(end)[0]
    assert between.strip() == module.section(name), "regenerate with: python scripts/readme_tables.py"


def test_the_readme_tables_hold_every_arm_of_the_panel() -> None:
    """A new arm or peer shows up in the tables without anyone listing it."""
    module = _readme_tables()
    peers, results, arms = (module.section(name) for name in ("peers", "results", "arms"))
    assert "| langgraph-store-7d | all |" in peers and "| `mcp-memory-amnesia` | 2,000 |" in peers
    for arm in ("claims-bare", "retrieval-whole-entries", "clue-folding"):
        assert f"| `{arm}` |" in results and f"| `{arm}` |" in arms
