"""docs/ARCHITECTURE.md shows the log schema the code writes and reads, not a hand-kept copy; the README opens
with the words seed 000 §10.1 puts in its first paragraph."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

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


def test_the_readme_peers_tables_are_the_reports_rows() -> None:
    """The README's peers tables are copied from docs/results-peers/*/report.md, never typed (issue 33)."""
    script = DOC.parents[1] / "scripts" / "peers_tables.py"
    spec = importlib.util.spec_from_file_location("peers_tables", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    readme = README.read_text(encoding="utf-8")
    between = readme.split(module.BEGIN)[1].split(module.END)[0]
    assert between.strip() == module.section(), "regenerate with: python scripts/peers_tables.py"
    assert "| langgraph-store-7d | all |" in between and "| `mcp-memory-amnesia` | 2,000 |" in between
